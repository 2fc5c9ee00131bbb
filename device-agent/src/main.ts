// `pnpm agent`: the device agent from the environment (README, "Edge").
import { createFaceEngine } from '@portico/face-engine';
import { startAgent } from './agent.js';
import { loadAgentConfig } from './config.js';

const config = loadAgentConfig();
// The face workers start (loading their models) while the agent loads its replica.
const face = config.face
  ? createFaceEngine({
      workers: config.faceWorkers,
      isolation: config.faceWorkers === 1 ? 'thread' : 'process',
    })
  : null;
const agent = await startAgent(config, { face });
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
