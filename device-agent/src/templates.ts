// The replica on disk: per event its guests and their face templates in a sealed snapshot read in one
// pass at start, and a journal of the changes made since, both under the agent's key. A change costs
// one append of its own size (a delta's guests, a check-in), never a rewrite of the event's list, so
// the sync loop and the door never wait on the size of the replica. The snapshot is rewritten from
// memory (the index's templates, the replica's guests) once the journal has grown (`compact`).
//
// Files, in `<dataDir>/templates/`, named by a hash of the event token:
//   <name>.snap  'PTS1' | snapshot id (16) | iv (12) | sealed records ... | tag (16)
//   <name>.log   'PTJ1' | snapshot id (16) | key check (28) | { u32 length | sealed batch of records } ...
// A record: u8 op | u16 id length | id (UTF-8) | what the op carries: 1 put a template (float32
// embedding), 2 remove a template, 3 clear the templates, 4 put a guest (u32 length | its JSON), 5 remove a
// guest. A batch writes its guests before their templates, and a snapshot all guests first.
// A journal follows the snapshot whose id it names and is ignored otherwise (a crash after a new
// snapshot and before its new journal). The last batch, when a crash cut it short (or a power cut left
// it unreadable), is ignored and cut off before the next one is appended; any other unreadable part,
// or another key (the key check: an empty value sealed), fails the read. Every write is flushed to the
// disk (fsync) before it returns.
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { EMBEDDING_DIMENSIONS } from '@portico/face-engine';
import { replaceFile, writeAll } from './data-dir.js';
import { TAG_BYTES, type Sealer } from './sealed.js';

/** A guest of the replica as stored (the whole file is sealed, its name with it). */
export interface StoredGuest {
  guestId: string;
  name: string;
  status: string;
  checkedInAt: string | null;
  personId: string | null;
  qrHash: string;
  /** The model of the guest's template, or null without one. */
  modelId: string | null;
}

export type TemplateChange =
  | { guestId: string; embedding: Float32Array | null }
  | { clear: true; guestId?: undefined }
  | { guestId: string; guest: StoredGuest | null };

/** Where stored records go when they are read: the event's index, and its guests. */
export interface TemplateSink {
  put(guestId: string, embedding: Float32Array): void;
  remove(guestId: string): void;
  clear(): void;
  /** A guest's document (null: the guest left the list). Stores from before guests have none. */
  guest?(guestId: string, guest: StoredGuest | null): void;
}

const SNAP_MAGIC = Buffer.from('PTS1');
const LOG_MAGIC = Buffer.from('PTJ1');
const ID_BYTES = 16;
const IV_BYTES = 12;
const HEADER_BYTES = 4 + ID_BYTES;
/** The journal's key check: an empty value sealed (iv and tag). */
const CHECK_BYTES = IV_BYTES + TAG_BYTES;
const LOG_HEADER_BYTES = HEADER_BYTES + CHECK_BYTES;
const CHUNK_BYTES = 1024 * 1024;
const PUT = 1;
const REMOVE = 2;
const CLEAR = 3;
const GUEST = 4;
const GUEST_REMOVED = 5;
const VECTOR_BYTES = EMBEDDING_DIMENSIONS * 4;
/** The journal is folded into a new snapshot once it is larger than this and a quarter of the snapshot. */
const MIN_COMPACT_BYTES = 4 * 1024 * 1024;

interface FileState {
  snapshotId: Buffer;
  snapshotBytes: number;
  /** Bytes of the journal that hold whole batches (what follows is a torn write). */
  logBytes: number;
}

/** Serialises records into one buffer. */
function encode(changes: readonly TemplateChange[]): Buffer {
  const parts: Buffer[] = [];
  for (const change of changes) {
    const id = Buffer.from(change.guestId ?? '');
    const op =
      'clear' in change
        ? CLEAR
        : 'guest' in change
          ? change.guest
            ? GUEST
            : GUEST_REMOVED
          : change.embedding
            ? PUT
            : REMOVE;
    const head = Buffer.alloc(3);
    head.writeUInt8(op, 0);
    head.writeUInt16LE(id.length, 1);
    parts.push(head, id);
    if (op === GUEST) {
      const json = Buffer.from(JSON.stringify((change as { guest: StoredGuest }).guest));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(json.length, 0);
      parts.push(length, json);
    } else if (op === PUT) {
      const v = (change as { embedding: Float32Array }).embedding;
      if (v.length !== EMBEDDING_DIMENSIONS) throw new RangeError(`a template has ${v.length} dimensions`);
      parts.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    }
  }
  return Buffer.concat(parts);
}

