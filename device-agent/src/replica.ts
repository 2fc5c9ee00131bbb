// The replica of the events this device serves: guests and QR hashes on disk in RxDB, their face
// templates sealed in the template store (templates.ts), and in memory a FaceIndex per event for
// matching — the only copy of the templates the agent holds. Applied page by page as the cloud sends
// them; the checkpoint is kept only once a refresh is complete, so a crash mid-refresh starts it again
// from the previous checkpoint (pages are upserts: applying one twice is harmless).
//
// Each page's template changes reach the template store (flushed to the disk) before its guests reach
// RxDB. After a crash between the two, the templates are ahead: a template is used only for a guest
// whose document says it has one of the policy's model, and a guest whose document says so but whose
// template is missing makes the next refresh a full one (the checkpoint is dropped).
import { embeddingFromBuffer, FaceIndex } from '@portico/face-engine';
import type { Replica as ReplicaPage } from '@portico/contract';
import { createAgentLog, type Logger } from './log.js';
import type { Sealer } from './sealed.js';
import { openName, purgeRemoved, sealName, type AgentDatabase, type GuestDoc } from './store.js';
import type { TemplateChange, TemplateStore } from './templates.js';

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
  function hold(replica: EventReplica, doc: GuestDoc, embedding?: Float32Array) {
    drop(replica, doc.guestId);
    replica.guests.set(doc.guestId, {
      guestId: doc.guestId,
      name: doc.name,
      personId: doc.personId,
      checkedIn: doc.status === 'checked_in',
      qrHash: doc.qrHash,
      hasTemplate: usable(replica, doc),
    });
    replica.byQr.set(doc.qrHash, doc.guestId);
    if (embedding && usable(replica, doc)) replica.index.add(doc.guestId, embedding);
  }

  const usable = (replica: EventReplica, doc: Pick<GuestDoc, 'modelId'>) =>
    doc.modelId !== null && doc.modelId === replica.policy?.modelId;

  function drop(replica: EventReplica, guestId: string) {
    const held = replica.guests.get(guestId);
    if (!held) return;
    replica.byQr.delete(held.qrHash);
    replica.guests.delete(guestId);
    replica.index.remove(guestId);
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
        // Straight from the storage: RxDocuments would stay in the collection's cache.
        const query = db.guests.find({ selector: { eventToken: token } }).getPreparedQuery();
        const { documents } = await db.guests.storageInstance.query(query);
        replica.index = new FaceIndex({ initialCapacity: Math.max(16, documents.length) });
        for (const doc of documents) hold(replica, { ...doc, name: openName(sealer, doc) });
        templates.read(token, {
          put: (guestId, embedding) => {
            if (replica.guests.get(guestId)?.hasTemplate) replica.index.add(guestId, embedding);
          },
          remove: (guestId) => replica.index.remove(guestId),
          clear: () => replica.index.clear(),
        });
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
      // The template store's changes, on the disk before the guests (see the top of this file). A
      // removal is written for templates the index holds: any other stored one is unused already.
      // Deleted persons: their guests stay, without a face (also when this page lists them).
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
      templates.append(token, changes);
      if (modelChanged) replica.index.clear();
      const docs: GuestDoc[] = page.items.map((g) => ({
        key: `${token}:${g.guestId}`,
        eventToken: token,
        guestId: g.guestId,
        name: g.name,
        status: g.status,
        checkedInAt: g.checkedInAt,
        personId: gone(g.personId) ? null : g.personId,
        qrHash: g.qrHash,
        modelId: gone(g.personId) ? null : (g.template?.modelId ?? null),
      }));
      if (docs.length > 0) {
        await db.guests.bulkUpsert(docs.map((d) => ({ ...d, name: sealName(sealer, d.key, d.name) })));
      }
      if (page.removed.length > 0) {
        await db.guests.bulkRemove(page.removed.map((id) => `${token}:${id}`));
        await purgeRemoved(db.guests);
      }
      for (const doc of docs) hold(replica, doc, embeddings.get(doc.guestId));
      for (const id of page.removed) drop(replica, id);
      for (const guest of forgotten) {
        if (replica.guests.get(guest.guestId) !== guest) continue;
        replica.index.remove(guest.guestId);
        Object.assign(guest, { personId: null, hasTemplate: false });
        await db.guests.findOne(`${token}:${guest.guestId}`).patch({ personId: null, modelId: null });
      }
      if (complete) {
        replica.checkpoint = page.checkpoint;
        replica.refreshedAt = at;
        const state: EventState = {
          event: replica.event,
          policy: replica.policy,
          checkpoint: page.checkpoint,
        };
        await db.events.upsert({ token, state: JSON.stringify(state), refreshedAt: at });
        if (templates.wantsCompaction(token)) templates.compact(token, replica.index.entries());
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
        await db.guests.find({ selector: { eventToken: token } }).remove();
        await db.events.findOne(token).remove();
        await purgeRemoved(db.guests);
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
