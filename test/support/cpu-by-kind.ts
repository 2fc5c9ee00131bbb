// Where a command's CPU goes, by kind of process: runs the command and, every half second until it
// ends, reads the user + system time of every process on the machine from /proc (Linux only), then
// prints the CPU seconds each kind used meanwhile (Chromium, face workers, the test workers, the
// service processes the tests start, PostgreSQL, ...). Processes that started before the command count
// only what they used after it started; a process that ends between two readings loses its last half
// second. The whole machine is read: run it alone.
//
//   npx tsx test/support/cpu-by-kind.ts pnpm vitest run
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */
const TICKS_PER_SECOND = 100;

const KINDS: Array<[kind: string, test: RegExp]> = [
  ['chromium', /chrom/],
  ['face workers', /worker-entry/],
  ['ffmpeg', /ffmpeg/],
  ['Xvfb', /Xvfb/],
  ['postgres', /postgres/],
  ['mosquitto', /mosquitto/],
  ['vitest workers', /vitest\/dist\/workers|vitest\/dist\/chunks/],
  ['vitest', /vitest/],
  ['service and agent processes (tsx)', /--import tsx|tsx\/dist/],
  ['other node', /node/],
];

function kindOf(pid: string): string {
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return 'gone';
  }
  if (!cmd) return 'kernel threads';
  return KINDS.find(([, test]) => test.test(cmd))?.[0] ?? `other: ${cmd.slice(0, 40)}`;
}

function ticksOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return undefined;
  }
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: npx tsx test/support/cpu-by-kind.ts <command> [args...]');
  process.exit(2);
}

const seen = new Map<string, { kind: string; ticks: number }>();
const used = new Map<string, number>();
function read(first: boolean): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const ticks = ticksOf(pid);
    if (ticks === undefined) continue;
    const known = seen.get(pid);
    if (known) {
      used.set(known.kind, (used.get(known.kind) ?? 0) + ticks - known.ticks);
      known.ticks = ticks;
      continue;
    }
    const kind = kindOf(pid);
    seen.set(pid, { kind, ticks });
    // Started since the last reading: all its time is the command's.
    if (!first) used.set(kind, (used.get(kind) ?? 0) + ticks);
  }
}

read(true);
const started = performance.now();
const timer = setInterval(() => read(false), 500);
const child = spawn(command, args, { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  clearInterval(timer);
  read(false);
  const wall = (performance.now() - started) / 1000;
  const rows = [...used].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, t]) => sum + t, 0) / TICKS_PER_SECOND;
  console.log(`\nCPU by kind of process, ${wall.toFixed(0)} s wall, ${total.toFixed(0)} s CPU in all:`);
  for (const [kind, t] of rows.slice(0, 15)) {
    const s = t / TICKS_PER_SECOND;
    console.log(`${s.toFixed(1).padStart(9)} s  ${((100 * s) / total).toFixed(1).padStart(5)} %  ${kind}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
