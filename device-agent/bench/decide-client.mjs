// The kiosk's side of bench/decide.ts, in a worker thread so that the in-process cloud's work never
// delays the clock: one decision at a time at the agent's local API, a pause between two, for a fixed
// time. Posts each decision's kind, status, outcome and milliseconds.
import { parentPort, workerData } from 'node:worker_threads';

const { url, token, kinds, qrCodes, probes, challengeFrames, durationMs, paceMs } = workerData;

async function post(path, body) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const results = [];
const end = Date.now() + durationMs;
for (let i = 0; Date.now() < end; i++) {
  const kind = kinds[i % kinds.length];
  let answer;
  let ms;
  let totalMs;
  if (kind === 'qr') {
    const t0 = performance.now();
    answer = await post(`/events/${token}/qr`, { code: qrCodes[i % qrCodes.length] });
    ms = totalMs = performance.now() - t0;
  } else if (kind === 'face') {
    const t0 = performance.now();
    answer = await post(`/events/${token}/identify`, { frames: [probes[i % probes.length]] });
    ms = totalMs = performance.now() - t0;
  } else {
    // The challenge path as the kiosk runs it: a nonce, its frames streamed as taken, then identify.
    const t0 = performance.now();
    const { nonce } = await (await fetch(`${url}/challenge`)).json();
    for (const frame of challengeFrames[i % challengeFrames.length]) {
      await post(`/challenge/${nonce}/frames`, { frame });
    }
    const t1 = performance.now();
    answer = await post(`/events/${token}/identify`, { nonce });
    ms = performance.now() - t1;
    totalMs = performance.now() - t0;
  }
  results.push({
    kind,
    status: answer.status,
    outcome: answer.body.outcome ?? answer.body.code,
    ms,
    totalMs,
  });
  await new Promise((r) => setTimeout(r, paceMs));
}
parentPort.postMessage(results);
