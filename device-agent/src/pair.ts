// `pnpm agent pair --cloud URL --code XXXX-XXXX`: exchanges the code the console shows for this
// device's credentials (POST /v1/devices/pair) and keeps them sealed in the data folder, with the
// events the console assigned. The agent then starts with no cloud settings at all. Pairing again
// replaces the credentials; queued check-ins stay and upload under the new ones. It takes the folder
// like the agent (a running agent would write its own copy of the state over the new credentials).
import { createPortico } from '@portico/sdk';
import { checkKey, dataKeyOf, lockDir, privateDir, StartError, wrongKeyMessage } from './data-dir.js';
import { openDeviceState } from './device-state.js';
import { sdkCloud, servedTokens } from './sync.js';

export async function pair(args: {
  cloud: string;
  code: string;
  dataDir: string;
  dataKey?: Buffer | undefined;
}) {
  const cloudUrl = args.cloud.replace(/\/$/, '');
  privateDir(args.dataDir);
  const release = lockDir(args.dataDir, 'pairing');
  try {
    return await exchange(args.dataDir, cloudUrl, args.code, args.dataKey);
  } finally {
    release();
  }
}

async function exchange(dir: string, cloudUrl: string, code: string, dataKey: Buffer | undefined) {
  const { sealer, source } = dataKeyOf(dir, dataKey);
  if (checkKey(dir, sealer) === 'wrong') throw new StartError(wrongKeyMessage(dir, source));

  const portico = createPortico({ baseUrl: cloudUrl, retry: { maxRetries: 0, timeoutMs: 10_000 } });
  let paired;
  try {
    paired = await portico.api.POST('/v1/devices/pair', { body: { code } });
  } catch (error) {
    throw new StartError(`cannot reach the cloud at ${cloudUrl}: ${(error as Error).message}`);
  }
  if (!paired.data) {
    const problem = paired.error as { code?: string; detail?: string } | undefined;
    throw new StartError(
      problem?.code === 'invalid_pairing_code'
        ? 'the cloud does not accept this code: it is wrong, used or expired (10 minutes). Make a new one in the console (Devices, Add a door)'
        : `the cloud answered ${paired.response.status} ${problem?.code ?? ''}: ${problem?.detail ?? ''}`,
    );
  }
  const { device, deviceToken, internalSecret } = paired.data;
  const credentials = { cloudUrl, internalSecret, deviceToken, deviceId: device.id, name: device.name };
  // The assignment now, so the first start serves it even with the cloud away (else: at the first sync).
  const assigned = (await sdkCloud(credentials).device()).data ?? { device, events: [] };
  openDeviceState(dir, sealer).update({ credentials, eventTokens: servedTokens(assigned) });
  return { device: device.name, deviceId: device.id, cloudUrl, events: assigned.events.map((e) => e.name) };
}
