// `pnpm agent pair --cloud URL --code XXXX-XXXX`: exchanges the code the console shows for this
// device's credentials (POST /v1/devices/pair) and keeps them sealed in the data folder, with the
// events the console assigned. The agent then starts with no cloud settings at all. Pairing again
// replaces the credentials; queued check-ins stay and upload under the new ones.
import { createPortico } from '@portico/sdk';
import { checkKey, dataKeyOf, privateDir, StartError, wrongKeyMessage } from './data-dir.js';
import { openDeviceState } from './device-state.js';

export async function pair(args: {
  cloud: string;
  code: string;
  dataDir: string;
  dataKey?: Buffer | undefined;
}) {
  const cloudUrl = args.cloud.replace(/\/$/, '');
  privateDir(args.dataDir);
  const { sealer, source } = dataKeyOf(args.dataDir, args.dataKey);
  if (checkKey(args.dataDir, sealer) === 'wrong') throw new StartError(wrongKeyMessage(args.dataDir, source));

  const portico = createPortico({ baseUrl: cloudUrl, retry: { maxRetries: 0, timeoutMs: 10_000 } });
  let paired;
  try {
    paired = await portico.api.POST('/v1/devices/pair', { body: { code: args.code } });
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
  const state = openDeviceState(args.dataDir, sealer);
  const credentials = { cloudUrl, internalSecret, deviceToken, deviceId: device.id, name: device.name };
  const assigned = await createPortico({
    baseUrl: cloudUrl,
    device: { internalSecret, token: deviceToken },
    retry: { maxRetries: 0, timeoutMs: 10_000 },
  }).api.GET('/v1/sync/device');
  const events = assigned.data?.events ?? [];
  state.update({ credentials, eventTokens: events.map((e) => e.token) });
  return { device: device.name, deviceId: device.id, cloudUrl, events: events.map((e) => e.name) };
}
