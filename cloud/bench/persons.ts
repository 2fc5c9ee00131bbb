// Persons benchmark over real HTTP: the console's Persons page of a tenant with 10,000 persons, i.e.
// `GET /v1/persons` in pages of 50 with its total: the first page, every page of the cursor chain (newest
// first and oldest first), the `enrolled` filter, and search as you type (names with and without
// accents, a document with and without its punctuation, a word that matches nobody). Target (issue 25):
// each page p95 < 300 ms. PGlite in a temporary directory, or with BENCH_DATABASE_URL=postgresql://… a
// scratch database.
import os from 'node:os';
import { startBenchApp } from './bench-environment.js';

const PERSONS = Number(process.env.BENCH_PERSONS ?? 10_000);
const FIRST_PAGE_REQUESTS = 30;

// Names as a Portuguese-, Spanish- and French-speaking tenant has them: the search must fold the accents.
const FIRST_NAMES = [
  ...['João', 'Joana', 'José', 'Jorge', 'Maria', 'Márcia', 'Ana', 'Antônio', 'Inês', 'Luís'],
  ...['Sebastião', 'Conceição', 'Zoë', 'Françoise', 'Raúl', 'Ângela', 'Beatriz', 'Nuno'],
];
const LAST_NAMES = [
  ...['Silva', 'Gonçalves', 'Araújo', 'Simões', 'Magalhães', 'Lopes', 'Souza', 'Brandão'],
  ...['Assunção', 'Pereira', 'Núñez', 'Ferreira', 'Conceição', 'Castro', 'Müller'],
];
/** The document of the `g`th person, as the seeding statement writes it (`033.592.398-42` for 4242). */
const documentOf = (g: number) => {
  const digits = String((g * 7919) % 1_000_000_000).padStart(9, '0');
  return `${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6)}-${String(g % 100).padStart(2, '0')}`;
};

const fmt = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return (
    `p50 ${fmt(median(xs))} ms, p95 ${fmt(sorted[Math.floor(sorted.length * 0.95)]!)} ms, ` +
    `max ${fmt(sorted.at(-1)!)} ms`
  );
};

type PersonPage = { items: Array<{ enrolled: boolean }>; nextCursor: string | null; total: number };

