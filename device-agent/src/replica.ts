// The replica of the events this device serves: guests, QR hashes and face templates sealed in the
// replica store (templates.ts: a snapshot and a journal per event), the event and its checkpoint in
// RxDB, and in memory the guests and a FaceIndex per event for matching — the only copy of the
// templates the agent holds. Applied page by page as the cloud sends them, each page's guests and
// templates in one journal batch (flushed to the disk, one append of the page's size: never a rewrite
// of the whole list, which RxDB's storage here makes at every write). The checkpoint is kept only once
// a refresh is complete, so a crash mid-refresh starts it again from the previous checkpoint (pages are
// upserts: applying one twice is harmless). A template is used only for a guest whose document says it
// has one of the policy's model; a guest whose document says so but whose template is missing makes
// the next refresh a full one (the checkpoint is dropped).
//
// Guests were RxDB documents before (their names sealed one by one): an event's documents still there
// are moved into the replica store when it is loaded, then removed from RxDB.
import { embeddingFromBuffer, FaceIndex } from '@portico/face-engine';
import type { Replica as ReplicaPage } from '@portico/contract';
import { createAgentLog, type Logger } from './log.js';
import type { Sealer } from './sealed.js';
import { openName, purgeRemoved, type AgentDatabase } from './store.js';
import type { StoredGuest, TemplateChange, TemplateStore } from './templates.js';

export interface ReplicaGuest {
  guestId: string;
  name: string;
  personId: string | null;
  checkedIn: boolean;
  qrHash: string;
  hasTemplate: boolean;
  /** The guest as stored (written again whole when it changes, and at compaction). */
  stored: StoredGuest;
}

const sameGuest = (a: StoredGuest, b: StoredGuest) =>
  a.name === b.name &&
  a.status === b.status &&
  a.checkedInAt === b.checkedInAt &&
  a.personId === b.personId &&
  a.qrHash === b.qrHash &&
  a.modelId === b.modelId;

export interface EventReplica {
  token: string;
  event: ReplicaPage['event'] | null;
  policy: ReplicaPage['policy'] | null;
  checkpoint: string | null;
  refreshedAt: number;
  guests: Map<string, ReplicaGuest>;
  byQr: Map<string, string>;
  index: FaceIndex;
}

interface EventState {
  event: ReplicaPage['event'] | null;
  policy: ReplicaPage['policy'] | null;
  checkpoint: string | null;
}

/** An event's checkpoint and refresh time reach the disk at most this often (and at close). */
const PERSIST_STATE_EVERY_MS = 60_000;

