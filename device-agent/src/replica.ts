// The replica of the events this device serves: guests, templates and QR hashes on disk (RxDB, the
// templates sealed) and in memory (a FaceIndex per event for matching). Applied page by page as the
// cloud sends them; the checkpoint is kept only once a refresh is complete, so a crash mid-refresh
// starts it again from the previous checkpoint (pages are upserts: applying one twice is harmless).
import { embeddingFromBuffer, FaceIndex } from '@portico/face-engine';
import type { Replica as ReplicaPage } from '@portico/contract';
import type { AgentDatabase, GuestDoc } from './store.js';
import type { Sealer } from './sealed.js';

export interface ReplicaGuest {
  guestId: string;
  name: string;
  personId: string | null;
  checkedIn: boolean;
  qrHash: string;
  hasTemplate: boolean;
}

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

const templateContext = (token: string, guestId: string) => `agent-template:${token}:${guestId}`;

export function createReplica(db: AgentDatabase, sealer: Sealer) {
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

  function hold(replica: EventReplica, doc: GuestDoc) {
    drop(replica, doc.guestId);
    replica.guests.set(doc.guestId, {
      guestId: doc.guestId,
      name: doc.name,
      personId: doc.personId,
      checkedIn: doc.status === 'checked_in',
      qrHash: doc.qrHash,
      hasTemplate: doc.template !== null,
    });
    replica.byQr.set(doc.qrHash, doc.guestId);
    if (doc.template && doc.modelId === replica.policy?.modelId) {
      const plain = sealer.open(doc.template, templateContext(replica.token, doc.guestId));
      replica.index.add(doc.guestId, embeddingFromBuffer(plain));
    }
  }

  function drop(replica: EventReplica, guestId: string) {
    const held = replica.guests.get(guestId);
    if (!held) return;
    replica.byQr.delete(held.qrHash);
    replica.guests.delete(guestId);
    replica.index.remove(guestId);
  }

  /** Deleted persons: their guests stay, without a face. */
  async function forgetPersons(replica: EventReplica, personIds: readonly string[]) {
    if (personIds.length === 0) return;
    const gone = new Set(personIds);
    for (const guest of replica.guests.values()) {
      if (!guest.personId || !gone.has(guest.personId)) continue;
      replica.index.remove(guest.guestId);
      Object.assign(guest, { personId: null, hasTemplate: false });
      await db.guests
        .findOne(`${replica.token}:${guest.guestId}`)
        .patch({ personId: null, modelId: null, template: null });
    }
  }

  return {
    /** Reads what is on disk into memory (at start). */
    async load(tokens: readonly string[]) {
      for (const token of tokens) {
        const replica = empty(token);
        const stored = await db.events.findOne(token).exec();
        if (stored) {
          Object.assign(replica, JSON.parse(stored.state) as EventState, { refreshedAt: stored.refreshedAt });
        }
        // Straight from the storage: RxDocuments would keep every sealed template in the collection's
        // cache besides the index (about 140 MB at 50,000 guests).
        const query = db.guests.find({ selector: { eventToken: token } }).getPreparedQuery();
        const { documents } = await db.guests.storageInstance.query(query);
        replica.index = new FaceIndex({ initialCapacity: Math.max(16, documents.length) });
        for (const doc of documents) hold(replica, doc);
        events.set(token, replica);
      }
    },

    get(token: string): EventReplica | undefined {
      return events.get(token);
    },

    all(): EventReplica[] {
      return [...events.values()];
    },

    /** One page of a refresh; `complete` on the last one keeps its checkpoint. */
    async apply(token: string, page: ReplicaPage, complete: boolean, at: number) {
      const replica = events.get(token) ?? empty(token);
      events.set(token, replica);
      const modelChanged = replica.policy !== null && replica.policy.modelId !== page.policy.modelId;
      replica.event = page.event;
      replica.policy = page.policy;
      if (modelChanged) replica.index.clear();
      const docs: GuestDoc[] = page.items.map((g) => ({
        key: `${token}:${g.guestId}`,
        eventToken: token,
        guestId: g.guestId,
        name: g.name,
        status: g.status,
        checkedInAt: g.checkedInAt,
        personId: g.personId,
        qrHash: g.qrHash,
        modelId: g.template?.modelId ?? null,
        template: g.template
          ? sealer.seal(Buffer.from(g.template.embedding, 'base64'), templateContext(token, g.guestId))
          : null,
      }));
      if (docs.length > 0) await db.guests.bulkUpsert(docs);
      if (page.removed.length > 0) await db.guests.bulkRemove(page.removed.map((id) => `${token}:${id}`));
      for (const doc of docs) hold(replica, doc);
      for (const id of page.removed) drop(replica, id);
      await forgetPersons(replica, page.revokedPersons);
      if (complete) {
        replica.checkpoint = page.checkpoint;
        replica.refreshedAt = at;
        const state: EventState = {
          event: replica.event,
          policy: replica.policy,
          checkpoint: page.checkpoint,
        };
        await db.events.upsert({ token, state: JSON.stringify(state), refreshedAt: at });
      }
    },

    /** A guest admitted here: counted at once for capacity, whatever the next refresh says. */
    async markCheckedIn(token: string, guestId: string, at: string) {
      const guest = events.get(token)?.guests.get(guestId);
      if (!guest || guest.checkedIn) return;
      guest.checkedIn = true;
      await db.guests.findOne(`${token}:${guestId}`).patch({ status: 'checked_in', checkedInAt: at });
    },
  };
}

export type Replica = ReturnType<typeof createReplica>;
