// A background worker: runs `runOnce` when woken by a signal and every `pollMs` (for retries that fall
// due and for rows other processes left behind), one run at a time, and stops cleanly.
import type { Logger } from './logger.js';

export interface WorkerLoop {
  stop(): Promise<void>;
}

export function startWorkerLoop(options: {
  name: string;
  pollMs: number;
  /** Returns true when there may be more work right away. */
  runOnce: () => Promise<boolean>;
  subscribe: (wake: () => void) => () => void;
  logger: Logger;
}): WorkerLoop {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(wake, ms);
  };
  function wake(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      let more = true;
      while (more && !stopped) {
        again = false;
        try {
          more = (await options.runOnce()) || again;
        } catch (err) {
          options.logger.error({ err, worker: options.name }, 'worker run failed');
          more = false;
        }
      }
    })().finally(() => {
      running = undefined;
      schedule(options.pollMs);
    });
  }
  const unsubscribe = options.subscribe(wake);
  wake();
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await running;
    },
  };
}
