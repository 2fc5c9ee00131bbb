// The agent's local decision time with the cloud up and syncing, against the cloud down (issue 24's
// target: p50 ≤ 100 ms up and syncing). The real cloud in this process (PGlite in memory), the real
// agent as a child process (`src/main.ts`, its face engine on), one event with a few thousand confirmed
// guests with face templates (a handful enrolled from real photos of ../shared/faces, the rest seeded in
// SQL with random templates, as the cloud's benches seed), and a kiosk in a worker thread that asks
// for one decision at a time: QR codes and faces (one frame, `requireLiveness` false), then QR codes
// and the challenge path (`requireLiveness` true: a nonce, three frames streamed, identify). While the
// cloud is up the agent syncs every 3 s (its default) and the cloud changes under it: guests renamed
// and templates re-enrolled every second, and the agent's own decisions uploaded. Printed per phase:
// the decision's p50/p99/max at the kiosk, outcomes, and the agent's event-loop delay (measured inside
// the agent). Options: BENCH_GUESTS (3000), BENCH_SECONDS per phase (40), BENCH_PACE_MS between two
// decisions (250), BENCH_CPU_PROF=<dir> (the agent runs with --cpu-prof, written when it stops).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { integratorOf } from '../../cloud/test/persons/support.js';
import { HAS_LABELLED, HAS_MODELS, LABELLED_DIR, sharedFaceEngine } from '@portico/test-support/faces';
import { templateContext } from '../../cloud/src/modules/faces/gallery.js';
import {
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  replicaCaughtUp,
  startCloud,
  until,
} from '../../test/support/edge.js';

const GUESTS = Number(process.env.BENCH_GUESTS ?? 3000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 250);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const CHURN_EVERY_MS = 1000;
const CHURN_GUESTS = 3;
const CHURN_TEMPLATES = 3;
const AGENT_DIR = path.resolve(import.meta.dirname, '..');

if (!HAS_MODELS || !HAS_LABELLED) {
  console.log(
    `[decide bench] skipped: ${!HAS_MODELS ? 'the face models are not installed' : `no photos at ${LABELLED_DIR}`}`,
  );
  process.exit(0);
}

const photosOf = async (dir: string) => {
  const files = (await readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
  return Promise.all(files.map((f) => readFile(path.join(dir, f))));
};
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

console.log(
  `[decide bench] ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average ${load()}; ` +
    `${GUESTS} seeded guests, ${SECONDS} s a phase, a decision every ${PACE_MS} ms after the previous answer`,
);

// The cloud, with a face engine for the real enrollments only (closed before the measures).
const shared = await sharedFaceEngine(1);
const cloud = await startCloud({}, shared.face);
const org = await integratorOf(cloud.app);
const setLiveness = async (requireLiveness: boolean) => {
  const res = await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
    headers: org.headers,
    body: { requireLiveness },
  });
  if (res.status !== 200) throw new Error(`settings: ${res.text}`);
};
await setLiveness(false);
const event = await openEvent(cloud.app, org.headers, { name: 'Decide bench' });

// Real people: enrolled from their first photo, probed with the others.
const bbt = path.join(LABELLED_DIR, 'bbt');
const people = (await readdir(bbt, { withFileTypes: true }))
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const probes: string[] = [];
const challengeFrames: string[][] = [];
for (const name of people) {
  const photos = await photosOf(path.join(bbt, name));
  if (photos.length < 3) continue;
  const person = await cloud.app.request('POST', '/v1/persons', {
    headers: org.keyHeaders,
    body: { name, document: `DOC-${name}` },
  });
  const enrolled = await cloud.app.request('POST', '/v1/public/onboarding/enroll', {
    headers: org.keyHeaders,
    body: { personId: person.body.id, frame: photos[0]!.toString('base64') },
  });
  if (enrolled.status !== 200) throw new Error(`enroll ${name}: ${enrolled.text}`);
  await confirmedGuest(cloud.app, org.headers, event.id, { name, personId: person.body.id });
  const rest = photos.slice(1).map((p) => p.toString('base64'));
  probes.push(...rest);
  challengeFrames.push([rest[0]!, rest[1]!, rest[0]!]);
}
await shared.engine.close();

