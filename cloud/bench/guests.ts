// Guests benchmark over real HTTP: importing a 10,000-row CSV file, and a kiosk's confirmed list of an
// event with 50,000 confirmed guests (the whole list page by page, then an incremental fetch with
// nothing new), and the door's search as you type among them. Targets (issue 13): import <= 10 s on
// PGlite; full list <= 2 s; empty increment <= 20 ms; (issue 25) search p95 < 150 ms per keystroke.
// PGlite in a temporary directory, or with BENCH_DATABASE_URL=postgresql://… a scratch database.
import os from 'node:os';
import { startBenchApp } from './bench-environment.js';

const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 10_000);
const LIST_GUESTS = Number(process.env.BENCH_LIST_GUESTS ?? 50_000);
const PAGE_SIZES = (process.env.BENCH_LIST_PAGES ?? '1000,5000').split(',').map(Number);

const fmt = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { database, server, prisma, tenant, auth, stop } = await startBenchApp('guests');
  console.log(`guests benchmark: ${database}, ${os.cpus().length} cores`);
  try {
    const api = async (method: string, url: string, body?: unknown) => {
      const send = () =>
        fetch(server.url + url, {
          method,
          headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
      // A kept-alive connection the server closed while the set-up ran: one new connection.
      const res = await send().catch(send);
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const newEvent = async (name: string) => {
      const event = (await api('POST', '/v1/events', { name })) as { id: string; publicToken: string };
      await api('PATCH', `/v1/events/${event.id}/status`, { status: 'published' });
      return event;
    };

    // 1. Import.
    const importEvent = await newEvent('Import');
    const lines = ['name,email,phone,document,birthDate'];
    for (let i = 0; i < IMPORT_ROWS; i++) {
      lines.push(
        `Guest ${i},guest${i}@example.com,+351 900 ${String(i).padStart(6, '0')},DOC-${i},1990-01-01`,
      );
    }
    const csv = Buffer.from(lines.join('\n'));
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'guests.csv');
    const warm = new FormData();
    warm.append('file', new Blob(['name\nWarm Up\n'], { type: 'text/csv' }), 'warm.csv');
    await fetch(`${server.url}/v1/events/${(await newEvent('Warm-up')).id}/guests/import`, {
      method: 'POST',
      headers: auth,
      body: warm,
    });
    let t0 = performance.now();
    const res = await fetch(`${server.url}/v1/events/${importEvent.id}/guests/import`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    const report = (await res.json()) as { created: number; duplicates: number; failed: number };
    const importMs = performance.now() - t0;
    console.log(
      `import ${IMPORT_ROWS} CSV rows (${(csv.length / 1e6).toFixed(2)} MB): ${fmt(importMs)} ms, ` +
        `status ${res.status}, created ${report.created}, duplicates ${report.duplicates}, failed ${report.failed}`,
    );

    // 2. Confirmed list: guests written straight to the table, then fetched over HTTP.
    const listEvent = await newEvent('List');
    t0 = performance.now();
    // One statement (the bench's own set-up; tokens need only be unique here).
    await prisma.$executeRaw`
      INSERT INTO guests (id, tenant_id, event_id, name, email, status, confirmed_at, guest_token, link_token,
                          created_at, updated_at)
      SELECT gen_random_uuid()::text, ${tenant.tenantId}, ${listEvent.id}, 'Confirmed ' || g, 'c' || g || '@example.com',
             'confirmed', now(), 'gt_' || md5(random()::text || g), 'lk_' || md5(random()::text || g), now(), now()
        FROM generate_series(1, ${LIST_GUESTS}::int) AS g`;
    console.log(`(set-up: ${LIST_GUESTS} confirmed guests written in ${fmt(performance.now() - t0)} ms)`);
    const base = `/v1/events/${listEvent.publicToken}/confirmed-list`;
    // The list is read as an offline reader does: with the event's list token, no session.
    const { token: listToken } = (await api('POST', `/v1/events/${listEvent.id}/list-token`)) as {
      token: string;
    };
    const readList = async (url: string) => {
      const res = await fetch(server.url + url, { headers: { 'x-list-token': listToken } });
      if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    let checkpoint = '';
    for (const limit of PAGE_SIZES) {
      t0 = performance.now();
      let cursor: string | null = null;
      let pages = 0;
      let items = 0;
      do {
        const page = (await readList(`${base}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)) as {
          items: unknown[];
          nextCursor: string | null;
          checkpoint: string;
        };
        items += page.items.length;
        cursor = page.nextCursor;
        checkpoint = page.checkpoint;
        pages++;
      } while (cursor);
      console.log(
        `confirmed list of ${LIST_GUESTS}, pages of ${limit}: ${pages} pages, ${items} guests in ${fmt(performance.now() - t0)} ms`,
      );
    }
    const empty: number[] = [];
    for (let i = 0; i < 50; i++) {
      t0 = performance.now();
      const page = (await readList(`${base}?since=${checkpoint}`)) as {
        items: unknown[];
        removed: unknown[];
      };
      empty.push(performance.now() - t0);
      if (page.items.length + page.removed.length !== 0) throw new Error('the increment was not empty');
    }
    console.log(
      `empty incremental fetch (since the last checkpoint), 50 requests: first ${fmt(empty[0]!)} ms, ` +
        `p50 ${fmt(median(empty))} ms, max ${fmt(Math.max(...empty))} ms`,
    );

    // 3. The door's search as you type among the same 50,000 guests: one request per keystroke (a page
    // of 50 with its total), case and accents folded by the API. Target (issue 25): p95 < 150 ms.
    const typed = ['confírmed 4242', 'C4242@EXAMPLE', 'zzz', 'Ç'];
    const keystrokes: number[] = [];
    for (const word of typed) {
      for (let i = 1; i <= word.length; i++) {
        const q = encodeURIComponent(word.slice(0, i));
        t0 = performance.now();
        await api('GET', `/v1/events/${listEvent.id}/guests?limit=50&q=${q}`);
        keystrokes.push(performance.now() - t0);
      }
    }
    const sorted = [...keystrokes].sort((a, b) => a - b);
    console.log(
      `door search among ${LIST_GUESTS} guests, ${keystrokes.length} keystrokes: p50 ${fmt(median(keystrokes))} ms, ` +
        `p95 ${fmt(sorted[Math.floor(sorted.length * 0.95)]!)} ms, max ${fmt(sorted.at(-1)!)} ms`,
    );
  } finally {
    await stop();
  }
}

await main();
