// Benchmark: check-in by face end to end over HTTP (liveness on, nonces fetched beforehand), with 1k and
// 100k enrolled templates (synthetic embeddings plus real enrolled photos), at concurrency 1, 4 and 16;
// and the time from a committed check-in to the first webhook attempt received; beside each round, the
// face engine alone on the same probes and workers, and the service's share of it. Prints figures.
// Needs ../shared/faces for the real probe photos. Runs on the embedded PGlite; with
// BENCH_DATABASE_URL=postgresql://… it runs on a scratch database created (and dropped) on that server.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FACE_LINE_DEFAULTS } from '@portico/checkin-policy';
import { EMBEDDING_DIMENSIONS } from '@portico/face-engine';
import { benchEnvironment, signedInTenant } from './bench-environment.js';
import type { FaceService } from '../src/infra/face.js';
import { createLogger } from '../src/infra/logger.js';
import { createRuntime } from '../src/runtime.js';
import { startServer } from '../src/server.js';
import { seedEnrolled } from '../test/support/seed-gallery.js';
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';

const FACES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/faces');
const ENROLLED = ['amy', 'bernadette', 'howard', 'leonard', 'penny', 'raj', 'sheldon', 'stuart'];
const GALLERIES = (process.env.BENCH_GALLERIES ?? '1000,100000').split(',').map(Number);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const REQUESTS = 64;
/** BENCH_LIVENESS=off measures identify without the nonce and the passive liveness model. */
const LIVENESS = process.env.BENCH_LIVENESS !== 'off';
/**
 * BENCH_EVENT=on: a door's check-in, at an open event whose confirmed guests are the real enrolled persons
 * (the search runs among them, the event's rules under its lock, the guest marked in); off: no event.
 */
const AT_EVENT = process.env.BENCH_EVENT === 'on';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (n: number) => n.toFixed(1);
/** CPU time of every process on the machine so far (all cores), ms. */
const machineCpuMs = () =>
  os.cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);

function randomUnit(): Float32Array {
  const v = new Float32Array(EMBEDDING_DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    // Sum of uniforms: roughly Gaussian, enough for directions spread over the sphere.
    const g = Math.random() + Math.random() + Math.random() - 1.5;
    v[i] = g;
    norm += g * g;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

interface LoadResult {
  ms: number;
  status: number;
  ok: boolean;
}

function runLoad(data: object): Promise<{ results: LoadResult[]; seconds: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.mjs', import.meta.url), { workerData: data });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

/** Seconds for REQUESTS probes straight to the face service, `concurrency` at a time. */
async function engineAlone(face: FaceService, probes: { frame: string }[], concurrency: number) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < REQUESTS; i = next++)
        await face.probe(probes[i % probes.length]!.frame, { liveness: LIVENESS });
    }),
  );
  return (performance.now() - started) / 1000;
}

