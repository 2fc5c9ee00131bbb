// `pnpm agent [command]`: the device agent and its commands (README, "Start" and "Recovery").
//   (none)   run the agent from the environment and the data folder
//   pair     --cloud URL --code XXXX-XXXX: exchange the console's code for this device's credentials
//   doctor   say what state the data folder is in (changes nothing; may run while the agent does)
//   rotate-key  re-seal the data folder under a new key (the agent stopped)
import { parseArgs } from 'node:util';
import { createFaceEngine } from '@portico/face-engine';
import { startAgent } from './agent.js';
import { loadAgentConfig } from './config.js';
import { StartError } from './data-dir.js';
import { doctor } from './doctor.js';
import { createAgentLog, type Logger } from './log.js';
import { pair } from './pair.js';
import { rotateKey } from './rotate-key.js';

// Everything the agent writes is its user's alone (the folder is 0700 too: data-dir.ts).
process.umask(0o077);
const [command = 'run', ...args] = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));

/** A refusal is said in one log line at error level, exit 78 (EX_CONFIG): nothing on disk was touched. */
const refuse =
  (log: Logger) =>
  (error: unknown): never => {
    if (!(error instanceof StartError)) throw error;
    log.error(error.message);
    process.exit(78);
  };

async function run() {
  const config = loadAgentConfig();
  const log = createAgentLog(config.logLevel);
  // The face workers start (loading their models) while the agent loads its replica.
  const face = config.face
    ? createFaceEngine({
        workers: config.faceWorkers,
        isolation: config.faceWorkers === 1 ? 'thread' : 'process',
      })
    : null;
  const agent = await startAgent(config, { face, log }).catch(async (error: unknown) => {
    await (await face)?.close();
    return refuse(log)(error);
  });
  // The start line stays on standard output, apart from the log: supervisors and the tests read the
  // local API's URL from it (test/support/edge.ts).
  console.log(
    JSON.stringify({
      msg: 'device agent listening',
      url: agent.url,
      events: config.eventTokens ?? 'assigned in the console',
      camera: agent.camera,
    }),
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void agent.stop().then(() => process.exit(0));
    });
  }
}

if (command === 'run') await run();
else if (command === 'pair') {
  const { values } = parseArgs({
    args,
    options: { cloud: { type: 'string' }, code: { type: 'string' } },
  });
  if (!values.cloud || !values.code) {
    console.error('usage: pnpm agent pair --cloud <cloud URL> --code XXXX-XXXX');
    process.exit(64);
  }
  const config = loadAgentConfig();
  const paired = await pair({ cloud: values.cloud, code: values.code, ...config }).catch(
    refuse(createAgentLog(config.logLevel)),
  );
  console.log(
    `Paired as "${paired.device}" with ${paired.cloudUrl}. Events: ` +
      `${paired.events.length ? paired.events.join(', ') : 'none yet (assign them in the console)'}. ` +
      'Start the agent with `pnpm agent`.',
  );
} else if (command === 'rotate-key') {
  const config = loadAgentConfig();
  const rotated = await rotateKey(config).catch(refuse(createAgentLog(config.logLevel)));
  console.log(
    `Re-sealed ${rotated.records} record(s) under a new key. ` +
      (rotated.newKey
        ? `Set AGENT_DATA_KEY=${rotated.newKey} from now on (the old key no longer opens the data).`
        : 'The new key is in data.key in the data folder.'),
  );
} else if (command === 'doctor') {
  const report = doctor(loadAgentConfig());
  const width = Math.max(...report.findings.map((f) => f.what.length));
  for (const f of report.findings) console.log(`${f.ok ? 'ok ' : 'NO '} ${f.what.padEnd(width)}  ${f.said}`);
  process.exit(report.ok ? 0 : 1);
} else {
  console.error(
    `unknown command "${command}": pnpm agent [pair --cloud URL --code XXXX-XXXX | doctor | rotate-key]`,
  );
  process.exit(64);
}
