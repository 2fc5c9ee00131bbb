// The machine's processes as Linux's /proc shows them, for figures tests and tools print: each one's
// parent, command line and CPU time so far (user + system).
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface ProcessCpu {
  pid: string;
  ppid: string;
  /** The command line, its arguments separated by spaces; empty for a kernel thread. */
  cmd: string;
  /** User + system CPU time so far, in seconds. */
  cpuSeconds: number;
}

/** Linux's USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */
const TICKS_PER_SECOND = 100;

export const HAS_PROC = existsSync('/proc/self/stat');

/** One process, or undefined once it has exited. */
function readProcess(pid: string): ProcessCpu | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (name) ": state, ppid, ... utime and stime are the 14th and 15th fields.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: f[1]!, cmd, cpuSeconds: (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/** Every process running now (none where there is no /proc). */
export function readProcesses(): ProcessCpu[] {
  if (!HAS_PROC) return [];
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => readProcess(pid) ?? []);
}
