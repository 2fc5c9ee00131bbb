// GET /v1/persons at scale over real HTTP (PGlite, or PostgreSQL with TEST_DATABASE_URL): newest first,
// a total on every page, cursor paging through more than 100 persons, search that ignores case, accents
// and a document's punctuation, and never another tenant's persons.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { integratorOf } from './support.js';

type Listed = { id: string; name: string; createdAt: string };

let app: TestApp;
let org: Awaited<ReturnType<typeof integratorOf>>;
let other: Awaited<ReturnType<typeof integratorOf>>;
let newest: Listed;

const NAMED = [
  { name: 'João Conceição', document: '123.456.789-00', email: 'joao@example.com' },
  { name: 'Márcia Lopes', document: '98765432100', email: 'MARCIA@Example.com' },
  { name: 'Ana 100% Souza', document: 'AS-1' },
];

const list = async (headers: Record<string, string>, query: string) => {
  const res = await app.request('GET', `/v1/persons?${query}`, { headers });
  expect(res.status, res.text).toBe(200);
  return res.body as { items: Listed[]; nextCursor: string | null; total: number };
};

/** Every page of `query`, followed by its cursors: the names in order and each page's total. */
async function allPages(headers: Record<string, string>, query: string) {
  const names: string[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await list(headers, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    names.push(...page.items.map((p) => p.name));
    totals.push(page.total);
    cursor = page.nextCursor;
  } while (cursor);
  return { names, totals };
}

beforeAll(async () => {
  app = await createTestApp();
  org = await integratorOf(app);
  other = await integratorOf(app);
  // 149 by import (Person 001 … Person 146 and the three named), then one more created on its own.
  const rows = [
    ...Array.from({ length: 146 }, (_, i) => ({
      name: `Person ${String(i + 1).padStart(3, '0')}`,
      document: `P-${i + 1}`,
    })),
    ...NAMED,
  ];
  const imported = await app.request('POST', '/v1/persons/import', {
    headers: org.keyHeaders,
    body: { rows },
  });
  expect(imported.status, imported.text).toBe(200);
  expect(imported.body.created).toBe(149);
  const created = await app.request('POST', '/v1/persons', {
    headers: org.keyHeaders,
    body: { name: 'Newest Person', document: 'N-1' },
  });
  expect(created.status).toBe(201);
  newest = created.body;
  // Another tenant with a João of its own.
  await app.request('POST', '/v1/persons', {
    headers: other.keyHeaders,
    body: { name: 'João Outro', document: '123.456.789-00', email: 'joao@other.example' },
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('GET /v1/persons at scale', () => {
  it('lists newest first: a person just created is the first of page one', async () => {
    const page = await list(org.keyHeaders, 'limit=10');
    expect(page.items[0]).toMatchObject({ id: newest.id, name: 'Newest Person' });
    const times = page.items.map((p) => p.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('pages through 150 persons with the cursor, each once, with the same total on every page', async () => {
    const { names, totals } = await allPages(org.keyHeaders, 'limit=40');
    expect(totals).toEqual([150, 150, 150, 150]);
    expect(names).toHaveLength(150);
    expect(new Set(names).size).toBe(150);
    expect(names[0]).toBe('Newest Person');
    expect(names.at(-1)).toBe('Person 001');
  });

  it('lists oldest first with sort=createdAt, and a cursor keeps the sort it came from', async () => {
    const first = await list(org.keyHeaders, 'limit=100&sort=createdAt');
    expect(first.items[0]?.name).toBe('Person 001');
    expect(first.total).toBe(150);
    // The second page's cursor was issued oldest first: it stays so even without `sort`.
    const second = await list(org.keyHeaders, `limit=100&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second.items).toHaveLength(50);
    expect(second.items.at(-1)?.name).toBe('Newest Person');
    expect(second.nextCursor).toBeNull();
  });

  it('finds João with "joao", "JOÃO" and "conceicao", case and accents ignored, with the total of the search', async () => {
    for (const q of ['joao', 'JOÃO', 'conceicao', 'Joao Concei']) {
      const page = await list(org.keyHeaders, `q=${encodeURIComponent(q)}`);
      expect(
        page.items.map((p) => p.name),
        q,
      ).toEqual(['João Conceição']);
      expect(page.total).toBe(1);
    }
    const marcia = await list(org.keyHeaders, 'q=marcia%40example');
    expect(marcia.items.map((p) => p.name)).toEqual(['Márcia Lopes']);
  });

  it('finds a document typed without its dots and dashes, and one stored without them typed with them', async () => {
    const bare = await list(org.keyHeaders, 'q=12345678900');
    expect(bare.items.map((p) => p.name)).toEqual(['João Conceição']);
    const dotted = await list(org.keyHeaders, `q=${encodeURIComponent('987.654.321-00')}`);
    expect(dotted.items.map((p) => p.name)).toEqual(['Márcia Lopes']);
  });

  it('reads % and _ in q as themselves, not as wildcards', async () => {
    const percent = await list(org.keyHeaders, `q=${encodeURIComponent('100%')}`);
    expect(percent.items.map((p) => p.name)).toEqual(['Ana 100% Souza']);
    expect((await list(org.keyHeaders, 'q=_')).total).toBe(0);
  });

  it('pages through a search of more than one page with its total', async () => {
    const { names, totals } = await allPages(org.keyHeaders, 'q=person&limit=60');
    expect(totals).toEqual([147, 147, 147]);
    expect(names).toHaveLength(147);
    expect(new Set(names).size).toBe(147);
  });

  it('searches the new name after an edit, and an anonymised person no longer by the old one', async () => {
    const created = await app.request('POST', '/v1/persons', {
      headers: other.keyHeaders,
      body: { name: 'Zoe Antiga', document: 'ZA-1' },
    });
    const id = created.body.id as string;
    await app.request('PATCH', `/v1/persons/${id}`, {
      headers: other.keyHeaders,
      body: { name: 'Zoë Nova' },
    });
    expect((await list(other.keyHeaders, 'q=zoe%20nova')).items.map((p) => p.id)).toEqual([id]);
    expect((await list(other.keyHeaders, 'q=antiga')).total).toBe(0);
    await app.request('DELETE', `/v1/persons/${id}/data`, { headers: other.keyHeaders });
    expect((await list(other.keyHeaders, 'q=zoe')).total).toBe(0);
  });

  it('finds a person upserted by externalId, by that externalId too', async () => {
    const up = await app.request('POST', '/v1/persons/upsert', {
      headers: other.keyHeaders,
      body: { externalId: 'HR-Ção-7', name: 'Íris Upsert', document: '1' },
    });
    expect(up.status).toBe(201);
    expect((await list(other.keyHeaders, 'q=iris')).items.map((p) => p.name)).toEqual(['Íris Upsert']);
    expect((await list(other.keyHeaders, 'q=hr-cao')).items.map((p) => p.name)).toEqual(['Íris Upsert']);
  });

  it('never lists another tenant’s persons, in a page, a search or a total', async () => {
    const joao = await list(org.keyHeaders, 'q=joao');
    expect(joao.items.map((p) => p.name)).toEqual(['João Conceição']);
    const theirs = await list(other.keyHeaders, 'q=joao');
    expect(theirs.items.map((p) => p.name)).toEqual(['João Outro']);
    expect(theirs.total).toBe(1);
    const all = await list(other.keyHeaders, 'limit=200');
    expect(all.items.map((p) => p.name)).not.toContain('João Conceição');
    expect(all.total).toBe(all.items.length);
    // Their cursor on our list reads only our persons.
    const ours = await list(
      org.keyHeaders,
      `limit=200&cursor=${encodeURIComponent((await list(other.keyHeaders, 'limit=1')).nextCursor!)}`,
    );
    expect(ours.items.every((p) => !p.name.startsWith('João Outro') && !p.name.startsWith('Íris'))).toBe(
      true,
    );
  });
});
