// A replica that keeps changing its templates until it is killed (templates.test.ts SIGKILLs it):
// a full refresh of GUESTS guests, then round after round, each a complete refresh that gives new
// templates to ROTATE guests of the first half and revokes one guest of the second half. The journal
// is folded into a snapshot whenever it outgrows a quarter of it, so kills also land in compactions.
// Prints `ready`, then `done <round>` once a round has returned.
import type { Replica as Page } from '@portico/contract';
import { createReplica } from '../../src/replica.js';
import { createSealer } from '../../src/sealed.js';
import { openStore } from '../../src/store.js';
import { openTemplateStore } from '../../src/templates.js';
import { replicaGuest } from './replica-page.js';
import { GUESTS, PAGE, rotated, templateOf, TOKEN, writerEvent, writerPolicy } from './templates.js';

const [dir, key] = process.argv.slice(2) as [string, string];
const sealer = createSealer(Buffer.from(key, 'base64'));
const db = await openStore(dir, sealer);
const replica = createReplica(db, openTemplateStore(dir, sealer, { minCompactBytes: 0 }), sealer);
await replica.load([TOKEN]);

const item = (i: number, version: number | null) =>
  replicaGuest(i, `Guest ${i}`, version === null ? null : templateOf(i, version));
const page = (items: Page['items'], checkpoint: string, last: boolean): Page => ({
  event: writerEvent,
  policy: writerPolicy,
  items,
  removed: [],
  revokedPersons: [],
  nextCursor: last ? null : 'next',
  checkpoint,
});

for (let from = 0; from < GUESTS; from += PAGE) {
  const items = Array.from({ length: PAGE }, (_, k) => item(from + k, 0));
  await replica.apply(TOKEN, page(items, '0.0', from + PAGE >= GUESTS), from + PAGE >= GUESTS, Date.now());
}
console.log('ready');
for (let round = 1; ; round++) {
  const items = rotated(round).map((i) => item(i, round));
  items.push(item(GUESTS - round, null));
  await replica.apply(TOKEN, page(items, `${round}.0`, true), true, Date.now());
  console.log(`done ${round}`);
  if (GUESTS - round <= GUESTS / 2) break;
}
