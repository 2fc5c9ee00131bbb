// Spreadsheet bombs sent to the guest import over HTTP: small uploads that expand to millions of rows,
// a huge cell, too many columns, ZIP entries that lie about their size. Each is refused with its limit
// named, fast and without the server's memory growing, and nothing is imported.
import { constants, crc32, createDeflateRaw } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { adminOf } from '../support/identity.js';

/** One ZIP entry's bytes, deflated from `head`, `unit` repeated `times`, then `tail`, a megabyte at a time. */
async function deflated(head: string, unit: string, times: number, tail: string) {
  const deflate = createDeflateRaw({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  let crc = 0;
  let size = 0;
  const put = (b: Buffer) => {
    crc = crc32(b, crc);
    size += b.length;
    deflate.write(b);
  };
  put(Buffer.from(head));
  const perBatch = Math.max(1, Math.floor((1024 * 1024) / Math.max(1, unit.length)));
  const batch = Buffer.from(unit.repeat(Math.min(perBatch, times)));
  for (let left = times; left > 0; left -= perBatch) {
    put(left >= perBatch ? batch : Buffer.from(unit.repeat(left)));
    await new Promise((resolve) => setImmediate(resolve));
  }
  put(Buffer.from(tail));
  deflate.end();
  await done;
  return { data: Buffer.concat(out), size, crc };
}

interface Entry {
  name: string;
  data: Buffer;
  size: number;
  crc: number;
  /** The uncompressed size written in the headers, when it should lie. */
  declaredSize?: number;
}

const entryOf = async (name: string, xml: string): Promise<Entry> => ({
  name,
  ...(await deflated(xml, '', 0, '')),
});

/** A minimal ZIP writer (deflate, no data descriptors): enough for a workbook. */
function zip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const header = (signature: number, size: number) => {
      const b = Buffer.alloc(size);
      b.writeUInt32LE(signature, 0);
      return b;
    };
    const local = header(0x04034b50, 30);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.declaredSize ?? e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = header(0x02014b50, 46);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(e.crc >>> 0, 16);
    dir.writeUInt32LE(e.data.length, 20);
    dir.writeUInt32LE(e.declaredSize ?? e.size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    locals.push(local, name, e.data);
    central.push(dir, name);
    offset += 30 + name.length + e.data.length;
  }
  const dirSize = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...central, end]);
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A workbook of one sheet whose XML is given; other parts may be replaced (e.g. by bombs). */
async function workbook(sheet: Entry, extra: Entry[] = [], sheetRels = '') {
  return zip([
    await entryOf(
      '[Content_Types].xml',
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    ),
    await entryOf(
      '_rels/.rels',
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ),
    await entryOf(
      'xl/workbook.xml',
      `<workbook ${NS} xmlns:r="${REL}"><sheets><sheet name="Guests" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    await entryOf(
      'xl/_rels/workbook.xml.rels',
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>${sheetRels}</Relationships>`,
    ),
    ...extra,
    sheet,
  ]);
}

const SHEET = 'xl/worksheets/sheet1.xml';
const sheetHead = `<?xml version="1.0" encoding="UTF-8"?><worksheet ${NS}><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>name</t></is></c></row>`;
const sheetTail = '</sheetData></worksheet>';
const MB = 1024 * 1024;