// The rest of the gallery in SQL: persons with random templates sealed as the cloud seals them.
const prisma = cloud.app.deps.db.prisma;
const cipher = cloud.app.deps.cipher;
const { modelId } = (await prisma.faceTemplate.findFirstOrThrow({ select: { modelId: true } })) as {
  modelId: string;
};
const sealedVector = (personId: string) => {
  const v = new Float32Array(512);
  for (let i = 0; i < v.length; i++) v[i] = Math.random() * 2 - 1;
  return cipher.encrypt(Buffer.from(v.buffer), templateContext(org.tenantId, personId));
};
const seeded: { personId: string; guestId: string; linkToken: string }[] = [];
const dayAgo = new Date(Date.now() - 86_400_000);
for (let from = 0; from < GUESTS; from += 500) {
  const batch = Array.from({ length: Math.min(500, GUESTS - from) }, (_, i) => ({
    personId: randomUUID(),
    guestId: randomUUID(),
    linkToken: `lk_bench_${from + i}_${randomBytes(8).toString('hex')}`,
    n: from + i,
  }));
  await prisma.person.createMany({
    data: batch.map((b) => ({
      id: b.personId,
      tenantId: org.tenantId,
      name: `Person ${b.n}`,
      document: `DOC-${b.n}`,
      enrolledAt: dayAgo,
      createdAt: dayAgo,
    })),
  });
  await prisma.faceTemplate.createMany({
    data: batch.map((b) => ({
      id: randomUUID(),
      tenantId: org.tenantId,
      personId: b.personId,
      modelId,
      embeddingEnc: sealedVector(b.personId),
      quality: 0.9,
      createdAt: dayAgo,
    })),
  });
  await prisma.guest.createMany({
    data: batch.map((b) => ({
      id: b.guestId,
      tenantId: org.tenantId,
      eventId: event.id,
      personId: b.personId,
      name: `Guest ${b.n}`,
      status: 'confirmed',
      confirmedAt: dayAgo,
      guestToken: `gt_bench_${b.n}_${randomBytes(8).toString('hex')}`,
      linkToken: b.linkToken,
      createdAt: dayAgo,
    })),
  });
  seeded.push(...batch);
}
const templates = seeded.length + challengeFrames.length;