/**
 * Reads records from `buf` into `sink` and returns how many bytes held whole records. `scratch` is
 * the embedding handed to `put` (the sink copies it).
 */
function decode(buf: Buffer, sink: TemplateSink, scratch: Float32Array): number {
  const bytes = new Uint8Array(scratch.buffer);
  let at = 0;
  while (at + 3 <= buf.length) {
    const op = buf.readUInt8(at);
    const idLength = buf.readUInt16LE(at + 1);
    const body = at + 3 + idLength;
    let size = 3 + idLength + (op === PUT ? VECTOR_BYTES : 0);
    if (op === GUEST) {
      if (body + 4 > buf.length) break;
      size += 4 + buf.readUInt32LE(body);
    }
    if (at + size > buf.length) break;
    const id = buf.toString('utf8', at + 3, body);
    if (op === PUT) {
      bytes.set(buf.subarray(body, at + size));
      sink.put(id, scratch);
    } else if (op === REMOVE) sink.remove(id);
    else if (op === CLEAR) sink.clear();
    else if (op === GUEST)
      sink.guest?.(id, JSON.parse(buf.toString('utf8', body + 4, at + size)) as StoredGuest);
    else if (op === GUEST_REMOVED) sink.guest?.(id, null);
    else throw new Error(`template store: unknown record ${op}`);
    at += size;
  }
  return at;
}

function readExactly(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.alloc(length);
  let at = 0;
  while (at < length) {
    const n = readSync(fd, buf, at, length - at, position + at);
    if (n === 0) break;
    at += n;
  }
  return at === length ? buf : buf.subarray(0, at);
}

