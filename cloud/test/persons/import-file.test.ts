// POST /v1/persons/import with a spreadsheet uploaded over real HTTP (multipart/form-data, field `file`):
// real CSV and XLSX files read by the server's one spreadsheet reader (the guest import's), their headers
// mapped to person fields, the same per-row report as JSON rows, the 500-row limit and the refusals.
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { integratorOf } from './support.js';

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

afterAll(async () => {
  await app?.close();
});

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Posts a multipart body with `file` (or, with `field`, another field name) to the import. */
async function upload(
  headers: Record<string, string>,
  file: Blob,
  name: string,
  options: { field?: string; extraHeaders?: Record<string, string> } = {},
) {
  const form = new FormData();
  form.append(options.field ?? 'file', file, name);
  const res = await fetch(`${app.url}/v1/persons/import`, {
    method: 'POST',
    headers: { ...headers, ...options.extraHeaders },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as any, text }; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert on shapes
}

const csv = (text: string | Buffer) => new Blob([text], { type: 'text/csv' });

async function personsOf(tenantId: string) {
  return app.deps.db.prisma.person.findMany({ where: { tenantId }, orderBy: { name: 'asc' } });
}

describe('POST /v1/persons/import with a CSV file', () => {
  it('maps Portuguese headers, reads a BOM and semicolons, and reports every row with its spreadsheet row', async () => {
    const org = await integratorOf(app);
    await app.request('POST', '/v1/persons/upsert', {
      headers: org.keyHeaders,
      body: { externalId: 'hr-7', name: 'Before', document: 'OLD' },
    });
    const file =
      '\uFEFFNome completo;CPF;E-mail;Telefone;Data de nascimento;Matrícula;Observações\r\n' +
      'Ana Souza;111.111.111-11;ana@example.com;+55 11 91234-5678;1990-04-30;;vip\r\n' +
      ';222;nobody@example.com;;;;\r\n' +
      'Bruno Lima;333;not-an-email;;;;\r\n' +
      'Carla Dias;444;;;;hr-7;\r\n';
    const res = await upload(org.keyHeaders, csv(file), 'persons.csv');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ created: 1, updated: 1, failed: 2 });
    expect(res.body.results).toEqual([
      { index: 0, row: 2, status: 'created', personId: expect.any(String) },
      {
        index: 1,
        row: 3,
        status: 'failed',
        errors: [{ path: 'rows.1.name', message: expect.any(String) }],
      },
      {
        index: 2,
        row: 4,
        status: 'failed',
        errors: [{ path: 'rows.2.email', message: expect.any(String) }],
      },
      { index: 3, row: 5, status: 'updated', personId: expect.any(String) },
    ]);
    const stored = await personsOf(org.tenantId);
    expect(stored).toHaveLength(2);
    expect(stored[0]).toMatchObject({
      name: 'Ana Souza',
      document: '111.111.111-11',
      email: 'ana@example.com',
      phone: '+55 11 91234-5678',
      externalId: null,
    });
    expect(stored[0]!.birthDate?.toISOString()).toBe('1990-04-30T00:00:00.000Z');
    expect(stored[1]).toMatchObject({ name: 'Carla Dias', document: '444', externalId: 'hr-7' });
  });

  it('keeps separators, doubled quotes and line breaks inside quoted cells, and reads English headers', async () => {
    const org = await integratorOf(app);
    const file =
      'name,document,externalId,email\n' +
      '"Lobo, Rita ""RL""",4,,rita@example.com\n' +
      '"two\nlines",5,,\n' +
      'Davi Rocha,"6,0",ext-6,\n' +
      '\n';
    const res = await upload(org.headers, csv(file), 'persons.csv');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ created: 3, updated: 0, failed: 0 });
    // A quoted line break is inside a cell: the third person is still spreadsheet row 4.
    expect(res.body.results.map((r: { row: number }) => r.row)).toEqual([2, 3, 4]);
    expect((await personsOf(org.tenantId)).map((p) => [p.name, p.document, p.externalId])).toEqual([
      ['Davi Rocha', '6,0', 'ext-6'],
      ['Lobo, Rita "RL"', '4', null],
      ['two\nlines', '5', null],
    ]);
  });

  it('takes exactly 500 rows and refuses 501 with 400 too_many_rows, storing nothing', async () => {
    const org = await integratorOf(app);
    const lines = (n: number, prefix: string) =>
      'name,document\n' + Array.from({ length: n }, (_, i) => `${prefix} ${i},${prefix}-${i}`).join('\n');
    const tooMany = await upload(org.keyHeaders, csv(lines(501, 'Over')), 'big.csv');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'too_many_rows', maxRows: 500, limit: 'rows' });
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(0);

    const exactly = await upload(org.keyHeaders, csv(lines(500, 'Fit')), 'fit.csv');
    expect(exactly.status, exactly.text).toBe(200);
    expect(exactly.body).toMatchObject({ created: 500, failed: 0 });
    expect(exactly.body.results.at(-1)).toMatchObject({ index: 499, row: 501, status: 'created' });
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(500);
  }, 60_000);

  it('does not replay an upload for an Idempotency-Key: each file is read (a key is for JSON rows)', async () => {
    const org = await integratorOf(app);
    const key = { 'Idempotency-Key': 'same-key-for-two-files' };
    const first = await upload(org.keyHeaders, csv('name,document\nFirst,F-1\n'), 'a.csv', {
      extraHeaders: key,
    });
    const second = await upload(org.keyHeaders, csv('name,document\nSecond,S-2\n'), 'b.csv', {
      extraHeaders: key,
    });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await personsOf(org.tenantId)).map((p) => p.name)).toEqual(['First', 'Second']);
  });
});