async function main() {
  if (!existsSync(FACES)) {
    console.log(`identify benchmark skipped: ${FACES} (real probe photos) is absent`);
    return;
  }
  const bench = await benchEnvironment('identify', {
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
  });
  const { config } = bench;
  let runtime = await createRuntime(config, { logger: createLogger('warn') });
  await runtime.deps.face.started();
  let server = await startServer(runtime);
  const receiver = await startWebhookReceiver();
  console.log(
    `identify benchmark: ${bench.database}, ${runtime.deps.face.status().workers} face workers, ${os.cpus().length} cores, liveness ${LIVENESS ? 'on' : 'off'}, ${AT_EVENT ? 'at an event' : 'no event'}`,
  );

  try {
    for (const size of GALLERIES) {
      const { tenant, auth: admin } = await signedInTenant(runtime.deps, server.url, String(size));
      // A kiosk's server calls identify with the tenant's API key (anonymous callers are refused by
      // default, tenant setting identifyCallers), with a fresh nonce as a public kiosk would.
      const application = await fetch(`${server.url}/v1/applications`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'kiosk server' }),
      });
      const apiKey = ((await application.json()) as { apiKey: { key: string } }).apiKey.key;
      await fetch(`${server.url}/v1/tenants/${tenant.tenantId}/settings`, {
        method: 'PATCH',
        headers: { ...admin, 'content-type': 'application/json' },
        // One line at the refuse line's default: every probe here is a genuine one, and the timing of
        // an admission (recorded, webhook) is what is measured, not a step-up.
        body: JSON.stringify({
          webhookUrl: receiver.url,
          livenessThreshold: 0,
          requireLiveness: LIVENESS,
          matchThreshold: FACE_LINE_DEFAULTS.stepUpThreshold,
          stepUpThreshold: FACE_LINE_DEFAULTS.stepUpThreshold,
        }),
      });
      const call = async (method: string, route: string, body: unknown, expected: number) => {
        const res = await fetch(`${server.url}${route}`, {
          method,
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status !== expected) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
        return (await res.json()) as { id: string; person: { id: string } };
      };
      // Real persons, enrolled through the API from their first photo.
      const personIds: string[] = [];
      for (const name of ENROLLED) {
        const frame = (await readFile(path.join(FACES, 'bbt', name, `${name}1.png`))).toString('base64');
        personIds.push(
          (await call('POST', '/v1/onboarding', { name, document: `D-${name}`, frame }, 201)).person.id,
        );
      }
      let eventId: string | undefined;
      if (AT_EVENT) {
        eventId = (
          await call('POST', '/v1/events', { name: 'Bench door', startsAt: new Date().toISOString() }, 201)
        ).id;
        await call('PATCH', `/v1/events/${eventId}/status`, { status: 'open' }, 200);
        for (const [i, personId] of personIds.entries()) {
          await call(
            'POST',
            `/v1/events/${eventId}/guests`,
            { name: ENROLLED[i], personId, status: 'confirmed' },
            201,
          );
        }
      }
      // The synthetic rest of the gallery, written straight to the tables, enrolled an hour before the
      // check-ins (as at a real event): rows this fresh would be re-read by every search's delta read
      // for the gallery's clock-skew window, which no real check-in sees.
      const t0 = performance.now();
      await seedEnrolled(runtime.deps, {
        tenantId: tenant.tenantId,
        modelId: runtime.deps.face.modelId,
        count: size - ENROLLED.length,
        enrolledAt: new Date(Date.now() - 3_600_000),
        embedding: randomUnit,
      });
      console.log(
        `\n${size.toLocaleString('en')} enrolled templates (synthetic rows written in ${fmt((performance.now() - t0) / 1000)} s)`,
      );

      const probes = await Promise.all(
        ENROLLED.map(async (name) => ({
          name,
          frame: (await readFile(path.join(FACES, 'bbt', name, `${name}3.png`))).toString('base64'),
        })),
      );
      // Each simulated kiosk has its own address (X-Forwarded-For from loopback is trusted), so the
      // per-client limit of 120 calls a minute does not throttle the benchmark.
      let kiosk = 0;
      const kioskAddress = () => `10.${size % 250}.${Math.floor(kiosk / 250) % 250}.${kiosk++ % 250}`;
      const challenge = async () => {
        const res = await fetch(`${server.url}/v1/public/checkin/${tenant.slug}/liveness/challenge`, {
          headers: { 'x-forwarded-for': kioskAddress() },
        });
        if (res.status !== 200) throw new Error(`challenge: ${res.status} ${await res.text()}`);
        return ((await res.json()) as { nonce: string }).nonce;
      };
      const identify = async (i: number, nonce: string | undefined) => {
        const probe = probes[i % probes.length]!;
        const started = performance.now();
        const res = await fetch(`${server.url}/v1/public/checkin/${tenant.slug}/identify`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-forwarded-for': kioskAddress(),
            authorization: `Bearer ${apiKey}`,
          },
          body: JSON.stringify({ frame: probe.frame, nonce, eventId }),
        });
        // Admitted (person) or sent to a second factor (candidate): the same search and decision.
        const body = (await res.json()) as {
          outcome: string;
          person?: { displayName: string } | null;
          candidate?: { displayName: string };
          checkInId?: string;
        };
        if (res.status !== 200) throw new Error(`identify: ${res.status} ${JSON.stringify(body)}`);
        return {
          ms: performance.now() - started,
          ok: (body.person ?? body.candidate)?.displayName === probe.name,
          body,
          at: Date.now(),
        };
      };
      // The first identify loads the gallery into memory (decrypting every template), as after a
      // restart: the gallery loaded by the enrollments above would not see rows written behind its back
      // an hour in the past.
      // (Without a snapshot either: the gallery of the enrollments may have written one, blind to these rows.)
      runtime.deps.gallery.invalidate(tenant.tenantId);
      await runtime.deps.db.prisma
        .$executeRaw`DELETE FROM face_gallery_snapshots WHERE tenant_id = ${tenant.tenantId}`;
      const warm = performance.now();
      await identify(0, LIVENESS ? await challenge() : undefined);
      const held = runtime.deps.gallery.size(tenant.tenantId, runtime.deps.face.modelId);
      if (held !== size) throw new Error(`the gallery holds ${held} templates, not ${size}`);
      console.log(
        `  first identify (loads the ${held.toLocaleString('en')} templates): ${fmt(performance.now() - warm)} ms`,
      );
      // A restart: the snapshot written, the service stopped and started on the same data; the time
      // from the start to readiness (the snapshots loaded), then the first identify.
      await runtime.deps.gallery.flush();
      await server.stop(1000);
      const restarted = performance.now();
      runtime = await createRuntime(config, { logger: createLogger('warn') });
      await runtime.deps.face.started();
      server = await startServer(runtime);
      while ((await fetch(`${server.url}/v1/health/ready`)).status !== 200)
        await new Promise((r) => setTimeout(r, 10));
      const readyMs = performance.now() - restarted;
      const firstAfterRestart = performance.now();
      const again = await identify(0, LIVENESS ? await challenge() : undefined);
      if (!again.ok) throw new Error('the first identify after the restart did not recognise the person');
      console.log(
        `  first identify after restart: ${fmt(performance.now() - firstAfterRestart)} ms ` +
          `(start to ready, snapshots loaded: ${fmt(readyMs)} ms)`,
      );

      // Steady state: one unprinted round at concurrency 4 first, so that the JIT compilation of the
      // hot paths (on V8's background threads) is not counted in the first measured round.
      for (const [index, concurrency] of [4, ...CONCURRENCY].entries()) {
        const warmUp = index === 0;
        const nonces = LIVENESS
          ? await Promise.all(Array.from({ length: REQUESTS }, challenge))
          : Array.from({ length: REQUESTS }, () => undefined);
        const addresses = Array.from({ length: REQUESTS }, kioskAddress);
        const cpuBefore = machineCpuMs();
        const loopBefore = performance.eventLoopUtilization();
        const { results, seconds } = await runLoad({
          url: server.url,
          slug: tenant.slug,
          apiKey,
          probes,
          nonces,
          addresses,
          concurrency,
          eventId,
        });
        const failed = results.filter((r) => r.status !== 200);
        if (failed.length > 0)
          throw new Error(`${failed.length} identify calls failed, e.g. HTTP ${failed[0]!.status}`);
        if (warmUp) continue;
        const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
        console.log(
          `  concurrency ${String(concurrency).padStart(2)}: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms, ` +
            `${fmt(REQUESTS / seconds)} identifications/s, ${results.filter((r) => r.ok).length}/${REQUESTS} recognised correctly`,
        );
        // Where the time goes: CPU of the whole machine (face worker processes, this process with the
        // server, broker, receiver and load generator, PostgreSQL if used) and the wall time the
        // server's event loop (HTTP, database, search) was busy, per identification.
        const cpu = machineCpuMs() - cpuBefore;
        const loop = performance.eventLoopUtilization(loopBefore);
        console.log(
          `                  CPU per identification ${fmt(cpu / REQUESTS)} ms (machine), ` +
            `server event loop busy ${fmt(loop.active / REQUESTS)} ms`,
        );
        // The face engine alone, the same probes through the same workers at the same concurrency
        // (embedding, and the passive liveness model when on): what the service could at most deliver.
        const engineSeconds = await engineAlone(runtime.deps.face, probes, concurrency);
        console.log(
          `                  face engine alone ${fmt(REQUESTS / engineSeconds)} probes/s; ` +
            `service / engine ${(engineSeconds / seconds).toFixed(2)}`,
        );
      }

      // Check-in committed (response received) -> first webhook attempt received.
      const delays: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await identify(i, LIVENESS ? await challenge() : undefined);
        const hook = await receiver.waitForBody((b) => b.data.checkInId === r.body.checkInId);
        const got = receiver.received.find((h) => JSON.parse(h.rawBody).id === hook.id)!;
        delays.push(got.receivedAt - r.at);
      }
      delays.sort((a, b) => a - b);
      console.log(
        `  webhook after check-in response: p50 ${fmt(percentile(delays, 50))} ms, max ${fmt(delays.at(-1)!)} ms`,
      );
    }
  } finally {
    await receiver.close();
    await server.stop(1000);
    await bench.cleanup();
  }
}

await main();