export function openTemplateStore(
  dataDir: string,
  sealer: Sealer,
  options: { minCompactBytes?: number } = {},
) {
  const minCompactBytes = options.minCompactBytes ?? MIN_COMPACT_BYTES;
  const dir = path.join(dataDir, 'templates');
  mkdirSync(dir, { recursive: true });
  const files = new Map<string, FileState>();
  const name = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 32);
  const snapPath = (token: string) => path.join(dir, `${name(token)}.snap`);
  const logPath = (token: string) => path.join(dir, `${name(token)}.log`);
  const snapContext = (token: string, id: Buffer) => `agent-templates:${token}:${id.toString('hex')}`;
  const logContext = (token: string, id: Buffer) => `agent-templates-log:${token}:${id.toString('hex')}`;
  const checkContext = (token: string, id: Buffer) => `agent-templates-key:${token}:${id.toString('hex')}`;
  const logHeader = (token: string, id: Buffer) =>
    Buffer.concat([LOG_MAGIC, id, sealer.sealBytes(Buffer.alloc(0), checkContext(token, id))]);

  function readSnapshot(token: string, sink: TemplateSink, scratch: Float32Array): FileState {
    const file = snapPath(token);
    if (!existsSync(file)) return { snapshotId: Buffer.alloc(ID_BYTES), snapshotBytes: 0, logBytes: 0 };
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const head = readExactly(fd, HEADER_BYTES + IV_BYTES, 0);
      if (head.length < HEADER_BYTES + IV_BYTES || !head.subarray(0, 4).equals(SNAP_MAGIC)) {
        throw new Error(`template store: ${file} is not a template snapshot`);
      }
      const snapshotId = Buffer.from(head.subarray(4, HEADER_BYTES));
      const tag = readExactly(fd, TAG_BYTES, size - TAG_BYTES);
      const opening = sealer.opening(snapContext(token, snapshotId), head.subarray(HEADER_BYTES), tag);
      const end = size - TAG_BYTES;
      let carry = Buffer.alloc(0);
      for (let at = HEADER_BYTES + IV_BYTES; at < end; at += CHUNK_BYTES) {
        const plain = opening.update(readExactly(fd, Math.min(CHUNK_BYTES, end - at), at));
        const buf = carry.length > 0 ? Buffer.concat([carry, plain]) : plain;
        carry = Buffer.from(buf.subarray(decode(buf, sink, scratch)));
      }
      opening.final();
      if (carry.length > 0) throw new Error(`template store: ${file} ends inside a record`);
      return { snapshotId, snapshotBytes: size, logBytes: 0 };
    } finally {
      closeSync(fd);
    }
  }

  function readJournal(token: string, state: FileState, sink: TemplateSink, scratch: Float32Array) {
    const file = logPath(token);
    if (!existsSync(file)) return;
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      const head = readExactly(fd, LOG_HEADER_BYTES, 0);
      if (head.length < LOG_HEADER_BYTES || !head.subarray(0, 4).equals(LOG_MAGIC)) return;
      // The journal of an older snapshot: everything in it is in the current snapshot already.
      if (!head.subarray(4, HEADER_BYTES).equals(state.snapshotId)) return;
      sealer.openBytes(head.subarray(HEADER_BYTES), checkContext(token, state.snapshotId));
      let at = LOG_HEADER_BYTES;
      while (at + 4 <= size) {
        const length = readExactly(fd, 4, at).readUInt32LE(0);
        if (at + 4 + length > size) break;
        let plain: Buffer;
        try {
          plain = sealer.openBytes(readExactly(fd, length, at + 4), logContext(token, state.snapshotId));
        } catch (error) {
          if (at + 4 + length === size) break;
          throw error;
        }
        if (decode(plain, sink, scratch) !== plain.length) {
          throw new Error(`template store: a batch of ${file} ends inside a record`);
        }
        at += 4 + length;
      }
      state.logBytes = at;
    } finally {
      closeSync(fd);
    }
  }

  return {
    /**
     * Replays the event's stored templates into `sink`: its snapshot, then its journal. Throws when a
     * file was altered or sealed under another key.
     */
    read(token: string, sink: TemplateSink) {
      const scratch = new Float32Array(EMBEDDING_DIMENSIONS);
      const state = readSnapshot(token, sink, scratch);
      readJournal(token, state, sink, scratch);
      files.set(token, state);
    },

    /** Appends changes to the event's journal and flushes them to the disk. */
    append(token: string, changes: readonly TemplateChange[]) {
      if (changes.length === 0) return;
      const state = files.get(token);
      if (!state) throw new Error(`template store: read the templates of ${token} before changing them`);
      const file = logPath(token);
      const sealed = sealer.sealBytes(encode(changes), logContext(token, state.snapshotId));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(sealed.length, 0);
      if (state.logBytes === 0) {
        replaceFile(file, (fd) => writeAll(fd, logHeader(token, state.snapshotId)));
        state.logBytes = LOG_HEADER_BYTES;
      }
      const fd = openSync(file, 'r+');
      try {
        // Whatever follows the last whole batch is a write a crash cut short.
        if (fstatSync(fd).size !== state.logBytes) ftruncateSync(fd, state.logBytes);
        let at = 0;
        const record = Buffer.concat([length, sealed]);
        while (at < record.length) at += writeSync(fd, record, at, record.length - at, state.logBytes + at);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      state.logBytes += 4 + sealed.length;
    },

    /** Whether the journal is large enough to be folded into a new snapshot. */
    wantsCompaction(token: string): boolean {
      const state = files.get(token);
      const journal = state ? state.logBytes - LOG_HEADER_BYTES : 0;
      return !!state && journal > Math.max(minCompactBytes, state.snapshotBytes / 4);
    },

    /**
     * Writes every guest and template the event holds as its new snapshot, then starts an empty journal
     * after it. Both are read while writing, one at a time (the index's templates decoded: no second copy).
     */
    compact(
      token: string,
      templates: Iterable<readonly [string, Float32Array]>,
      guests: Iterable<StoredGuest> = [],
    ) {
      const snapshotId = randomBytes(ID_BYTES);
      const sealing = sealer.sealing(snapContext(token, snapshotId));
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      replaceFile(snapPath(token), (fd) => {
        writeAll(fd, Buffer.concat([SNAP_MAGIC, snapshotId, sealing.iv]));
        const flush = () => {
          writeAll(fd, sealing.update(Buffer.concat(pending)));
          pending = [];
          pendingBytes = 0;
        };
        const records = function* (): Generator<TemplateChange> {
          for (const guest of guests) yield { guestId: guest.guestId, guest };
          for (const [guestId, embedding] of templates) yield { guestId, embedding };
        };
        for (const change of records()) {
          const record = encode([change]);
          pending.push(record);
          pendingBytes += record.length;
          if (pendingBytes >= CHUNK_BYTES) flush();
        }
        flush();
        writeAll(fd, sealing.final());
      });
      replaceFile(logPath(token), (fd) => writeAll(fd, logHeader(token, snapshotId)));
      files.set(token, {
        snapshotId,
        snapshotBytes: statSync(snapPath(token)).size,
        logBytes: LOG_HEADER_BYTES,
      });
    },

    /** Forgets the event: its files leave the disk (an event this device no longer serves). */
    drop(token: string) {
      rmSync(snapPath(token), { force: true });
      rmSync(logPath(token), { force: true });
      files.delete(token);
    },
  };
}

export type TemplateStore = ReturnType<typeof openTemplateStore>;
