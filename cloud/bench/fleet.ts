// Fleet benchmark (issue 24): N simulated doors in this process, over real HTTP, against the cloud run as
// separate `src/main.ts` processes (one, then two, the doors split across their ports) on a scratch
// PostgreSQL database made on BENCH_DATABASE_URL's server and dropped at the end. Every door syncs as
// the device agent does every interval: it uploads the check-ins it decided since its last sync
// (`POST /v1/sync/batch`), reads its assignment (`GET /v1/sync/device`) and pulls its event's replica
// delta (`GET /v1/sync/events/{token}/replica?since=…`, paged). Events of 50,000 confirmed guests, each
// with a person and an encrypted face template, shared by a number of doors. Printed per run: call
// latencies, errors by status, and the CPU of the database's backends and of the API processes.
// Options as `--name=value` or FLEET_NAME (see OPTIONS); `--help` lists them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { openSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createCipher, hashToken } from '../src/infra/crypto.js';
import { openDatabase } from '../src/infra/db/index.js';
import { templateContext } from '../src/modules/faces/gallery.js';
import { newDeviceToken } from '../src/modules/devices/service.js';
import { provisionTenant } from '../src/modules/tenants/provision.js';
import { createScratchPostgresDatabase } from '../test/support/database.js';
import { freePort } from '../test/support/net.js';

const OPTIONS = {
  sizes: ['50,200,500', 'fleet sizes (doors) to run, in order'],
  processes: ['1,2', 'API process counts to run, in order (each with every size)'],
  seconds: ['60', 'measured seconds per run (after one interval of warm-up)'],
  interval: ['10', 'seconds between a door’s syncs'],
  admit: ['4', 'mean seconds between two admissions at one door'],
  guests: ['50000', 'confirmed guests per event (each with a person and a face template)'],
  doorsPerEvent: ['25', 'doors sharing one event'],
  eventsPerTenant: ['5', 'events per tenant (its events share its enrolled persons)'],
  fullPulls: ['2', 'doors that make a measured full replica pull before each process count’s runs'],
  keep: ['false', 'keep the scratch database (its URL is printed) to examine it afterwards'],
  out: ['', 'JSON results file (default: a file in the temporary directory)'],
} as const;
type Option = keyof typeof OPTIONS;

function options(): Record<Option, string> {
  const args = new Map(
    process.argv.slice(2).flatMap((a) => {
      const m = /^--([A-Za-z]+)=(.*)$/.exec(a);
      return m ? [[m[1]!, m[2]!] as const] : [];
    }),
  );
  if (process.argv.includes('--help')) {
    for (const [k, [d, help]] of Object.entries(OPTIONS)) {
      console.log(`  --${k}=… (FLEET_${snake(k)}, default ${d || '—'}): ${help}`);
    }
    process.exit(0);
  }
  const unknown = [...args.keys()].filter((k) => !(k in OPTIONS));
  if (unknown.length > 0) throw new Error(`unknown option(s): ${unknown.join(', ')} (see --help)`);
  return Object.fromEntries(
    Object.entries(OPTIONS).map(([k, [d]]) => [k, args.get(k) ?? process.env[`FLEET_${snake(k)}`] ?? d]),
  ) as Record<Option, string>;
}
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();

const opt = options();
const list = (s: string) => s.split(',').map(Number);
const SIZES = list(opt.sizes);
const PROCESSES = list(opt.processes);
const MEASURE_MS = Number(opt.seconds) * 1000;
const INTERVAL_MS = Number(opt.interval) * 1000;
const ADMIT_MS = Number(opt.admit) * 1000;
const GUESTS = Number(opt.guests);
const DOORS_PER_EVENT = Number(opt.doorsPerEvent);
const EVENTS_PER_TENANT = Number(opt.eventsPerTenant);
const FULL_PULLS = Number(opt.fullPulls);
const PAGE = 2000; // the agent's page size
/** The device agent's own request timeout (device-agent/src/sync.ts): a slower answer is an error to a door. */
const REQUEST_TIMEOUT_MS = 10_000;
const INTERNAL_SECRET = `fleet-${randomBytes(16).toString('hex')}`;
const DATA_KEY = randomBytes(32);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

