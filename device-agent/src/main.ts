// `pnpm agent`: the device agent from the environment (README, "Edge").
import { createFaceEngine } from '@portico/face-engine';
import { startAgent } from './agent.js';
import { loadAgentConfig } from './config.js';
import { DataKeyError } from './data-dir.js';

// Everything the agent writes is its user's alone (the folder is 0700 too: data-dir.ts).
process.umask(0o077);
const config = loadAgentConfig();
// The face workers start (loading their models) while the agent loads its replica.
const face = config.face
  ? createFaceEngine({
      workers: config.faceWorkers,
      isolation: config.faceWorkers === 1 ? 'thread' : 'process',
    })
  : null;
const agent = await startAgent(config, { face }).catch(async (error: unknown) => {
  await (await face)?.close();
  if (!(error instanceof DataKeyError)) throw error;
  console.error(JSON.stringify({ level: 'error', msg: error.message }));
  // EX_CONFIG: the agent cannot run with what it was given; nothing on disk was touched.
  process.exit(78);
});
console.log(
  JSON.stringify({
    msg: 'device agent listening',
    url: agent.url,
    events: config.eventTokens,
    camera: agent.camera,
  }),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void agent.stop().then(() => process.exit(0));
  });
}