describe('POST /v1/persons/import with an XLSX file', () => {
  it('reads the first sheet of a real workbook: numbers, dates and links as cells', async () => {
    const org = await integratorOf(app);
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Pessoas');
    sheet.addRow(['Nome', 'Documento', 'Email', 'Date of birth', 'External ID']);
    sheet.addRow(['Duarte Dias', 12345678, 'duarte@example.com', new Date(Date.UTC(1985, 5, 15)), 'x-1']);
    sheet.addRow(['No Document', null, 'nodoc@example.com', null, null]);
    sheet.addRow([
      'Eva Esteves',
      'E-1',
      { text: 'eva@example.com', hyperlink: 'mailto:eva@example.com' },
      null,
      null,
    ]);
    book.addWorksheet('Ignored').addRow(['name', 'document']);
    const data = Buffer.from(await book.xlsx.writeBuffer());
    const res = await upload(org.keyHeaders, new Blob([data], { type: XLSX_TYPE }), 'persons.xlsx');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ created: 2, updated: 0, failed: 1 });
    expect(res.body.results[1]).toMatchObject({
      index: 1,
      row: 3,
      status: 'failed',
      errors: [{ path: 'rows.1.document' }],
    });
    const list = await app.request('GET', '/v1/persons?sort=createdAt', { headers: org.keyHeaders });
    expect(list.body.items).toMatchObject([
      {
        name: 'Duarte Dias',
        document: '12345678',
        email: 'duarte@example.com',
        birthDate: '1985-06-15',
        externalId: 'x-1',
      },
      { name: 'Eva Esteves', document: 'E-1', email: 'eva@example.com' },
    ]);
  });
});

describe('POST /v1/persons/import refusals', () => {
  it('refuses a file that is not a spreadsheet, or an unreadable XLSX, with 400 unsupported_file', async () => {
    const org = await integratorOf(app);
    const png = await upload(
      org.keyHeaders,
      new Blob([Buffer.from('\x89PNG\r\n\x1a\n')], { type: 'image/png' }),
      'photo.png',
    );
    expect(png.status).toBe(400);
    expect(png.body.code).toBe('unsupported_file');
    const broken = await upload(org.keyHeaders, new Blob([Buffer.from('PK\x03\x04garbage')]), 'x.xlsx');
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('unsupported_file');
  });

  it('refuses no file field, an empty file, a header alone and a header without document with 400 validation_failed', async () => {
    const org = await integratorOf(app);
    const cases = [
      await upload(org.keyHeaders, csv('name,document\nAna,1\n'), 'p.csv', { field: 'attachment' }),
      await upload(org.keyHeaders, csv(''), 'empty.csv'),
      await upload(org.keyHeaders, csv('name,document\n'), 'header.csv'),
      await upload(org.keyHeaders, csv('name,email\nAna,ana@example.com\n'), 'nodoc.csv'),
    ];
    expect(cases.map((c) => [c.status, c.body.code, c.body.errors?.[0]?.path])).toEqual(
      Array.from({ length: 4 }, () => [400, 'validation_failed', 'body.file']),
    );
    expect(cases[3]!.body.detail).toContain('document column');
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(0);
  });

  it('refuses a body that is neither JSON nor multipart with 415, and a malformed multipart body with 400', async () => {
    const org = await integratorOf(app);
    const raw = await app.request('POST', '/v1/persons/import', {
      headers: { ...org.keyHeaders, 'content-type': 'text/csv' },
      raw: 'name,document\nAna,1\n',
    });
    expect(raw.status).toBe(415);
    expect(raw.body.code).toBe('unsupported_media_type');
    const truncated = await app.request('POST', '/v1/persons/import', {
      headers: { ...org.keyHeaders, 'content-type': 'multipart/form-data; boundary=XyZ' },
      raw: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="p.csv"\r\n\r\nname,document\nAna,1\n',
    });
    expect(truncated.status, truncated.text).toBe(400);
    expect(truncated.body.code).toBe('validation_failed');
    expect((await app.request('GET', '/v1/health/live')).status).toBe(200);
  });

  it('refuses a file over 10 MB and a cell over 4096 characters with 413 payload_too_large', async () => {
    const org = await integratorOf(app);
    const huge = Buffer.alloc(10 * 1024 * 1024 + 1, 'a');
    const big = await upload(org.keyHeaders, csv(huge), 'huge.csv');
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    const cell = await upload(org.keyHeaders, csv(`name,document\n${'x'.repeat(4097)},1\n`), 'cell.csv');
    expect(cell.status).toBe(413);
    expect(cell.body).toMatchObject({ code: 'payload_too_large', limit: 'cellSize', max: 4096 });
    expect(await app.deps.db.prisma.person.count({ where: { tenantId: org.tenantId } })).toBe(0);
  });

  it('still takes JSON rows, and documents both request media types in the OpenAPI', async () => {
    const org = await integratorOf(app);
    const json = await app.request('POST', '/v1/persons/import', {
      headers: org.keyHeaders,
      body: { rows: [{ name: 'Json Row', document: 'J-1' }] },
    });
    expect(json.status).toBe(200);
    expect(json.body.results).toEqual([{ index: 0, status: 'created', personId: expect.any(String) }]);
    const doc = await app.request('GET', '/docs-json');
    const content = doc.body.paths['/v1/persons/import'].post.requestBody.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(content['multipart/form-data'].schema.$ref).toBe('#/components/schemas/PersonImportUpload');
    expect(content['multipart/form-data'].examples).toBeDefined();
    expect(content['application/json'].examples).toBeDefined();
  });
});
