// `pnpm agent doctor`: what state the data folder is in, read without changing anything (it may run
// while the agent does): the folder's permissions, the key and whether it opens the data, the
// credentials, the queue waiting to upload, the events held and the last exchange with the cloud.
// Read from the files themselves (RxDB's localstorage keeps one JSON file per document), not through
// RxDB, which would write as it opens.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfig } from './config.js';
import { checkKey, dataKeyOf, KEY_FILE, type DataKey } from './data-dir.js';
import { openDeviceState, type DeviceState } from './device-state.js';
import { QUEUE_CONTEXT } from './queue.js';
import { openTemplateStore } from './templates.js';

interface Finding {
  what: string;
  said: string;
  ok: boolean;
}

/** The documents of one collection, straight from their files (deleted records left out). */
function documents<T>(dir: string, collection: string): T[] {
  const prefix = `RxDB-ls-doc-portico-agent--${collection}--`;
  return readdirSync(dir)
    .filter((name) => decodeURIComponent(name).startsWith(prefix))
    .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as T & { _deleted?: boolean })
    .filter((doc) => !doc._deleted);
}

const when = (ms: number | undefined | null) => (ms ? new Date(ms).toISOString() : 'never');

export function doctor(config: Pick<AgentConfig, 'dataDir' | 'dataKey' | 'link' | 'eventTokens'>): {
  ok: boolean;
  findings: Finding[];
} {
  const dir = config.dataDir;
  const findings: Finding[] = [];
  const say = (what: string, said: string, ok = true) => findings.push({ what, said, ok });
  if (!existsSync(dir)) {
    say(
      'data folder',
      `${dir} does not exist: the agent makes it at its first start (or pair)`,
      !!config.link,
    );
    return { ok: findings.every((f) => f.ok), findings };
  }
  const mode = statSync(dir).mode & 0o777;
  say(
    'data folder',
    `${dir} (mode ${mode.toString(8)})${mode & 0o077 ? `: readable by other users, \`chmod 700 ${dir}\`` : ''}`,
    (mode & 0o077) === 0,
  );

  let key: DataKey | undefined;
  try {
    key = dataKeyOf(dir, config.dataKey, { create: false });
  } catch (error) {
    say('key', (error as Error).message, false);
  }
  let state: DeviceState = {};
  if (key) {
    const check = checkKey(dir, key.sealer);
    const source = key.source === 'AGENT_DATA_KEY' ? 'AGENT_DATA_KEY' : `${KEY_FILE} in the folder`;
    if (check === 'wrong') {
      say(
        'key',
        `${source} does not open the data: it was sealed under another key (README, "Recovery")`,
        false,
      );
      key = undefined;
    } else {
      say(
        'key',
        `${source}${check === 'ok' ? ', opens the data' : ', not checked yet (the agent checks it at its next start)'}`,
      );
      state = openDeviceState(dir, key.sealer).get();
    }
  }

  if (config.link) say('device', `from the environment, cloud ${config.link.cloudUrl}`);
  else if (state.credentials) {
    const c = state.credentials;
    say('device', `paired as "${c.name}" (${c.deviceId}), cloud ${c.cloudUrl}`);
  } else if (key) say('device', 'not paired: `pnpm agent pair --cloud <URL> --code XXXX-XXXX`', false);
  else say('device', 'unknown: no key opens the folder', false);

  const queued = documents<{ id: string; item: string; createdAt: number }>(dir, 'queue');
  let unreadable = 0;
  if (key) {
    for (const doc of queued) {
      try {
        key.sealer.open(doc.item, `${QUEUE_CONTEXT}:${doc.id}`);
      } catch {
        unreadable++;
      }
    }
  }
  const oldest = queued.reduce<number | null>(
    (min, d) => (min === null || d.createdAt < min ? d.createdAt : min),
    null,
  );
  say(
    'queue',
    queued.length === 0
      ? 'empty: every decision has reached the cloud'
      : `${queued.length} decision(s) waiting to upload, the oldest from ${when(oldest)}` +
          (key ? (unreadable ? `; ${unreadable} cannot be opened with this key` : ', all readable') : ''),
    unreadable === 0,
  );

  const tokens = config.eventTokens ?? state.eventTokens ?? [];
  // The replica store's guests, read with the key (nothing written).
  const storedGuests = (token: string) => {
    if (!key) return 0;
    const held = new Set<string>();
    openTemplateStore(dir, key.sealer).read(token, {
      put: () => {},
      remove: () => {},
      clear: () => {},
      guest: (id, g) => void (g ? held.add(id) : held.delete(id)),
    });
    return held.size;
  };
  const guests = documents<{ eventToken: string }>(dir, 'guests');
  const events = new Map(
    documents<{ token: string; refreshedAt: number }>(dir, 'events').map((e) => [e.token, e]),
  );
  say(
    'events',
    tokens.length === 0
      ? `none${config.eventTokens ? '' : ' assigned yet: assign the device to events in the console'}`
      : tokens
          .map((t) => {
            const count = guests.filter((g) => g.eventToken === t).length + storedGuests(t);
            return `${t.slice(0, 8)}… ${key ? `${count} guest(s)` : 'guests sealed (no key opens them)'}, refreshed ${when(events.get(t)?.refreshedAt)}`;
          })
          .join('; '),
  );
  say('last sync', when(state.lastSyncAt));
  return { ok: findings.every((f) => f.ok), findings };
}
