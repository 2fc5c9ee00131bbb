// Load generator for the identify benchmark, run in a worker thread so the client's own work does not
// share the server's event loop. Plain JavaScript: worker threads load it without a TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';

const { url, slug, apiKey, probes, nonces, addresses, concurrency, eventId } = workerData;
const results = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < addresses.length) {
      const i = next++;
      const probe = probes[i % probes.length];
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/public/checkin/${slug}/identify`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': addresses[i],
          authorization: `Bearer ${apiKey}`,
        },
        body: JSON.stringify({ frame: probe.frame, nonce: nonces[i], eventId }),
      });
      const body = await res.json();
      results.push({
        ms: performance.now() - t0,
        status: res.status,
        ok: res.status === 200 && body.person?.displayName === probe.name,
      });
    }
  }),
);
parentPort.postMessage({ results, seconds: (performance.now() - started) / 1000 });