// ---------------------------------------------------------------------------------------------------
// Measurements.

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ms = (n: number) => (Number.isNaN(n) ? '—' : n < 10 ? n.toFixed(1) : n.toFixed(0));

class Calls {
  readonly times = new Map<string, number[]>();
  readonly errors = new Map<string, number>();
  add(kind: string, elapsed: number, status: string | null) {
    (this.times.get(kind) ?? this.times.set(kind, []).get(kind)!).push(elapsed);
    if (status !== null)
      this.errors.set(`${kind} ${status}`, (this.errors.get(`${kind} ${status}`) ?? 0) + 1);
  }
  summary(kind: string) {
    const t = [...(this.times.get(kind) ?? [])].sort((a, b) => a - b);
    return { calls: t.length, p50: pct(t, 0.5), p99: pct(t, 0.99), max: t.at(-1) ?? NaN };
  }
}

/** utime + stime (+ the reaped children's, with `children`) of a process, in seconds; null when gone. */
function cpuOf(pid: number, children = false): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14-17 of proc(5), counted from field 3 (state) here.
    const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
    return ticks / CLK_TCK;
  } catch {
    return null;
  }
}
const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};
const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
/** CPU seconds of a process and its descendants, living and reaped. */
function treeCpu(pid: number): number {
  return (cpuOf(pid, true) ?? 0) + childrenOf(pid).reduce((s, c) => s + treeCpu(c), 0);
}

/**
 * The database's side, sampled every 200 ms on a connection of its own: the CPU of every backend
 * serving the bench database (pg_stat_activity's pids, read in /proc; a backend's last reading counts
 * when it exits), the whole server's CPU (the postmaster's tree, reaped backends included: other
 * databases' work too), and which statements were running (a sampling profile of database time).
 */
