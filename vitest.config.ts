import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{cloud,shared/*,device-agent,kiosk-app,test}/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll gives up after 1 s by default: on a loaded 2-core CI machine a fake camera has taken
    // longer than that to show its first frame (cloud/test/portal/pages.test.ts, 2026-11-27).
    expect: { poll: { timeout: 10_000 } },
    // Two cores: ONNX inference and database tests compete; keep files parallel but bounded. Three
    // files at a time (tried 2026-11-27) ran the suite in 11.7-12.5 min instead of 14.1, but two CI
    // runs out of three then failed a timing-sensitive test (the kiosk's staff lock-out, the face
    // engine's event-loop share), so two it stays.
    maxWorkers: 2,
    // Each worker imports the cloud, Prisma and ONNX once, not once per file: every file starts its
    // own service, database and engine and closes them, and leaves no global behind (fake timers,
    // environment and PATH are restored in the file). Measured 2026-11-26 on 2 cores, one run each,
    // both sharing the machine with other work: the whole run 15.9 min instead of 18.4, module import
    // 26 s instead of 455 s of worker time.
    isolate: false,
  },
});