// The agent, as `pnpm agent` runs it, with its event loop watched from inside.
const env = {
  ...(await agentEnv(cloud.url, await deviceToken(cloud.app, org.headers, 'Bench door'), [
    event.publicToken,
  ])),
  AGENT_FACE: 'on',
  SYNC_INTERVAL_MS: '3000',
  MAX_BACKOFF_MS: '3000',
};
const args = [
  ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []),
  '--import',
  path.join(import.meta.dirname, 'loop-delay.mjs'),
  '--import',
  'tsx',
  'src/main.ts',
];
const child: ChildProcess = spawn(process.execPath, args, {
  cwd: AGENT_DIR,
  env: { ...process.env, ...env },
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
let stderr = '';
child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    if (out.length < 100_000) out += d.toString();
    const m = /"url":"([^"]+)"/.exec(out);
    if (m) resolve(m[1]!);
  });
  child.once('exit', (code) => reject(new Error(`agent exited ${code}: ${stderr}`)));
});
const agent = { url };
const status = async () => (await (await fetch(`${url}/status`)).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- read as printed
const loopDelay = () =>
  new Promise<{ p50: number; p99: number; max: number; mean: number }>((resolve) => {
    child.once('message', (m) => resolve(m as never));
    child.send('loop-delay');
  });
const startedAt = performance.now();
await until(async () => (await status()).events[0]?.templates === templates, 300_000, 'the replica');
console.log(
  `[decide bench] agent ${url}: replica of ${templates} guests with templates (${challengeFrames.length} ` +
    `enrolled from photos) in ${((performance.now() - startedAt) / 1000).toFixed(1)} s; load average ${load()}`,
);

/** The cloud changing under the agent: guests renamed through the API, templates re-enrolled. */
function churn() {
  let renamed = 0;
  let reenrolled = 0;
  let stopped = false;
  const loop = (async () => {
    for (let round = 0; !stopped; round++) {
      const t0 = Date.now();
      for (let i = 0; i < CHURN_GUESTS; i++) {
        const g = seeded[(round * CHURN_GUESTS + i) % seeded.length]!;
        const res = await cloud.app.request('PATCH', `/v1/events/${event.id}/guests/${g.guestId}`, {
          headers: org.headers,
          body: { name: `Guest ${round}-${i}` },
        });
        if (res.status === 200) renamed++;
      }
      for (let i = 0; i < CHURN_TEMPLATES; i++) {
        const g = seeded[(round * CHURN_TEMPLATES + i + seeded.length / 2) % seeded.length]!;
        await prisma.faceTemplate.update({
          where: { personId_modelId: { personId: g.personId, modelId } },
          data: { embeddingEnc: sealedVector(g.personId), createdAt: new Date() },
        });
        reenrolled++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, CHURN_EVERY_MS - (Date.now() - t0))));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { renamed, reenrolled };
  };
}

interface Result {
  kind: string;
  status: number;
  outcome: string;
  ms: number;
  totalMs: number;
}

async function phase(name: string, kinds: string[], cloudUp: boolean, seconds = SECONDS) {
  const before = await status();
  const stopChurn = cloudUp ? churn() : null;
  await loopDelay(); // starts the agent's histogram afresh
  const loadBefore = load();
  const results = await new Promise<Result[]>((resolve, reject) => {
    const worker = new Worker(new URL('./decide-client.mjs', import.meta.url), {
      workerData: {
        url,
        token: event.publicToken,
        kinds,
        qrCodes: seeded.map((g) => g.linkToken),
        probes,
        challengeFrames,
        durationMs: seconds * 1000,
        paceMs: PACE_MS,
      },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const loop = await loopDelay();
  const churned = await stopChurn?.();
  const after = await status();
  console.log(
    `\n[decide bench] ${name}: load average ${loadBefore} -> ${load()}; agent online ${after.online}, ` +
      `uploaded ${after.uploaded - before.uploaded}, queue ${after.queueLength}` +
      (churned
        ? `; cloud changes: ${churned.renamed} guests renamed, ${churned.reenrolled} templates re-enrolled`
        : ''),
  );
  for (const kind of new Set(kinds)) {
    const of = results.filter((r) => r.kind === kind);
    const decision = of.map((r) => r.ms);
    const outcomes: Record<string, number> = {};
    for (const r of of)
      outcomes[`${r.status} ${r.outcome}`] = (outcomes[`${r.status} ${r.outcome}`] ?? 0) + 1;
    console.log(
      `  ${kind.padEnd(9)} ${String(of.length).padStart(4)} decisions: p50 ${ms(quantile(decision, 0.5))} ms, ` +
        `p99 ${ms(quantile(decision, 0.99))} ms, max ${ms(Math.max(...decision))} ms` +
        (kind === 'challenge'
          ? ` (with the nonce and three frames streamed: p50 ${ms(
              quantile(
                of.map((r) => r.totalMs),
                0.5,
              ),
            )} ms)`
          : '') +
        `; ${JSON.stringify(outcomes)}`,
    );
  }
  console.log(
    `  agent event loop delay: p50 ${loop.p50} ms, p99 ${loop.p99} ms, max ${loop.max} ms, mean ${loop.mean} ms`,
  );
}

try {
  // The first probes warm the face engine's sessions up; not measured.
  await phase('warm-up, not measured', ['qr', 'face', 'challenge'], true, 10);
  await phase('cloud up and syncing, requireLiveness false', ['qr', 'face'], true);
  await cloud.down();
  await until(async () => (await status()).online === false, 30_000, 'the agent offline');
  await phase('cloud down, requireLiveness false', ['qr', 'face'], false);
  await cloud.up();
  await setLiveness(true);
  await until(async () => (await status()).online === true, 30_000, 'the agent online');
  await replicaCaughtUp(agent, 30_000);
  await phase('cloud up and syncing, requireLiveness true (challenge path)', ['qr', 'challenge'], true);
  await cloud.down();
  await until(async () => (await status()).online === false, 30_000, 'the agent offline');
  await phase('cloud down, requireLiveness true (challenge path)', ['qr', 'challenge'], false);
} finally {
  await new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  if (CPU_PROF) console.log(`[decide bench] the agent's CPU profile is in ${CPU_PROF}`);
  await cloud.close();
}
