import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{cloud,shared/*,device-agent,kiosk-app,test}/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Three files at a time on two cores: many files spend much of their time waiting (a browser, a
    // child process, timers, sockets). Measured 2026-11-27 on 2 vCPU, the run alone, all passing:
    // 2 workers 14.1 min (the processes' CPU 68 % of the two cores), 3 workers 11.7 min.
    maxWorkers: 3,
    // Each worker imports the cloud, Prisma and ONNX once, not once per file: every file starts its
    // own service, database and engine and closes them, and leaves no global behind (fake timers,
    // environment and PATH are restored in the file). Measured 2026-11-26 on 2 cores, one run each,
    // both sharing the machine with other work: the whole run 15.9 min instead of 18.4, module import
    // 26 s instead of 455 s of worker time.
    isolate: false,
  },
});
