// The agent's RxDB database on disk. In Node only the localstorage storage over node-localstorage
// survives restarts among RxDB's free storages (ENVIRONMENT.md, "Edge and kiosk"); every document is
// its own file. The replica and the queue are the only owners of their collections. The guests' face
// templates are not here but in the template store (templates.ts), read in one pass at start; their
// names are sealed (sealName). Removed documents are purged at once (`purgeRemoved`): RxDB would keep
// them, content and all, as deleted records.
import { mkdirSync, readdirSync } from 'node:fs';
import { LocalStorage } from 'node-localstorage';
import { addRxPlugin, createRxDatabase, type RxCollection, type RxDatabase, type RxJsonSchema } from 'rxdb';
import { RxDBMigrationSchemaPlugin } from 'rxdb/plugins/migration-schema';
import { getRxStorageLocalstorage } from 'rxdb/plugins/storage-localstorage';
import type { Sealer } from './sealed.js';

addRxPlugin(RxDBMigrationSchemaPlugin);

export interface GuestDoc {
  /** `<eventToken>:<guestId>` */
  key: string;
  eventToken: string;
  guestId: string;
  /** Sealed (sealName): the guest's name is personal data, kept only under the data key. */
  name: string;
  status: string;
  checkedInAt: string | null;
  personId: string | null;
  qrHash: string;
  /** The model of the guest's template (in the template store), or null without one. */
  modelId: string | null;
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
  // 1: the sealed template left the document for the template store. 2: the name is sealed.
  version: 2,
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

/** Room for a 50,000-guest replica and a long queue (about 1 KB a guest on disk, with RxDB's indexes). */
const QUOTA_BYTES = 4 * 1024 ** 3;

/**
 * node-localstorage without the scan it makes when opened: it stats every file (one per document) to
 * count the bytes already used against its quota, 1.2 s of CPU for a 50,000-guest replica, before a
 * document is read. Here the keys are listed and their sizes counted as 0, so the quota applies to
 * what this process writes (far below QUOTA_BYTES); reads and writes are node-localstorage's own.
 */
class UnscannedLocalStorage extends LocalStorage {
  override _sync(): void {
    const names = readdirSync(this._location);
    this._bytesInUse = 0;
    for (const [index, name] of names.entries()) {
      const key = decodeURIComponent(name);
      this._keys.push(key);
      this._metaKeyMap[key] = { key: name, index, size: 0 };
    }
    this.length = names.length;
  }
}

const nameContext = (key: string) => `agent-guest-name:${key}`;

/** A guest's name as stored: sealed under the data key, bound to its document. */
export const sealName = (sealer: Sealer, key: string, name: string) =>
  sealer.seal(Buffer.from(name), nameContext(key));

export const openName = (sealer: Sealer, doc: Pick<GuestDoc, 'key' | 'name'>) =>
  sealer.open(doc.name, nameContext(doc.key)).toString('utf8');

/**
 * Drops the collection's removed documents from the disk now. RxDB keeps a removed document (its
 * content included) as a deleted record until a cleanup; nothing here replicates from these
 * collections, so nothing needs those records.
 */
export async function purgeRemoved(collection: RxCollection): Promise<void> {
  await collection.storageInstance.cleanup(0);
}

export async function openStore(dir: string, sealer: Sealer): Promise<AgentDatabase> {
  mkdirSync(dir, { recursive: true });
  const localStorage = new UnscannedLocalStorage(dir, QUOTA_BYTES);
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
    guests: {
      schema: guestSchema,
      // Their templates are dropped: the replica then finds them missing and refreshes in full.
      migrationStrategies: {
        1: ({ template: _template, ...doc }: GuestDoc & { template?: unknown }) => doc,
        2: (doc: GuestDoc) => ({ ...doc, name: sealName(sealer, doc.key, doc.name) }),
      },
    },
    events: { schema: eventSchema },
    queue: { schema: queueSchema },
  });
  return db;
}