describe('guest import limits', () => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof adminOf>>;
  let eventId: string;
  beforeAll(async () => {
    t = await createTestApp();
    a = await adminOf(t);
    const res = await t.request('POST', '/v1/events', { headers: a.headers, body: { name: 'Gala' } });
    eventId = res.body.id;
  });
  afterAll(() => t.close());

  /** Uploads `file` and reports the answer, the time it took and how much the process grew. */
  async function send(label: string, file: Buffer, name: string) {
    const form = new FormData();
    form.append('file', new Blob([file]), name);
    const rss = process.memoryUsage().rss;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const res = await fetch(`${t.url}/v1/events/${eventId}/guests/import`, {
      method: 'POST',
      headers: a.headers,
      body: form,
    });
    const body = (await res.json()) as Record<string, unknown>;
    const ms = performance.now() - started;
    const grewMb = (process.memoryUsage().rss - rss) / MB;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    console.log(
      `${label}: ${file.length} bytes -> ${res.status} ${String(body.code)} ${String(body.limit)} in ${ms.toFixed(0)} ms (CPU ${cpuMs.toFixed(0)} ms), rss +${grewMb.toFixed(1)} MB`,
    );
    // Generous against a loaded machine: the answer comes well within a second on an idle one.
    expect(ms).toBeLessThan(3000);
    expect(grewMb).toBeLessThan(100);
    expect(await t.deps.db.prisma.guest.count({ where: { eventId } })).toBe(0);
    return { status: res.status, body };
  }

  it('imports a workbook from the same ZIP writer that stays within the limits', async () => {
    const rows =
      '<row r="2"><c r="A2" t="inlineStr"><is><t>Ana &amp; Alves</t></is></c><c r="B2" t="inlineStr"><is><t>ana@example.com</t></is></c></row>' +
      '<row r="3"><c r="A3" t="inlineStr"><is><t>Bruno Braga</t></is></c></row>';
    const header = sheetHead.replace(
      '</t></is></c></row>',
      '</t></is></c><c r="B1" t="inlineStr"><is><t>email</t></is></c></row>',
    );
    const file = await workbook(await entryOf(SHEET, `${header}${rows}${sheetTail}`));
    const form = new FormData();
    form.append('file', new Blob([file]), 'ok.xlsx');
    const res = await fetch(`${t.url}/v1/events/${eventId}/guests/import`, {
      method: 'POST',
      headers: a.headers,
      body: form,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ created: 2, failed: 0 });
    const guests = await t.deps.db.prisma.guest.findMany({ where: { eventId }, orderBy: { name: 'asc' } });
    expect(guests.map((g) => [g.name, g.email])).toEqual([
      ['Ana & Alves', 'ana@example.com'],
      ['Bruno Braga', null],
    ]);
    await t.deps.db.prisma.guest.deleteMany({ where: { eventId } });
  });

  const twoMillionRows = () => deflated(sheetHead, '<row><c><v>1</v></c></row>', 2_000_000, sheetTail);

  it('refuses an XLSX of 2 million tiny rows with 413 payload_too_large (entrySize) before inflating it', async () => {
    const file = await workbook({ name: SHEET, ...(await twoMillionRows()) });
    expect(file.length).toBeLessThan(1 * MB);
    const res = await send('2M rows', file, 'rows.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'entrySize', max: 16 * MB });
  }, 60_000);

  it('stops reading 2 million tiny rows that declare 1 KB at 400 too_many_rows', async () => {
    const file = await workbook({ name: SHEET, ...(await twoMillionRows()), declaredSize: 1024 });
    const res = await send('2M rows, size hidden', file, 'rows.xlsx');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'too_many_rows', limit: 'rows', maxRows: 20_000 });
  }, 60_000);

  it('refuses an XLSX cell of 10 million characters with 413 payload_too_large (cellSize)', async () => {
    const sheet = await deflated(
      `${sheetHead}<row><c t="inlineStr"><is><t>`,
      'x',
      10_000_000,
      `</t></is></c></row>${sheetTail}`,
    );
    const res = await send('huge cell', await workbook({ name: SHEET, ...sheet }), 'cell.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'cellSize', max: 4096 });
    expect(res.body.detail).toMatch(/4096 characters/);
  }, 60_000);

  it('refuses a shared string of 10 million characters with 413 payload_too_large (cellSize)', async () => {
    const strings = await deflated(`<sst ${NS}><si><t>`, 'y', 10_000_000, '</t></si></sst>');
    const sheet = await entryOf(SHEET, `${sheetHead}<row><c t="s"><v>0</v></c></row>${sheetTail}`);
    const file = await workbook(
      sheet,
      [{ name: 'xl/sharedStrings.xml', ...strings }],
      `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`,
    );
    const res = await send('huge shared string', file, 'strings.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'cellSize' });
  }, 60_000);

  it('refuses an XLSX with a cell beyond column 100 with 413 payload_too_large (columns)', async () => {
    const sheet = await deflated(
      sheetHead,
      '<row><c r="A2"><v>1</v></c><c r="XFD2"><v>2</v></c></row>',
      1,
      sheetTail,
    );
    const res = await send('column XFD', await workbook({ name: SHEET, ...sheet }), 'wide.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'columns', max: 100 });
    const unreferenced = await deflated(
      `${sheetHead}<row>`,
      '<c><v>1</v></c>',
      1_000_000,
      `</row>${sheetTail}`,
    );
    const res2 = await send(
      '1M cells in a row',
      await workbook({ name: SHEET, ...unreferenced }),
      'wide.xlsx',
    );
    expect(res2.body).toMatchObject({ code: 'payload_too_large', limit: 'columns' });
  }, 60_000);

  it('stops inflating a sheet that declares 1 KB and expands to 64 MB at 413 payload_too_large (entrySize)', async () => {
    const sheet = await deflated(sheetHead, ' '.repeat(1024), 64 * 1024, sheetTail);
    const file = await workbook({ name: SHEET, ...sheet, declaredSize: 1024 });
    const res = await send('lying 64 MB sheet', file, 'lie.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'entrySize', max: 16 * MB });
  }, 60_000);

  it('refuses a part that declares more than the entry limit before inflating it (entrySize)', async () => {
    const sheet = await deflated(sheetHead, ' '.repeat(1024), 20 * 1024, sheetTail);
    const res = await send('honest 20 MB sheet', await workbook({ name: SHEET, ...sheet }), 'big.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'entrySize' });
  }, 60_000);

  it('refuses parts that together expand beyond the workbook limit with 413 payload_too_large (workbookSize)', async () => {
    const blank = (open: string, close: string) => deflated(open, ' '.repeat(1024), 15 * 1024, close);
    const strings = await blank(`<sst ${NS}>`, '</sst>');
    const styles = await blank(`<styleSheet ${NS}>`, '</styleSheet>');
    const sheet = await blank(sheetHead, sheetTail);
    const file = await workbook(
      { name: SHEET, ...sheet },
      [
        { name: 'xl/sharedStrings.xml', ...strings, declaredSize: 100 },
        { name: 'xl/styles.xml', ...styles, declaredSize: 100 },
      ],
      `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>` +
        `<Relationship Id="rId3" Type="${REL}/styles" Target="styles.xml"/>`,
    );
    const res = await send('3 x 15 MB parts', file, 'parts.xlsx');
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', limit: 'workbookSize', max: 32 * MB });
  }, 60_000);

  it('reads a table of 900,000 shared strings (just under the entry limit) without the memory growing by 100 MB', async () => {
    const strings = await deflated(`<sst ${NS}>`, '<si><t>ab</t></si>', 900_000, '</sst>');
    const sheet = await entryOf(SHEET, `${sheetHead}${sheetTail}`);
    const file = await workbook(
      sheet,
      [{ name: 'xl/sharedStrings.xml', ...strings }],
      `<Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>`,
    );
    const res = await send('900k shared strings', file, 'strings.xlsx');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 0, failed: 0 });
  }, 60_000);

  it('refuses a CSV of 2 million lines with 400 too_many_rows', async () => {
    const res = await send('2M CSV lines', Buffer.from(`name\n${'a\n'.repeat(2_000_000)}`), 'rows.csv');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'too_many_rows', limit: 'rows' });
  }, 60_000);

  it('refuses a CSV row of a million columns and a CSV cell of 5 million characters with 413 payload_too_large', async () => {
    const wide = await send('1M CSV columns', Buffer.from(`name\n${'a,'.repeat(1_000_000)}\n`), 'wide.csv');
    expect(wide.status).toBe(413);
    expect(wide.body).toMatchObject({ code: 'payload_too_large', limit: 'rowSize', max: 65_536 });
    const cols = await send('200 CSV columns', Buffer.from(`name\n${'a,'.repeat(200)}\n`), 'cols.csv');
    expect(cols.status).toBe(413);
    expect(cols.body).toMatchObject({ code: 'payload_too_large', limit: 'columns', max: 100 });
    const cell = await send('5M-char CSV cell', Buffer.from(`name\n${'b'.repeat(5_000_000)}\n`), 'cell.csv');
    expect(cell.status).toBe(413);
    expect(cell.body).toMatchObject({ code: 'payload_too_large', limit: 'rowSize' });
    const longCell = await send('5000-char CSV cell', Buffer.from(`name\n${'c'.repeat(5000)}\n`), 'cell.csv');
    expect(longCell.status).toBe(413);
    expect(longCell.body).toMatchObject({ code: 'payload_too_large', limit: 'cellSize', max: 4096 });
  }, 60_000);
});
