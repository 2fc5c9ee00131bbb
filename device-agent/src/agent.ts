// Composition root of the device agent: store, replica, queue, door, sync loop and local API.
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { FaceEngine } from '@portico/face-engine';
import { createApi } from './api.js';
import { chooseCamera, onPath, openCamera, type CameraChoice } from './camera.js';
import type { AgentConfig } from './config.js';
import { createDoor } from './door.js';
import { createGuide } from './guide.js';
import { createAgentLog, type Logger } from './log.js';
import { openData } from './open-data.js';
import { createStaff } from './staff.js';
import { createSync, sdkCloud } from './sync.js';

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
    /** The root logger (default: AGENT_LOG_LEVEL's, on standard error); each module gets a child. */
    log?: Logger;
  } = {},
): Promise<Agent> {
  const now = options.now ?? Date.now;
  const log = options.log ?? createAgentLog(config.logLevel);
  const changes = new EventEmitter();
  const changed = () => changes.emit('change');
  const { link, device, db, replica, queue, release } = await openData(
    config,
    log.child({ module: 'replica' }),
  );
  const face = (await options.face) ?? null;
  const sync = createSync({
    config,
    cloud: sdkCloud(link),
    queue,
    replica,
    device,
    now,
    log: log.child({ module: 'sync' }),
    onChange: changed,
  });
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
    log: log.child({ module: 'api' }),
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
      await replica.close();
      await db.close();
      release();
    },
  };
}
