// Where a command's CPU goes, by kind of process: runs the command and, every half second until it
// ends, reads the user + system time of every process on the machine from /proc (Linux only), then
// prints the CPU seconds each kind used meanwhile (Chromium, face workers, the test workers, the
// service processes the tests start, PostgreSQL, ...). Processes that started before the command count
// only what they used after it started; a process that ends between two readings loses its last half
// second. The whole machine is read: run it alone.
//
//   npx tsx test/support/cpu-by-kind.ts pnpm vitest run
import { spawn } from 'node:child_process';
import { HAS_PROC, readProcesses } from '@portico/test-support/processes';

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

const kindOf = (cmd: string): string =>
  !cmd ? 'kernel threads' : (KINDS.find(([, test]) => test.test(cmd))?.[0] ?? `other: ${cmd.slice(0, 40)}`);

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: npx tsx test/support/cpu-by-kind.ts <command> [args...]');
  process.exit(2);
}

if (!HAS_PROC) {
  console.error('cpu-by-kind reads /proc: Linux only');
  process.exit(2);
}

/** By pid: its kind and its CPU seconds at the last reading. */
const seen = new Map<string, { kind: string; cpuSeconds: number }>();
const used = new Map<string, number>();
function read(first: boolean): void {
  for (const p of readProcesses()) {
    const known = seen.get(p.pid);
    if (known) {
      used.set(known.kind, (used.get(known.kind) ?? 0) + p.cpuSeconds - known.cpuSeconds);
      known.cpuSeconds = p.cpuSeconds;
      continue;
    }
    const kind = kindOf(p.cmd);
    seen.set(p.pid, { kind, cpuSeconds: p.cpuSeconds });
    // Started since the last reading: all its time is the command's.
    if (!first) used.set(kind, (used.get(kind) ?? 0) + p.cpuSeconds);
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
  const rows = [...used].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, s]) => sum + s, 0);
  console.log(`\nCPU by kind of process, ${wall.toFixed(0)} s wall, ${total.toFixed(0)} s CPU in all:`);
  for (const [kind, s] of rows.slice(0, 15)) {
    console.log(`${s.toFixed(1).padStart(9)} s  ${((100 * s) / total).toFixed(1).padStart(5)} %  ${kind}`);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
