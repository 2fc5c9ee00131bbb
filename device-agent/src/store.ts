// The agent's RxDB database on disk. In Node only the localstorage storage over node-localstorage
// survives restarts among RxDB's free storages (ENVIRONMENT.md, "Edge and kiosk"); every document is
// its own file. The replica and the queue are the only owners of their collections.
import { mkdirSync } from 'node:fs';
import { LocalStorage } from 'node-localstorage';
import { createRxDatabase, type RxCollection, type RxDatabase, type RxJsonSchema } from 'rxdb';
import { getRxStorageLocalstorage } from 'rxdb/plugins/storage-localstorage';

export interface GuestDoc {
  /** `<eventToken>:<guestId>` */
  key: string;
  eventToken: string;
  guestId: string;
  name: string;
  status: string;
  checkedInAt: string | null;
  personId: string | null;
  qrHash: string;
  /** The template's model and its embedding sealed with the agent's key, or null. */
  modelId: string | null;
  template: string | null;
}

export interface EventDoc {
  token: string;
  /** The replica's event, policy and checkpoint as the cloud sent them (JSON). */
  state: string;
  /** When the replica last completed a refresh (ms since epoch; 0: never). */
  refreshedAt: number;
}

export interface QueueDoc {
  id: string;
  /** The SyncItem, sealed. */
  item: string;
  createdAt: number;
}

const guestSchema: RxJsonSchema<GuestDoc> = {
  version: 0,
  primaryKey: 'key',
  type: 'object',
  properties: {
    key: { type: 'string', maxLength: 200 },
    eventToken: { type: 'string', maxLength: 128 },
    guestId: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string' },
    checkedInAt: { type: ['string', 'null'] },
    personId: { type: ['string', 'null'] },
    qrHash: { type: 'string' },
    modelId: { type: ['string', 'null'] },
    template: { type: ['string', 'null'] },
  },
  required: ['key', 'eventToken', 'guestId', 'name', 'status', 'qrHash'],
  indexes: ['eventToken'],
};

const eventSchema: RxJsonSchema<EventDoc> = {
  version: 0,
  primaryKey: 'token',
  type: 'object',
  properties: {
    token: { type: 'string', maxLength: 128 },
    state: { type: 'string' },
    refreshedAt: { type: 'number' },
  },
  required: ['token', 'state', 'refreshedAt'],
};

const queueSchema: RxJsonSchema<QueueDoc> = {
  version: 0,
  primaryKey: 'id',
  type: 'object',
  properties: {
    id: { type: 'string', maxLength: 40 },
    item: { type: 'string' },
    createdAt: { type: 'number', minimum: 0, maximum: 1e15, multipleOf: 1 },
  },
  required: ['id', 'item', 'createdAt'],
  indexes: ['createdAt'],
};

export type AgentCollections = {
  guests: RxCollection<GuestDoc>;
  events: RxCollection<EventDoc>;
  queue: RxCollection<QueueDoc>;
};
export type AgentDatabase = RxDatabase<AgentCollections>;

/** Room for a 50,000-guest replica with templates (about 4 KB a guest on disk). */
const QUOTA_BYTES = 4 * 1024 ** 3;

export async function openStore(dir: string): Promise<AgentDatabase> {
  mkdirSync(dir, { recursive: true });
  const localStorage = new LocalStorage(dir, QUOTA_BYTES);
  const db = await createRxDatabase<AgentCollections>({
    name: 'portico-agent',
    // node-localstorage implements the Web Storage interface RxDB expects.
    storage: getRxStorageLocalstorage({ localStorage } as unknown as Parameters<
      typeof getRxStorageLocalstorage
    >[0]),
    multiInstance: false,
    closeDuplicates: true,
  });
  await db.addCollections({
    guests: { schema: guestSchema },
    events: { schema: eventSchema },
    queue: { schema: queueSchema },
  });
  return db;
}
