// What the agent keeps about itself between starts, sealed in one small file of its data folder
// (`device.sealed`): the credentials a pairing gave it and the last successful exchange with the
// cloud. Written whole to a temporary file and renamed, so a crash leaves the old or the new state.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writePrivateFile } from './data-dir.js';
import type { Sealer } from './sealed.js';

const FILE = 'device.sealed';
const CONTEXT = 'agent-device-state';

export interface DeviceCredentials {
  cloudUrl: string;
  internalSecret: string;
  deviceToken: string;
  deviceId: string;
  name: string;
}

export interface DeviceState {
  /** From `pnpm agent pair` (absent when the environment gives them). */
  credentials?: DeviceCredentials;
  /** The last exchange with the cloud that succeeded (ms since epoch). */
  lastSyncAt?: number;
  /** The events the cloud assigned to this device when it last answered (paired devices). */
  eventTokens?: string[];
}

/** Writes the whole state (sealed under `sealer`), whatever the file held. */
export function writeDeviceState(dir: string, sealer: Sealer, state: DeviceState): void {
  writePrivateFile(path.join(dir, FILE), sealer.sealBytes(Buffer.from(JSON.stringify(state)), CONTEXT));
}

export function openDeviceState(dir: string, sealer: Sealer) {
  const file = path.join(dir, FILE);
  let state: DeviceState = existsSync(file)
    ? (JSON.parse(sealer.openBytes(readFileSync(file), CONTEXT).toString('utf8')) as DeviceState)
    : {};
  return {
    get: (): Readonly<DeviceState> => state,
    /** Merges `change` into the state and writes it. */
    update(change: Partial<DeviceState>) {
      state = { ...state, ...change };
      writeDeviceState(dir, sealer, state);
    },
  };
}

export type DeviceStateFile = ReturnType<typeof openDeviceState>;
