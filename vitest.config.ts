import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{cloud,shared/*,device-agent,kiosk-app,test}/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: ONNX inference and database tests compete; keep files parallel but bounded.
    maxWorkers: 2,
  },
});
