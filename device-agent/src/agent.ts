// Composition root of the device agent: store, replica, queue, door, sync loop and local API.
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { FaceEngine } from '@portico/face-engine';
import { createApi } from './api.js';
import { chooseCamera, onPath, openCamera, type CameraChoice } from './camera.js';
import type { AgentConfig } from './config.js';
import { openDeviceState, type DeviceStateFile } from './device-state.js';
import { createDoor } from './door.js';
import { createGuide } from './guide.js';
import { createQueue } from './queue.js';
import { createReplica } from './replica.js';
import {
  checkKey,
  StartError,
  dataKeyOf,
  isWrongKey,
  privateDir,
  writeKeyCheck,
  wrongKeyMessage,
} from './data-dir.js';
import { createStaff } from './staff.js';
import { openStore } from './store.js';
import { createSync } from './sync.js';
import { openTemplateStore } from './templates.js';

export interface Agent {
  url: string;
  /** The camera identify-camera uses (README, "Camera"). */
  camera: CameraChoice;
  stop(): Promise<void>;
}

export async function startAgent(
  config: AgentConfig,
  options: {
    /** The engine, or its start still under way: the replica loads meanwhile (its workers are other processes). */
    face?: FaceEngine | null | Promise<FaceEngine | null>;
    now?: () => number;
    pathVar?: string | undefined;
  } = {},
): Promise<Agent> {
  const now = options.now ?? Date.now;
  const changes = new EventEmitter();
  const changed = () => changes.emit('change');
  privateDir(config.dataDir);
  const { sealer, source } = dataKeyOf(config.dataDir, config.dataKey);
  const wrongKey = () => new StartError(wrongKeyMessage(config.dataDir, source));
  const keyCheck = checkKey(config.dataDir, sealer);
  if (keyCheck === 'wrong') throw wrongKey();
  let device: DeviceStateFile;
  try {
    device = openDeviceState(config.dataDir, sealer);
  } catch (error) {
    throw isWrongKey(error) ? wrongKey() : error;
  }
  const link = config.link ?? device.get().credentials;
  if (!link) {
    throw new StartError(
      `this device is not paired: run \`pnpm agent pair --cloud <URL> --code XXXX-XXXX\` with the code the ` +
        'console shows (Devices, Add a door), or set PORTICO_CLOUD_URL, INTERNAL_SECRET and DEVICE_TOKEN',
    );
  }
  const db = await openStore(config.dataDir, sealer);
  const replica = createReplica(db, openTemplateStore(config.dataDir, sealer), sealer);
  const queue = createQueue(db, sealer);
  try {
    await replica.load(config.eventTokens ?? device.get().eventTokens ?? []);
    // A folder from before the key-check record: its oldest queued item shows whether the key opens it.
    if (keyCheck === 'absent') await queue.oldest(1);
  } catch (error) {
    await db.close();
    throw isWrongKey(error) ? wrongKey() : error;
  }
  if (keyCheck === 'absent') writeKeyCheck(config.dataDir, sealer);
  const face = (await options.face) ?? null;
  const sync = createSync({ config, link, queue, replica, device, now, onChange: changed });
  const door = createDoor({
    replica,
    queue,
    face,
    maxReplicaAgeMs: config.maxReplicaAgeMs,
    now,
    online: () => sync.state.online,
    decided: () => {
      changed();
      sync.nudge();
    },
  });

  const status = async () => ({
    online: sync.state.online,
    unauthorized: sync.state.unauthorized,
    queueLength: await queue.length(),
    lastSyncAt: sync.state.lastSyncAt ? new Date(sync.state.lastSyncAt).toISOString() : null,
    lastError: sync.state.lastError,
    uploaded: sync.state.uploaded,
    rejected: sync.state.rejected,
    events: replica.all().map((r) => ({
      token: r.token,
      eventId: r.event?.id ?? null,
      name: r.event?.name ?? null,
      guests: r.guests.size,
      templates: r.index.size,
      refreshedAt: r.refreshedAt ? new Date(r.refreshedAt).toISOString() : null,
      faceAdmission: r.refreshedAt > 0 && now() - r.refreshedAt <= config.maxReplicaAgeMs,
    })),
  });

  const camera = chooseCamera(config, onPath('fswebcam', options.pathVar ?? process.env.PATH));
  const server = createApi({
    door,
    replica,
    staff: createStaff({ ...config.staff, now }),
    guide: createGuide(face),
    status,
    unauthorized: () => sync.state.unauthorized,
    camera: openCamera(camera),
    onChange: (listener) => {
      changes.on('change', listener);
      return () => changes.off('change', listener);
    },
    access: { listenHost: config.host, extraHosts: config.allowedHosts, extraOrigins: config.allowedOrigins },
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  void sync.start();

  return {
    url: `http://${config.host}:${(server.address() as AddressInfo).port}`,
    camera,
    async stop() {
      await sync.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await face?.close();
      await db.close();
    },
  };
}
