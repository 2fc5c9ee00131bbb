// `pnpm agent rotate-key` (the agent stopped): re-seals everything in the data folder under a new key,
// in place: the queue, the replica store's guests and templates (and the names of guests an older
// agent left in RxDB), the credentials and the key check. The new key is written first (`data.key.next`) and every record is re-sealed from whichever of the two keys
// opens it, so a rotation cut short (a crash, a power cut) is finished by running it again; the agent
// refuses to start meanwhile. Done, the new key replaces `data.key` — or, when the old one came from
// AGENT_DATA_KEY, it is printed for the operator to set there, and the folder keeps no key.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig } from './config.js';
import {
  checkKey,
  dataKeyOf,
  isWrongKey,
  KEY_FILE,
  lockDir,
  NEXT_KEY_FILE,
  parseKey,
  privateDir,
  StartError,
  writeKeyCheck,
  writePrivateFile,
  wrongKeyMessage,
} from './data-dir.js';
import { openDeviceState, writeDeviceState } from './device-state.js';
import { QUEUE_CONTEXT } from './queue.js';
import { createSealer, type Sealer } from './sealed.js';
import { openName, openStore, sealName } from './store.js';
import { openTemplateStore, type StoredGuest, type TemplateSink } from './templates.js';

/** The plaintext of a record from whichever key opens it (the new one first: already re-sealed). */
function either<T>(open: (sealer: Sealer) => T, next: Sealer, old: Sealer): { value: T; resealed: boolean } {
  try {
    return { value: open(next), resealed: true };
  } catch (error) {
    if (!isWrongKey(error)) throw error;
    return { value: open(old), resealed: false };
  }
}

export async function rotateKey(config: Pick<AgentConfig, 'dataDir' | 'dataKey'>) {
  const dir = config.dataDir;
  if (!existsSync(dir)) throw new StartError(`${dir} does not exist: nothing to rotate`);
  privateDir(dir);
  const release = lockDir(dir, 'rotating the key');
  try {
    const old = dataKeyOf(dir, config.dataKey, { create: false });
    const nextFile = path.join(dir, NEXT_KEY_FILE);
    const resuming = existsSync(nextFile);
    if (!resuming && checkKey(dir, old.sealer) === 'wrong')
      throw new StartError(wrongKeyMessage(dir, old.source));
    if (!resuming) writePrivateFile(nextFile, `${randomBytes(32).toString('base64')}\n`);
    const nextKey = parseKey(readFileSync(nextFile, 'utf8'), nextFile);
    const next = createSealer(nextKey);
    let records = 0;

    const state = either((s) => openDeviceState(dir, s).get(), next, old.sealer).value;
    writeDeviceState(dir, next, state);

    const db = await openStore(dir, old.sealer);
    try {
      const queued = await db.queue.find().exec();
      const queueDocs = queued.map((d) => {
        const context = `${QUEUE_CONTEXT}:${d.id}`;
        const item = either((s) => s.open(d.item, context), next, old.sealer);
        return { ...d.toMutableJSON(), item: item.resealed ? d.item : next.seal(item.value, context) };
      });
      if (queueDocs.length > 0) await db.queue.bulkUpsert(queueDocs);
      const guests = await db.guests.find().exec();
      const guestDocs = guests.map((d) => {
        const doc = d.toMutableJSON();
        const name = either((s) => openName(s, doc), next, old.sealer);
        return name.resealed ? doc : { ...doc, name: sealName(next, doc.key, name.value) };
      });
      if (guestDocs.length > 0) await db.guests.bulkUpsert(guestDocs);
      records += queueDocs.length + guestDocs.length;

      // The replica store: each event's snapshot and journal (guests and templates) read whole, then
      // written as a new snapshot.
      for (const event of await db.events.find().exec()) {
        const held = new Map<string, Float32Array>();
        const guests = new Map<string, StoredGuest>();
        const sink: TemplateSink = {
          put: (id, e) => void held.set(id, Float32Array.from(e)),
          remove: (id) => void held.delete(id),
          clear: () => held.clear(),
          guest: (id, g) => void (g ? guests.set(id, g) : guests.delete(id)),
        };
        const read = either(
          (s) => {
            held.clear();
            guests.clear();
            openTemplateStore(dir, s).read(event.token, sink);
          },
          next,
          old.sealer,
        );
        if (!read.resealed) {
          openTemplateStore(dir, next).compact(event.token, held.entries(), guests.values());
        }
        records += held.size + guests.size;
      }
    } finally {
      await db.close();
    }
    writeKeyCheck(dir, next);

    if (old.source === KEY_FILE) {
      renameSync(nextFile, path.join(dir, KEY_FILE));
      return { records, newKey: null };
    }
    rmSync(nextFile);
    return { records, newKey: nextKey.toString('base64') };
  } finally {
    release();
  }
}