async function main(): Promise<void> {
  const { database, server, prisma, tenant, auth, stop } = await startBenchApp('persons');
  console.log(`persons benchmark: ${database}, ${os.cpus().length} cores`);
  try {
    /** One request of the Persons page and how long it took, client side. */
    const listPersons = async (query: string) => {
      const send = () => fetch(`${server.url}/v1/persons?${query}`, { headers: auth });
      const t0 = performance.now();
      // A kept-alive connection the server closed while the set-up ran: one new connection.
      const res = await send().catch(send);
      if (!res.ok) throw new Error(`GET /v1/persons?${query}: ${res.status} ${await res.text()}`);
      const page = (await res.json()) as PersonPage;
      return { page, ms: performance.now() - t0 };
    };
    /** Every page of `query`, following the cursors: each page's time, the rows seen and the total. */
    const walk = async (query: string) => {
      const times: number[] = [];
      let rows = 0;
      let total = 0;
      let cursor: string | null = null;
      do {
        const { page, ms } = await listPersons(
          `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        times.push(ms);
        rows += page.items.length;
        total = page.total;
        cursor = page.nextCursor;
      } while (cursor);
      if (rows !== total) throw new Error(`${query}: ${rows} rows walked, total says ${total}`);
      return { times, rows, total };
    };

    // Set-up: persons (and their identities) written straight to the tables in one statement each, three
    // to a creation instant as a batch import leaves them (the cursor's ties by id); one in three enrolled
    // (`enrolled_at` is what the filter reads; no templates are needed for the list). The trigger
    // persons_search_text fills the folded search text as it does for the service's own inserts. No
    // ANALYZE afterwards: the service never runs one and PGlite has no autovacuum, so a real PGlite
    // tenant is planned without statistics too.
    let t0 = performance.now();
    await prisma.$executeRaw`
      INSERT INTO persons (id, tenant_id, external_id, name, document, email, phone, birth_date, enrolled_at,
                           created_at, updated_at)
      SELECT gen_random_uuid()::text, ${tenant.tenantId},
             CASE WHEN g % 2 = 0 THEN 'EXT-' || g END,
             first || ' ' || last,
             substr(digits, 1, 3) || '.' || substr(digits, 4, 3) || '.' || substr(digits, 7, 3) || '-'
               || lpad((g % 100)::text, 2, '0'),
             CASE WHEN g % 7 <> 0 THEN fold_text(first) || '.' || fold_text(last) || g || '@example.com' END,
             CASE WHEN g % 3 <> 0 THEN '+351 9' || lpad(g::text, 8, '0') END,
             CASE WHEN g % 5 <> 0 THEN date '1950-01-01' + (g * 37) % 20000 END,
             CASE WHEN g % 3 = 0 THEN created + interval '1 day' END,
             created, created
        FROM generate_series(1, ${PERSONS}::int) AS g,
             LATERAL (SELECT (${FIRST_NAMES}::text[])[1 + g % ${FIRST_NAMES.length}::int] AS first,
                             (${LAST_NAMES}::text[])[1 + (g / ${FIRST_NAMES.length}::int) % ${LAST_NAMES.length}::int]
                               AS last,
                             lpad(((g::bigint * 7919) % 1000000000)::text, 9, '0') AS digits,
                             timestamptz '2026-01-01T00:00:00Z' + (g / 3) * interval '1 minute' AS created) AS p`;
    await prisma.$executeRaw`
      INSERT INTO identities (id, tenant_id, person_id, status, created_at)
      SELECT gen_random_uuid()::text, tenant_id, id, 'active', created_at FROM persons
       WHERE tenant_id = ${tenant.tenantId}`;
    console.log(`(set-up: ${PERSONS} persons written in ${fmt(performance.now() - t0)} ms)`);

    // 1. The page as it opens: the newest 50 and the total (one unprinted warm-up request first).
    await listPersons('limit=50');
    const first: number[] = [];
    let opened: PersonPage | undefined;
    for (let i = 0; i < FIRST_PAGE_REQUESTS; i++) {
      const { page, ms } = await listPersons('limit=50');
      first.push(ms);
      opened = page;
    }
    console.log(
      `first page of 50 (newest first), ${FIRST_PAGE_REQUESTS} requests: ${spread(first)}; ` +
        `${opened!.items.length} rows, total ${opened!.total}`,
    );

    // 2. Every page of the cursor chain, both orders: the last pages are the deepest cursors.
    for (const sort of ['-createdAt', 'createdAt']) {
      t0 = performance.now();
      const { times, rows, total } = await walk(`limit=50&sort=${sort}`);
      const at = (n: number) => (times[n - 1] === undefined ? '-' : `${fmt(times[n - 1]!)} ms`);
      console.log(
        `every page of 50, sort=${sort}: ${times.length} pages, ${rows} rows (total ${total}) in ` +
          `${fmt(performance.now() - t0)} ms; per page ${spread(times)}; ` +
          `page 1 ${at(1)}, 20 ${at(20)}, 100 ${at(100)}, ${times.length} ${at(times.length)}`,
      );
    }

    // 3. The enrolled filter: every page of the enrolled, every page of the not enrolled.
    for (const enrolled of [true, false]) {
      const { times, rows, total } = await walk(`limit=50&enrolled=${enrolled}`);
      console.log(
        `enrolled=${enrolled}, every page of 50: ${times.length} pages, ${rows} rows (total ${total}); ` +
          `per page ${spread(times)}`,
      );
    }

    // 4. Search as you type: one request per keystroke (a page of 50 with its total), as the console's
    // search box sends them. A document typed with its punctuation and without; a word nobody has.
    const document = documentOf(4242);
    const typed = ['joao', 'Conceição', 'márcia araujo', document, document.replace(/\D/g, ''), 'zzz'];
    const keystrokes: number[] = [];
    const found: string[] = [];
    for (const word of typed) {
      let total = 0;
      for (let i = 1; i <= word.length; i++) {
        const { page, ms } = await listPersons(`limit=50&q=${encodeURIComponent(word.slice(0, i))}`);
        keystrokes.push(ms);
        total = page.total;
      }
      found.push(`"${word}" ${total}`);
    }
    console.log(
      `search as you type among ${PERSONS} persons, ${keystrokes.length} keystrokes: ${spread(keystrokes)}; ` +
        `totals at the last keystroke: ${found.join(', ')}`,
    );
  } finally {
    await stop();
  }
}

await main();
