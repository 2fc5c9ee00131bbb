// The agent's start on its data folder, in the order that keeps it safe: take the folder (one agent at
// a time), refuse a half-finished key rotation, find the key and check that it opens the data before
// anything is written, find the credentials, then open the store and read the replica. Any refusal is
// a StartError that says what to do; nothing is changed or deleted on the way.
import type { AgentConfig } from './config.js';
import {
  checkKey,
  dataKeyOf,
  isWrongKey,
  lockDir,
  privateDir,
  StartError,
  unfinishedRotation,
  writeKeyCheck,
  wrongKeyMessage,
} from './data-dir.js';
import { openDeviceState, type DeviceStateFile } from './device-state.js';
import type { Logger } from './log.js';
import { createQueue } from './queue.js';
import { createReplica } from './replica.js';
import { openStore } from './store.js';
import { openTemplateStore } from './templates.js';

export async function openData(
  config: Pick<AgentConfig, 'dataDir' | 'dataKey' | 'link' | 'eventTokens'>,
  /** The replica's logger (default: a new one at `info`). */
  replicaLog?: Logger,
) {
  const dir = config.dataDir;
  privateDir(dir);
  const release = lockDir(dir, 'starting the agent');
  try {
    const rotation = unfinishedRotation(dir);
    if (rotation) throw rotation;
    const { sealer, source } = dataKeyOf(dir, config.dataKey);
    const wrongKey = () => new StartError(wrongKeyMessage(dir, source));
    const keyCheck = checkKey(dir, sealer);
    if (keyCheck === 'wrong') throw wrongKey();
    let device: DeviceStateFile;
    try {
      device = openDeviceState(dir, sealer);
    } catch (error) {
      throw isWrongKey(error) ? wrongKey() : error;
    }
    const link = config.link ?? device.get().credentials;
    if (!link) {
      throw new StartError(
        'this device is not paired: run `pnpm agent pair --cloud <URL> --code XXXX-XXXX` with the code the ' +
          'console shows (Devices, Add a door), or set PORTICO_CLOUD_URL, INTERNAL_SECRET and DEVICE_TOKEN',
      );
    }
    const db = await openStore(dir, sealer);
    const replica = createReplica(db, openTemplateStore(dir, sealer), sealer, replicaLog);
    const queue = createQueue(db, sealer);
    try {
      await replica.load(config.eventTokens ?? device.get().eventTokens ?? []);
      // A folder from before the key-check record: its oldest queued item shows whether the key opens it.
      if (keyCheck === 'absent') await queue.oldest(1);
    } catch (error) {
      await db.close();
      throw isWrongKey(error) ? wrongKey() : error;
    }
    if (keyCheck === 'absent') writeKeyCheck(dir, sealer);
    return { link, device, db, replica, queue, release };
  } catch (error) {
    release();
    throw error;
  }
}