export function createReplica(
  db: AgentDatabase,
  templates: TemplateStore,
  sealer: Sealer,
  log: Logger = createAgentLog().child({ module: 'replica' }),
) {
  const events = new Map<string, EventReplica>();

  function empty(token: string): EventReplica {
    return {
      token,
      event: null,
      policy: null,
      checkpoint: null,
      refreshedAt: 0,
      guests: new Map(),
      byQr: new Map(),
      index: new FaceIndex(),
    };
  }

  /** A guest as its document says; its template, when it has one of the policy's model, comes apart. */
  function hold(replica: EventReplica, doc: StoredGuest, embedding?: Float32Array) {
    drop(replica, doc.guestId);
    list(replica, doc);
    if (embedding && usable(replica, doc)) replica.index.add(doc.guestId, embedding);
  }

  /** A guest on the replica's list as its document says (its template, if any, is the index's). */
  function list(replica: EventReplica, doc: StoredGuest) {
    replica.guests.set(doc.guestId, {
      guestId: doc.guestId,
      name: doc.name,
      personId: doc.personId,
      checkedIn: doc.status === 'checked_in',
      qrHash: doc.qrHash,
      hasTemplate: usable(replica, doc),
      stored: doc,
    });
    replica.byQr.set(doc.qrHash, doc.guestId);
  }

  const usable = (replica: EventReplica, doc: Pick<StoredGuest, 'modelId'>) =>
    doc.modelId !== null && doc.modelId === replica.policy?.modelId;

  function drop(replica: EventReplica, guestId: string) {
    const held = replica.guests.get(guestId);
    if (!held) return;
    replica.byQr.delete(held.qrHash);
    replica.guests.delete(guestId);
    replica.index.remove(guestId);
  }

  /** What was last written of each event's state, and which events have newer state in memory. */
  const persisted = new Map<string, { at: number; sameAs: string }>();
  const dirty = new Set<string>();
  const sameAs = (replica: EventReplica) => JSON.stringify([replica.event, replica.policy]);
  const stateOf = (replica: EventReplica): EventState => ({
    event: replica.event,
    policy: replica.policy,
    checkpoint: replica.checkpoint,
  });
  async function persist(token: string) {
    const replica = events.get(token);
    dirty.delete(token);
    if (!replica) return;
    const state = JSON.stringify(stateOf(replica));
    await db.events.upsert({ token, state, refreshedAt: replica.refreshedAt });
    persisted.set(token, { at: replica.refreshedAt, sameAs: sameAs(replica) });
  }

  const guestsOf = (replica: EventReplica) =>
    (function* () {
      for (const guest of replica.guests.values()) yield guest.stored;
    })();

  /** Reads what is on disk into memory (at start). */
  async function load(tokens: readonly string[]) {
    for (const token of tokens) {
      const replica = empty(token);
      const state = await db.events.findOne(token).exec();
      if (state) {
        Object.assign(replica, JSON.parse(state.state) as EventState, { refreshedAt: state.refreshedAt });
        persisted.set(token, { at: state.refreshedAt, sameAs: sameAs(replica) });
      }
      // Guests still in RxDB (an older agent's) first: the replica store's own records are newer.
      // Straight from the storage: RxDocuments would stay in the collection's cache.
      const query = db.guests.find({ selector: { eventToken: token } }).getPreparedQuery();
      const { documents: legacy } = await db.guests.storageInstance.query(query);
      const stored = new Map<string, StoredGuest>();
      for (const doc of legacy) {
        const { guestId, status, checkedInAt, personId, qrHash, modelId } = doc;
        const name = openName(sealer, doc);
        stored.set(guestId, { guestId, name, status, checkedInAt, personId, qrHash, modelId });
      }
      replica.index = new FaceIndex({ initialCapacity: Math.max(16, legacy.length) });
      // A batch and a snapshot hold their guests before their templates: a template read is kept when
      // its guest, as read so far, has one of the policy's model; what later records change is settled
      // once all is read.
      const put = new Set<string>();
      templates.read(token, {
        put: (guestId, embedding) => {
          const guest = stored.get(guestId);
          if (!guest || !usable(replica, guest)) return;
          replica.index.add(guestId, embedding);
          put.add(guestId);
        },
        remove: (guestId) => void replica.index.remove(guestId),
        clear: () => replica.index.clear(),
        guest: (guestId, guest) => void (guest ? stored.set(guestId, guest) : stored.delete(guestId)),
      });
      for (const doc of stored.values()) list(replica, doc);
      for (const guestId of put) {
        if (!replica.guests.get(guestId)?.hasTemplate) replica.index.remove(guestId);
      }
      if (legacy.length > 0) {
        // Moved into the replica store (flushed), then out of RxDB: a crash between the two reads
        // both, the store's records winning, and moves them again.
        templates.compact(token, replica.index.entries(), guestsOf(replica));
        await db.guests.bulkRemove(legacy.map((d) => d.key));
        await purgeRemoved(db.guests);
      }
      let missing = 0;
      for (const guest of replica.guests.values()) {
        if (guest.hasTemplate && !replica.index.has(guest.guestId)) missing++;
      }
      if (missing > 0) {
        log.warn(
          { event: token, missing },
          'templates missing on disk (a crash between the guest list and the template store, or an ' +
            'older layout): the next refresh is a full one',
        );
        replica.checkpoint = null;
      }
      events.set(token, replica);
    }
  }

  return {
    load,

    get(token: string): EventReplica | undefined {
      return events.get(token);
    },

    all(): EventReplica[] {
      return [...events.values()];
    },

    /** One page of a refresh; `complete` on the last one keeps its checkpoint. */
    async apply(token: string, page: ReplicaPage, complete: boolean, at: number) {
      if (!events.has(token)) await load([token]);
      const replica = events.get(token)!;
      const modelChanged = replica.policy !== null && replica.policy.modelId !== page.policy.modelId;
      replica.event = page.event;
      replica.policy = page.policy;
      // The page's changes in one journal batch, guests first. A template removal is written for
      // templates the index holds: any other stored one is unused already. Deleted persons: their
      // guests stay, without a face (also when this page lists them).
      const deleted = new Set(page.revokedPersons);
      const gone = (personId: string | null) => personId !== null && deleted.has(personId);
      const embeddings = new Map<string, Float32Array>();
      const changes: TemplateChange[] = modelChanged ? [{ clear: true }] : [];
      const held = (guestId: string) => !modelChanged && replica.index.has(guestId);
      for (const g of page.items) {
        if (g.template?.modelId === page.policy.modelId && !gone(g.personId)) {
          const embedding = embeddingFromBuffer(Buffer.from(g.template.embedding, 'base64'));
          embeddings.set(g.guestId, embedding);
          changes.push({ guestId: g.guestId, embedding });
        } else if (held(g.guestId)) changes.push({ guestId: g.guestId, embedding: null });
      }
      for (const guestId of page.removed) if (held(guestId)) changes.push({ guestId, embedding: null });
      const listed = new Set(page.items.map((g) => g.guestId));
      const forgotten = [...replica.guests.values()].filter(
        (g) => gone(g.personId) && !listed.has(g.guestId),
      );
      for (const { guestId } of forgotten) if (held(guestId)) changes.push({ guestId, embedding: null });
      const docs: StoredGuest[] = page.items.map((g) => ({
        guestId: g.guestId,
        name: g.name,
        status: g.status,
        checkedInAt: g.checkedInAt,
        personId: gone(g.personId) ? null : g.personId,
        qrHash: g.qrHash,
        modelId: gone(g.personId) ? null : (g.template?.modelId ?? null),
      }));
      const guestChanges: TemplateChange[] = [];
      // A guest the delta brings back unchanged (its template re-enrolled, its own check-in here) is
      // not written again.
      for (const doc of docs) {
        const had = replica.guests.get(doc.guestId);
        if (!had || !sameGuest(had.stored, doc)) guestChanges.push({ guestId: doc.guestId, guest: doc });
      }
      for (const guestId of page.removed) {
        if (replica.guests.has(guestId)) guestChanges.push({ guestId, guest: null });
      }
      const unlinked = forgotten.map((g) => ({ ...g.stored, personId: null, modelId: null }));
      for (const doc of unlinked) guestChanges.push({ guestId: doc.guestId, guest: doc });
      templates.append(token, [...guestChanges, ...changes]);
      if (modelChanged) replica.index.clear();
      for (const doc of docs) hold(replica, doc, embeddings.get(doc.guestId));
      for (const id of page.removed) drop(replica, id);
      for (const [i, guest] of forgotten.entries()) {
        replica.index.remove(guest.guestId);
        Object.assign(guest, { personId: null, hasTemplate: false, stored: unlinked[i] });
      }
      if (complete) {
        replica.checkpoint = page.checkpoint;
        replica.refreshedAt = at;
        // A new event or policy at once; the checkpoint and refresh time at most once a minute (and at
        // close): a restart from an older checkpoint only asks for a larger delta (its pages are
        // upserts), and an older refresh time stops face admission no later.
        const saved = persisted.get(token);
        if (!saved || saved.sameAs !== sameAs(replica) || at - saved.at >= PERSIST_STATE_EVERY_MS) {
          await persist(token);
        } else dirty.add(token);
        if (templates.wantsCompaction(token)) {
          templates.compact(token, replica.index.entries(), guestsOf(replica));
        }
      }
    },

    /**
     * Serves exactly these events from now on (the console's assignment): new ones are read from disk
     * (then refreshed by the sync loop); the guests of events no longer served leave the disk.
     */
    async serve(tokens: readonly string[]) {
      await this.load(tokens.filter((t) => !events.has(t)));
      for (const token of [...events.keys()].filter((t) => !tokens.includes(t))) {
        events.delete(token);
        dirty.delete(token);
        persisted.delete(token);
        templates.drop(token);
        await db.guests.find({ selector: { eventToken: token } }).remove();
        await db.events.findOne(token).remove();
        await purgeRemoved(db.guests);
      }
    },

    /** Writes what is newer in memory than on disk (the events' checkpoints): before closing the store. */
    async close() {
      for (const token of [...dirty]) await persist(token);
    },

    /** A guest admitted here: counted at once for capacity, whatever the next refresh says. */
    async markCheckedIn(token: string, guestId: string, at: string) {
      const guest = events.get(token)?.guests.get(guestId);
      if (!guest || guest.checkedIn) return;
      guest.checkedIn = true;
      guest.stored = { ...guest.stored, status: 'checked_in', checkedInAt: at };
      templates.append(token, [{ guestId, guest: guest.stored }]);
    },
  };
}

export type Replica = ReturnType<typeof createReplica>;