async function dbWatcher(url: string, database: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const own = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const postmaster = parentOf(own);
  let first = new Map<number, number>();
  let last = new Map<number, number>();
  let statements = new Map<string, number>();
  let samples = 0;
  let measuring = false;
  let serverStart = 0;
  let stopped = false;
  const sample = async () => {
    const { rows } = await client.query<{ pid: number; state: string | null; query: string }>(
      'SELECT pid, state, query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    for (const r of rows) {
      const cpu = cpuOf(r.pid);
      if (cpu === null) continue;
      if (!first.has(r.pid)) first.set(r.pid, measuring ? 0 : cpu);
      last.set(r.pid, cpu);
    }
    if (!measuring) return;
    samples++;
    for (const r of rows) {
      if (r.state !== 'active') continue;
      // The statement's start and its WHERE clause: statements with one select list stay apart.
      const text = r.query.replace(/\s+/g, ' ').trim();
      const where = text.indexOf(' WHERE ');
      const key =
        where > 90 ? `${text.slice(0, 60)} … ${text.slice(where + 1, where + 150)}` : text.slice(0, 150);
      statements.set(key, (statements.get(key) ?? 0) + 1);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await sample().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const serverCpu = () => treeCpu(postmaster);
  return {
    /**
     * Waits (up to 3 minutes) until no statement of an earlier run still runs: requests a door gave
     * up on keep the database busy after it, and would be measured in the next run. Seconds waited.
     */
    async settle(): Promise<number> {
      const t0 = performance.now();
      while (performance.now() - t0 < 180_000) {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
          [database],
        );
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      return (performance.now() - t0) / 1000;
    },
    async start() {
      await sample();
      // Backends alive now count from their current reading; later ones from zero.
      first = new Map(last);
      statements = new Map();
      samples = 0;
      measuring = true;
      serverStart = serverCpu();
    },
    async stop() {
      await sample();
      measuring = false;
      const backends = [...last].reduce((s, [pid, cpu]) => s + cpu - (first.get(pid) ?? 0), 0);
      const top = [...statements]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([query, n]) => ({ query, meanActive: n / Math.max(1, samples) }));
      first = new Map();
      last = new Map();
      return { backendsCpuS: backends, serverCpuS: serverCpu() - serverStart, samples, top };
    },
    async close() {
      stopped = true;
      await loop;
      await client.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Seeding: tenants through the project's provisioning, the rest in SQL (persons, templates, events,
// guests, devices), so 50,000 guests an event take seconds, not 50,000 API calls.

const uuidOf = (s: string) => {
  const h = createHash('md5').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

interface FleetEvent {
  id: string;
  token: string;
  tenantId: string;
  /** Guests admitted so far (guest n is admitted by one door only, once). */
  admitted: number;
}
interface Door {
  id: string;
  token: string;
  event: FleetEvent;
}

async function seed(url: string, modelId: string, events: number, doors: number) {
  const db = await openDatabase({ databaseUrl: url, poolSize: 2 });
  const cipher = createCipher(DATA_KEY);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = performance.now();
  const fleetEvents: FleetEvent[] = [];
  try {
    const tenants = Math.ceil(events / EVENTS_PER_TENANT);
    for (let t = 0; t < tenants; t++) {
      const tenant = await provisionTenant(
        { db, cipher },
        { slug: `fleet-${t}`, name: `Fleet ${t}`, adminEmail: `fleet-${t}@example.test` },
      );
      const tenantId = tenant.tenantId;
      await client.query('UPDATE tenants SET face_model_id = $1 WHERE id = $2', [modelId, tenantId]);
      // Enrolled a day ago: a delta's "biometrics changed since" window never sees them.
      await client.query(
        `INSERT INTO persons (id, tenant_id, name, document, enrolled_at, created_at, updated_at)
         SELECT md5($1 || 'p' || g)::uuid::text, $1, 'Person ' || g, 'DOC-' || g, now() - interval '1 day',
                now() - interval '1 day', now() - interval '1 day'
           FROM generate_series(0, $2::int - 1) AS g`,
        [tenantId, GUESTS],
      );
      const vector = new Float32Array(512);
      for (let from = 0; from < GUESTS; from += 1000) {
        const values: unknown[] = [];
        const rows: string[] = [];
        for (let g = from; g < Math.min(GUESTS, from + 1000); g++) {
          const personId = uuidOf(`${tenantId}p${g}`);
          for (let i = 0; i < vector.length; i++) vector[i] = Math.random() * 2 - 1;
          const sealed = cipher.encrypt(Buffer.from(vector.buffer), templateContext(tenantId, personId));
          const n = values.push(randomUUID(), tenantId, personId, modelId, sealed);
          rows.push(`($${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}, 0.9, now() - interval '1 day')`);
        }
        await client.query(
          `INSERT INTO face_templates (id, tenant_id, person_id, model_id, embedding_enc, quality, created_at)
           VALUES ${rows.join(', ')}`,
          values,
        );
      }
      for (let e = t * EVENTS_PER_TENANT; e < Math.min(events, (t + 1) * EVENTS_PER_TENANT); e++) {
        const event = {
          id: randomUUID(),
          token: `ev_fleet_${randomBytes(12).toString('hex')}`,
          tenantId,
          admitted: 0,
        };
        await client.query(
          `INSERT INTO events (id, tenant_id, name, starts_at, ends_at, status, public_token, updated_at)
           VALUES ($1, $2, $3, now() - interval '2 hours', now() + interval '1 day', 'open', $4, now())`,
          [event.id, tenantId, `Fleet event ${e}`, event.token],
        );
        await client.query(
          `INSERT INTO guests (id, tenant_id, event_id, person_id, name, status, confirmed_at, guest_token,
                               link_token, created_at, updated_at)
           SELECT md5($1 || 'g' || g)::uuid::text, $2, $1, md5($2 || 'p' || g)::uuid::text, 'Guest ' || g,
                  'confirmed', now() - interval '1 day', 'gt_' || md5($1 || 'gt' || g), 'lk_' || md5($1 || 'lk' || g),
                  now() - interval '1 day', now() - interval '1 day'
             FROM generate_series(0, $3::int - 1) AS g`,
          [event.id, tenantId, GUESTS],
        );
        fleetEvents.push(event);
      }
    }
    const fleetDoors: Door[] = [];
    for (let d = 0; d < doors; d++) {
      // Doors fill events in turn: the first `doorsPerEvent` doors serve event 0, and so on.
      const event = fleetEvents[Math.floor(d / DOORS_PER_EVENT)]!;
      const { id, token } = newDeviceToken();
      await client.query(
        `INSERT INTO devices (id, tenant_id, name, secret_hash, created_at) VALUES ($1, $2, $3, $4, now())`,
        [id, event.tenantId, `Door ${d}`, hashToken(token)],
      );
      await client.query('INSERT INTO device_events (device_id, event_id) VALUES ($1, $2)', [id, event.id]);
      fleetDoors.push({ id, token, event });
    }
    await client.query('ANALYZE');
    return { events: fleetEvents, doors: fleetDoors, tenants, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await client.end();
    await db.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// The API processes.

interface ApiProcess {
  url: string;
  log: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startApi(databaseUrl: string, dataDir: string, logFile: string): Promise<ApiProcess> {
  const port = await freePort();
  // Its log (warnings and errors, e.g. a 500's cause) goes to a file, counted per run.
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      SEED_DEMO_TENANT: 'false',
      INTERNAL_SECRET,
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATA_ENCRYPTION_KEY: DATA_KEY.toString('base64'),
      // No face is analysed here: one idle worker, and no background model switch.
      FACE_WORKERS: '1',
      FACE_MODEL_SWITCH: 'false',
    },
    stdio: ['ignore', log, log],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ready = await fetch(`${url}/v1/health/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the API process on ${port} did not start (exit ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    log: logFile,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const logSize = (file: string) => statSync(file).size;
/** The messages of the error lines (pino level >= 50) an API process logged after `from` bytes. */
function loggedErrors(file: string, from: number): string[] {
  const text = readFileSync(file).subarray(from).toString('utf8');
  return text.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return line.trim() ? [line.slice(0, 120)] : [];
    const entry = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
    return entry.level >= 50 ? [`${entry.msg}: ${entry.err?.message ?? ''}`.slice(0, 160)] : [];
  });
}
const countBy = (xs: string[]) =>
  xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>());

// ---------------------------------------------------------------------------------------------------
// The doors.

interface Replica {
  items: { guestId: string; template: unknown }[];
  removed: string[];
  nextCursor: string | null;
  checkpoint: string;
}

async function call<T>(
  calls: Calls | null,
  kind: string,
  url: string,
  door: Door,
  body?: unknown,
): Promise<{ ok: boolean; data: T | null; bytes: number }> {
  const t0 = performance.now();
  let status: string | null = null;
  let data: T | null = null;
  let bytes = 0;
  try {
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        'x-internal-secret': INTERNAL_SECRET,
        'x-device-token': door.token,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    bytes = text.length;
    if (res.ok) data = JSON.parse(text) as T;
    else status = String(res.status);
  } catch (error) {
    status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
  }
  calls?.add(kind, performance.now() - t0, status);
  return { ok: status === null, data, bytes };
}

interface RunTotals {
  accepted: number;
  rejectedItems: number;
  deltaItems: number[];
  deltaBytes: number[];
}

/** One door's sync loop until `until`; calls started inside [from, until) are measured. */
async function runDoor(
  door: Door,
  base: string,
  checkpoint: string,
  window: { from: number; until: number },
  offsetMs: number,
  calls: Calls,
  totals: RunTotals,
) {
  await new Promise((r) => setTimeout(r, offsetMs));
  let since = checkpoint;
  let lastTick = performance.now();
  let owed = 0;
  while (performance.now() < window.until) {
    const started = performance.now();
    const measured = started >= window.from ? calls : null;
    // The admissions since the last sync, at their times (a door admits every ADMIT_MS on average).
    owed += (started - lastTick) / ADMIT_MS;
    const items = [];
    for (; owed >= 1; owed--) {
      const n = door.event.admitted++;
      const at = lastTick + Math.random() * (started - lastTick);
      items.push({
        clientId: randomUUID(),
        eventId: door.event.id,
        guestId: uuidOf(`${door.event.id}g${n % GUESTS}`),
        personId: uuidOf(`${door.event.tenantId}p${n % GUESTS}`),
        method: 'facial',
        outcome: 'success',
        reason: null,
        recordedAt: new Date(performance.timeOrigin + at).toISOString(),
        decidedOffline: false,
        score: 0.8,
        livenessScore: 0.9,
      });
    }
    lastTick = started;
    if (items.length > 0) {
      const res = await call<{ results: { status: string }[] }>(
        measured,
        'batch',
        `${base}/v1/sync/batch`,
        door,
        { items, queueLength: 0 },
      );
      for (const r of res.data?.results ?? []) {
        if (r.status === 'accepted') totals.accepted++;
        else if (r.status === 'rejected') totals.rejectedItems++;
      }
    }
    await call(measured, 'device', `${base}/v1/sync/device`, door);
    let cursor: string | null = null;
    let pageItems = 0;
    let pageBytes = 0;
    do {
      const query: string = cursor ? `cursor=${cursor}` : `since=${since}`;
      const res: Awaited<ReturnType<typeof call<Replica>>> = await call<Replica>(
        measured,
        'delta',
        `${base}/v1/sync/events/${door.event.token}/replica?limit=${PAGE}&${query}`,
        door,
      );
      if (!res.data) break;
      pageItems += res.data.items.length + res.data.removed.length;
      pageBytes += res.bytes;
      cursor = res.data.nextCursor;
      if (!cursor) since = res.data.checkpoint;
    } while (cursor);
    if (measured) {
      totals.deltaItems.push(pageItems);
      totals.deltaBytes.push(pageBytes);
    }
    const wait = INTERVAL_MS - (performance.now() - started);
    // The agent waits an interval after a sync ends; this door keeps its cadence unless a sync overran it.
    await new Promise((r) => setTimeout(r, Math.max(INTERVAL_MS / 10, wait)));
  }
}

/** A door's first, full replica pull of its event (as a new agent does), page by page. */
async function fullPull(door: Door, base: string) {
  const pages: number[] = [];
  let bytes = 0;
  let items = 0;
  let cursor: string | null = null;
  let errors = 0;
  const t0 = performance.now();
  do {
    const t = performance.now();
    const res: Awaited<ReturnType<typeof call<Replica>>> = await call<Replica>(
      null,
      'full',
      `${base}/v1/sync/events/${door.event.token}/replica?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`,
      door,
    );
    pages.push(performance.now() - t);
    if (!res.data) {
      errors++;
      break;
    }
    bytes += res.bytes;
    items += res.data.items.filter((i) => i.template !== null).length;
    cursor = res.data.nextCursor;
  } while (cursor);
  pages.sort((a, b) => a - b);
  return {
    seconds: (performance.now() - t0) / 1000,
    pages: pages.length,
    pageP50: pct(pages, 0.5),
    pageMax: pages.at(-1)!,
    withTemplates: items,
    megabytes: bytes / 1e6,
    errors,
  };
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  const server = process.env.BENCH_DATABASE_URL;
  if (!server) {
    console.log(
      'fleet benchmark skipped: it runs on PostgreSQL only; set BENCH_DATABASE_URL=postgresql://user@host:5432/postgres ' +
        '(a server where it may create and drop a scratch database)',
    );
    return;
  }
  const maxDoors = Math.max(...SIZES);
  const events = Math.ceil(maxDoors / DOORS_PER_EVENT);
  const scratch = await createScratchPostgresDatabase(server);
  const database = new URL(scratch.url).pathname.slice(1);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'portico-bench-fleet-'));
  const modelId = loadConfig({ DATA_DIR: dataDir }).faceModel;
  const apis: ApiProcess[] = [];
  const results: Record<string, unknown>[] = [];
  const out =
    opt.out || path.join(os.tmpdir(), `portico-fleet-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const began = performance.now();
  console.log(
    `fleet benchmark: PostgreSQL (scratch database ${database}), ${os.cpus().length} cores (${os.cpus()[0]?.model}), ` +
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; sizes ${SIZES.join(', ')} doors; ` +
      `${PROCESSES.join(' and ')} API process(es); ${DOORS_PER_EVENT} doors an event, ${GUESTS} guests an event; ` +
      `sync every ${INTERVAL_MS / 1000} s, an admission every ${ADMIT_MS / 1000} s a door; ${MEASURE_MS / 1000} s measured a run`,
  );
  const watcher = await dbWatcher(scratch.url, database);
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const api of apis) await api.stop();
      await watcher.close();
      if (opt.keep === 'true') console.log(`scratch database kept: ${scratch.url}`);
      else await scratch.drop();
      await rm(dataDir, { recursive: true, force: true });
    })());
  // Interrupted: the API processes stopped and the scratch database dropped all the same.
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    const fleet = await seed(scratch.url, modelId, events, maxDoors);
    console.log(
      `(set-up: ${fleet.tenants} tenants, ${events} events of ${GUESTS} guests (${events * GUESTS} guest rows, ` +
        `${fleet.tenants * GUESTS} persons with templates), ${maxDoors} devices in ${fleet.seconds.toFixed(1)} s)`,
    );
    const header =
      'procs  doors  events | delta calls  p50 ms  p99 ms | batch calls  p50 ms  p99 ms | device p50/p99 ms | ' +
      'errors | DB CPU s/s (server) | API CPU s/s | bench CPU s/s | load';
    for (const processes of PROCESSES) {
      while (apis.length < processes) {
        apis.push(await startApi(scratch.url, dataDir, `${out}.api-${apis.length + 1}.log`));
      }
      const running = apis.slice(0, processes);
      const settled = await watcher.settle();
      if (settled > 1)
        console.log(`(waited ${settled.toFixed(0)} s for the database to finish an earlier run's work)`);
      const fulls = [];
      for (let i = 0; i < Math.min(FULL_PULLS, fleet.events.length); i++) {
        // Doors of different events, on different processes when there are two.
        const door = fleet.doors[i * DOORS_PER_EVENT]!;
        fulls.push(await fullPull(door, running[i % processes]!.url));
      }
      for (const f of fulls) {
        console.log(
          `full replica pull (${processes} process(es), alone): ${f.seconds.toFixed(1)} s, ${f.pages} pages of ${PAGE} ` +
            `(p50 ${ms(f.pageP50)} ms, max ${ms(f.pageMax)} ms), ${f.withTemplates} guests with templates, ` +
            `${f.megabytes.toFixed(0)} MB of JSON, ${f.errors} errors`,
        );
      }
      console.log(header);
      for (const size of SIZES) {
        const doors = fleet.doors.slice(0, size);
        const usedEvents = [...new Set(doors.map((d) => d.event))];
        // Every door starts as if it had synced just now: from its event's latest change.
        const checkpoints = new Map<string, string>();
        const client = new pg.Client({ connectionString: scratch.url });
        await client.connect();
        for (const e of usedEvents) {
          const { rows } = await client.query<{ max: string }>(
            'SELECT MAX(change_seq)::text AS max FROM guests WHERE event_id = $1',
            [e.id],
          );
          checkpoints.set(e.id, `${rows[0]!.max}.${Date.now()}`);
        }
        await client.end();
        const waited = await watcher.settle();
        if (waited > 1)
          console.log(`(waited ${waited.toFixed(0)} s for the database to finish an earlier run's work)`);
        const calls = new Calls();
        const totals: RunTotals = { accepted: 0, rejectedItems: 0, deltaItems: [], deltaBytes: [] };
        const now = performance.now();
        const window = { from: now + INTERVAL_MS, until: now + INTERVAL_MS + MEASURE_MS };
        const doorsDone = doors.map((door, i) =>
          runDoor(
            door,
            running[i % processes]!.url,
            checkpoints.get(door.event.id)!,
            window,
            // Spread over the first interval, so the doors do not all fire in the same millisecond.
            Math.random() * INTERVAL_MS,
            calls,
            totals,
          ),
        );
        await new Promise((r) => setTimeout(r, window.from - performance.now()));
        const benchCpu0 = process.cpuUsage();
        const api0 = running.map((a) => treeCpu(a.child.pid!));
        const logs0 = running.map((a) => logSize(a.log));
        await watcher.start();
        const t0 = performance.now();
        await new Promise((r) => setTimeout(r, window.until - performance.now()));
        const db = await watcher.stop();
        const apiErrors = running.map((a, i) => loggedErrors(a.log, logs0[i]!)).flat();
        const wall = (performance.now() - t0) / 1000;
        const apiCpu = running.reduce((s, a, i) => s + treeCpu(a.child.pid!) - api0[i]!, 0) / wall;
        const benchUsage = process.cpuUsage(benchCpu0);
        const benchCpu = (benchUsage.user + benchUsage.system) / 1e6 / wall;
        const load = os.loadavg()[0]!;
        await Promise.all(doorsDone);
        const delta = calls.summary('delta');
        const batch = calls.summary('batch');
        const device = calls.summary('device');
        const errors = Object.fromEntries(calls.errors);
        const errorCount = [...calls.errors.values()].reduce((a, b) => a + b, 0);
        const meanItems =
          totals.deltaItems.reduce((a, b) => a + b, 0) / Math.max(1, totals.deltaItems.length);
        const meanKb =
          totals.deltaBytes.reduce((a, b) => a + b, 0) / Math.max(1, totals.deltaBytes.length) / 1e3;
        console.log(
          `${String(processes).padStart(5)}  ${String(size).padStart(5)}  ${String(usedEvents.length).padStart(6)} | ` +
            `${String(delta.calls).padStart(11)}  ${ms(delta.p50).padStart(6)}  ${ms(delta.p99).padStart(6)} | ` +
            `${String(batch.calls).padStart(11)}  ${ms(batch.p50).padStart(6)}  ${ms(batch.p99).padStart(6)} | ` +
            `${`${ms(device.p50)}/${ms(device.p99)}`.padStart(17)} | ` +
            `${(errorCount === 0
              ? '0'
              : Object.entries(errors)
                  .map(([k, n]) => `${k}: ${n}`)
                  .join(', ')
            ).padStart(6)} | ` +
            `${`${(db.backendsCpuS / wall).toFixed(2)} (${(db.serverCpuS / wall).toFixed(2)})`.padStart(19)} | ` +
            `${apiCpu.toFixed(2).padStart(11)} | ${benchCpu.toFixed(2).padStart(13)} | ${load.toFixed(1)}`,
        );
        console.log(
          `    ${totals.accepted} check-ins accepted, ${totals.rejectedItems} items rejected; a delta brought ` +
            `${meanItems.toFixed(1)} guests, ${meanKb.toFixed(0)} kB on average; delta max ${ms(delta.max)} ms, batch max ${ms(batch.max)} ms`,
        );
        for (const [message, n] of countBy(apiErrors)) console.log(`    API log: ${n} x ${message}`);
        for (const s of db.top.slice(0, 4)) {
          console.log(`    ${s.meanActive.toFixed(2).padStart(5)} backends running: ${s.query}`);
        }
        results.push({
          processes,
          doors: size,
          events: usedEvents.length,
          measuredSeconds: wall,
          delta,
          batch,
          device,
          errors,
          apiLoggedErrors: Object.fromEntries(countBy(apiErrors)),
          acceptedCheckIns: totals.accepted,
          rejectedItems: totals.rejectedItems,
          deltaMeanGuests: meanItems,
          deltaMeanKb: meanKb,
          dbBackendsCpuPerS: db.backendsCpuS / wall,
          dbServerCpuPerS: db.serverCpuS / wall,
          dbActiveStatements: db.top,
          dbSamples: db.samples,
          apiCpuPerS: apiCpu,
          benchCpuPerS: benchCpu,
          loadAverage1m: load,
          fullPulls: fulls,
        });
        await writeFile(
          out,
          JSON.stringify(
            {
              date: new Date().toISOString(),
              machine: { cores: os.cpus().length, model: os.cpus()[0]?.model },
              options: opt,
              results,
            },
            null,
            2,
          ),
        );
      }
    }
    console.log(
      `results: ${out}; the whole fleet run took ${((performance.now() - began) / 1000).toFixed(0)} s`,
    );
  } finally {
    await cleanup();
  }
}

await main();
