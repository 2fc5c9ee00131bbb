// Reads the first sheet of an XLSX file as rows of cell text, streaming: each ZIP entry is inflated a chunk
// at a time and scanned as it comes, so the size, row, column and cell limits stop a spreadsheet bomb
// while it is read, never after it has been inflated. Only the parts needed for cell text are opened
// (workbook, its relationships, shared strings, styles for dates, the first sheet).
import { StringDecoder } from 'node:string_decoder';
import { createInflateRaw } from 'node:zlib';

export interface SpreadsheetLimits {
  /** Rows with at least one non-empty cell, the header included. */
  maxRows: number;
  /** Highest column (1 = A) holding a non-empty cell. */
  maxColumns: number;
  /** Characters in one cell. */
  maxCellChars: number;
  /** Decompressed bytes of one ZIP entry. */
  maxEntryBytes: number;
  /** Decompressed bytes of all entries read, together. */
  maxWorkbookBytes: number;
}

/** `rowSize` is CSV's: the characters of one row, which bounds its parser's buffers. */
export type SpreadsheetLimit = 'rows' | 'columns' | 'cellSize' | 'rowSize' | 'entrySize' | 'workbookSize';

/** A limit was reached: reading stopped there. */
export class SpreadsheetLimitError extends Error {
  constructor(
    readonly limit: SpreadsheetLimit,
    readonly max: number,
  ) {
    super(`spreadsheet limit ${limit} (${max}) reached`);
    this.name = 'SpreadsheetLimitError';
  }
}

/** Not a ZIP/XLSX file this reader understands. */
export class UnreadableSpreadsheetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableSpreadsheetError';
  }
}

const unreadable = (why: string) => new UnreadableSpreadsheetError(why);

// ---------------------------------------------------------------------------------------------------
// ZIP: the central directory tells where each entry is; nothing is inflated here.

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  declaredSize: number;
  localHeaderOffset: number;
}

const MAX_ZIP_ENTRIES = 10_000;

function zipEntries(data: Buffer): Map<string, ZipEntry> {
  // The end-of-central-directory record sits in the last 22 bytes plus an optional comment (< 64 KiB).
  let eocd = -1;
  for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 0xffff); i--) {
    if (data.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw unreadable('no ZIP central directory');
  const count = data.readUInt16LE(eocd + 10);
  const dirOffset = data.readUInt32LE(eocd + 16);
  if (count === 0xffff || dirOffset === 0xffffffff) throw unreadable('ZIP64 archives are not supported');
  if (count > MAX_ZIP_ENTRIES) throw unreadable(`more than ${MAX_ZIP_ENTRIES} ZIP entries`);
  const entries = new Map<string, ZipEntry>();
  let at = dirOffset;
  for (let n = 0; n < count; n++) {
    if (at + 46 > data.length || data.readUInt32LE(at) !== 0x02014b50)
      throw unreadable('broken ZIP directory');
    const nameLength = data.readUInt16LE(at + 28);
    const extraLength = data.readUInt16LE(at + 30);
    const commentLength = data.readUInt16LE(at + 32);
    const name = data.toString('utf8', at + 46, at + 46 + nameLength);
    entries.set(name.replace(/\\/g, '/').toLowerCase(), {
      name,
      method: data.readUInt16LE(at + 10),
      compressedSize: data.readUInt32LE(at + 20),
      declaredSize: data.readUInt32LE(at + 24),
      localHeaderOffset: data.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

function compressedBytes(data: Buffer, entry: ZipEntry): Buffer {
  const at = entry.localHeaderOffset;
  if (at + 30 > data.length || data.readUInt32LE(at) !== 0x04034b50) throw unreadable('broken ZIP entry');
  const start = at + 30 + data.readUInt16LE(at + 26) + data.readUInt16LE(at + 28);
  const end = start + entry.compressedSize;
  if (end > data.length) throw unreadable('truncated ZIP entry');
  return data.subarray(start, end);
}

/** Decompressed bytes counted across every entry read from one workbook. */
interface Budget {
  used: number;
}

/**
 * Inflates one entry a chunk at a time into `sink`, stopping at the entry and workbook limits, whatever
 * the entry declares about its size.
 */
async function readEntry(
  data: Buffer,
  entry: ZipEntry,
  limits: SpreadsheetLimits,
  budget: Budget,
  sink: (text: string) => void,
): Promise<void> {
  // An honest declaration over a limit is refused before inflating anything.
  if (entry.declaredSize > limits.maxEntryBytes) {
    throw new SpreadsheetLimitError('entrySize', limits.maxEntryBytes);
  }
  if (budget.used + entry.declaredSize > limits.maxWorkbookBytes) {
    throw new SpreadsheetLimitError('workbookSize', limits.maxWorkbookBytes);
  }
  const raw = compressedBytes(data, entry);
  const decoder = new StringDecoder('utf8');
  let size = 0;
  const take = (chunk: Buffer) => {
    size += chunk.length;
    budget.used += chunk.length;
    if (size > limits.maxEntryBytes) throw new SpreadsheetLimitError('entrySize', limits.maxEntryBytes);
    if (budget.used > limits.maxWorkbookBytes) {
      throw new SpreadsheetLimitError('workbookSize', limits.maxWorkbookBytes);
    }
    sink(decoder.write(chunk));
  };
  if (entry.method === 0) {
    for (let i = 0; i < raw.length; i += 64 * 1024) take(raw.subarray(i, i + 64 * 1024));
  } else if (entry.method === 8) {
    const inflate = createInflateRaw({ chunkSize: 64 * 1024 });
    inflate.end(raw);
    try {
      for await (const chunk of inflate) take(chunk as Buffer);
    } catch (error) {
      if (error instanceof SpreadsheetLimitError || error instanceof UnreadableSpreadsheetError) throw error;
      throw unreadable(`${entry.name} cannot be inflated`);
    } finally {
      inflate.destroy();
    }
  } else {
    throw unreadable(`${entry.name} uses an unsupported ZIP compression method`);
  }
  sink(decoder.end());
}

// ---------------------------------------------------------------------------------------------------
// XML: a scanner for the small, regular subset SpreadsheetML uses (elements, attributes, text, entities,
// CDATA, comments, declarations). It keeps only an unfinished tag between chunks, and hands text on in
// pieces, so no single element can make it buffer more than the tag limit.

const MAX_TAG_CHARS = 64 * 1024;

interface XmlHandler {
  open(name: string, attrs: Record<string, string>, selfClosing: boolean): void;
  close(name: string): void;
  text(text: string): void;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref] ?? whole;
    const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** Local name: `x:row` and `row` are the same element. */
const localName = (qname: string) => qname.slice(qname.indexOf(':') + 1);

const ATTR = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function createXmlScanner(handler: XmlHandler) {
  let pending = '';
  // Text is handed on in pieces; an entity cut by a chunk boundary waits for the next piece.
  const emitText = (text: string, final: boolean) => {
    if (text.length === 0) return '';
    const amp = final ? -1 : text.lastIndexOf('&');
    if (amp >= 0 && !text.includes(';', amp) && text.length - amp < 12) {
      handler.text(decodeEntities(text.slice(0, amp)));
      return text.slice(amp);
    }
    handler.text(decodeEntities(text));
    return '';
  };
  /** Scans `s`, leaving an unfinished tag or a cut entity in `pending`. */
  const scan = (s: string) => {
    let at = 0;
    while (at < s.length) {
      const lt = s.indexOf('<', at);
      if (lt < 0) {
        pending = emitText(s.slice(at), false);
        return;
      }
      if (lt > at) handler.text(decodeEntities(s.slice(at, lt)));
      let end: number;
      if (s.startsWith('<![CDATA[', lt)) {
        end = s.indexOf(']]>', lt);
        if (end >= 0) handler.text(s.slice(lt + 9, end));
        end = end < 0 ? -1 : end + 2;
      } else if (s.startsWith('<!--', lt)) {
        end = s.indexOf('-->', lt);
        end = end < 0 ? -1 : end + 2;
      } else {
        end = s.indexOf('>', lt);
        if (end >= 0 && s[lt + 1] !== '?' && s[lt + 1] !== '!') element(s.slice(lt + 1, end));
      }
      if (end < 0) {
        // An unfinished tag (or CDATA, comment) waits for the next chunk, up to a bound.
        pending = s.slice(lt);
        if (pending.length > MAX_TAG_CHARS) throw unreadable('an XML tag longer than 64 KiB');
        return;
      }
      at = end + 1;
    }
  };
  const element = (body: string) => {
    if (body[0] === '/') {
      handler.close(localName(body.slice(1).trim()));
      return;
    }
    const selfClosing = body.endsWith('/');
    const inner = selfClosing ? body.slice(0, -1) : body;
    let space = -1;
    for (let i = 0; i < inner.length; i++) {
      const c = inner.charCodeAt(i);
      if (c === 32 || c === 10 || c === 9 || c === 13) {
        space = i;
        break;
      }
    }
    const name = localName(space < 0 ? inner : inner.slice(0, space));
    const attrs: Record<string, string> = {};
    if (space >= 0) {
      // exec on the one pattern: matchAll would compile a copy of it for every tag.
      ATTR.lastIndex = space;
      for (let m = ATTR.exec(inner); m; m = ATTR.exec(inner)) {
        attrs[localName(m[1]!)] = decodeEntities(m[2] ?? m[3] ?? '');
      }
    }
    handler.open(name, attrs, selfClosing);
    if (selfClosing) handler.close(name);
  };
  return {
    write(chunk: string) {
      // What is left of the last chunk is finished with the head of this one, scanned on its own: a chunk
      // glued to it (a cons string) makes every indexOf slow.
      while (pending !== '' && chunk !== '') {
        const gt = chunk.indexOf('>');
        const head = pending + (gt < 0 ? chunk : chunk.slice(0, gt + 1));
        chunk = gt < 0 ? '' : chunk.slice(gt + 1);
        pending = '';
        scan(head);
      }
      scan(chunk);
    },
    end() {
      if (pending.startsWith('<')) throw unreadable('the XML ends inside a tag');
      emitText(pending, true);
      pending = '';
    },
  };
}

async function scanEntry(
  data: Buffer,
  entry: ZipEntry,
  limits: SpreadsheetLimits,
  budget: Budget,
  handler: XmlHandler,
): Promise<void> {
  const scanner = createXmlScanner(handler);
  await readEntry(data, entry, limits, budget, (text) => scanner.write(text));
  scanner.end();
}

// ---------------------------------------------------------------------------------------------------
// SpreadsheetML

/** Collects the text of one element kind into a string, refusing it past the cell limit. */
function cellTextCollector(limits: SpreadsheetLimits) {
  let text = '';
  return {
    add(piece: string) {
      if (text.length + piece.length > limits.maxCellChars) {
        throw new SpreadsheetLimitError('cellSize', limits.maxCellChars);
      }
      text += piece;
    },
    take() {
      const t = text;
      text = '';
      return t;
    },
  };
}

/** `xl/worksheets/sheet1.xml` from a relationship target relative to `base` (a part's folder). */
function resolvePart(base: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : `${base}${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.' && p !== '') out.push(p);
  }
  return out.join('/').toLowerCase();
}

function relationships(
  data: Buffer,
  entries: Map<string, ZipEntry>,
  path: string,
  limits: SpreadsheetLimits,
  budget: Budget,
): Promise<Map<string, { type: string; target: string }>> {
  const rels = new Map<string, { type: string; target: string }>();
  const entry = entries.get(path);
  if (!entry) return Promise.resolve(rels);
  return scanEntry(data, entry, limits, budget, {
    open(name, attrs) {
      if (name === 'Relationship' && attrs.Id && attrs.Target) {
        rels.set(attrs.Id, { type: attrs.Type ?? '', target: attrs.Target });
      }
    },
    close() {},
    text() {},
  }).then(() => rels);
}

// Built-in number formats that show a date or a time.
const DATE_FORMAT_IDS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54,
  55, 56, 57, 58,
]);

const isDateFormatCode = (code: string) =>
  /[ymdhs]/i.test(
    code
      .replace(/"[^"]*"/g, '')
      .replace(/\[[^\]]*\]/g, '')
      .replace(/\\./g, '')
      .replace(/General/gi, ''),
  );

/** For each cell style (`s` attribute), whether it shows a date. */
async function dateStyles(
  data: Buffer,
  entry: ZipEntry | undefined,
  limits: SpreadsheetLimits,
  budget: Budget,
): Promise<boolean[]> {
  const styles: boolean[] = [];
  if (!entry) return styles;
  const customDates = new Set<number>();
  let inCellXfs = false;
  await scanEntry(data, entry, limits, budget, {
    open(name, attrs) {
      if (name === 'numFmt' && isDateFormatCode(attrs.formatCode ?? ''))
        customDates.add(Number(attrs.numFmtId));
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs) {
        const id = Number(attrs.numFmtId ?? 0);
        styles.push(DATE_FORMAT_IDS.has(id) || customDates.has(id));
      }
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
    text() {},
  });
  return styles;
}

async function sharedStrings(
  data: Buffer,
  entry: ZipEntry | undefined,
  limits: SpreadsheetLimits,
  budget: Budget,
): Promise<string[]> {
  const strings: string[] = [];
  if (!entry) return strings;
  const text = cellTextCollector(limits);
  // Phonetic runs (`rPh`) are reading aids, not part of the string.
  let inString = false;
  let inPhonetic = false;
  let inT = false;
  await scanEntry(data, entry, limits, budget, {
    open(name) {
      if (name === 'si') inString = true;
      else if (name === 'rPh') inPhonetic = true;
      else if (name === 't') inT = inString && !inPhonetic;
    },
    close(name) {
      if (name === 'si') {
        strings.push(text.take());
        inString = false;
      } else if (name === 'rPh') inPhonetic = false;
      else if (name === 't') inT = false;
    },
    text(t) {
      if (inT) text.add(t);
    },
  });
  return strings;
}

/** Column number of a cell reference: `C12` -> 3. */
function columnOf(ref: string): number {
  let n = 0;
  for (const ch of ref) {
    const c = ch.charCodeAt(0);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n;
}

function excelDate(serial: number, date1904: boolean): string {
  const ms = Math.round((serial - (date1904 ? 24107 : 25569)) * 86_400_000);
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(serial) : date.toISOString().slice(0, 10);
}

/**
 * The non-empty rows of the first sheet, each as its cells' text (trimmed; missing cells are ''), in
 * order. Throws `SpreadsheetLimitError` the moment a limit is passed, `UnreadableSpreadsheetError` for
 * anything that is not a readable XLSX file.
 */
export async function readXlsxRows(data: Buffer, limits: SpreadsheetLimits): Promise<string[][]> {
  const entries = zipEntries(data);
  const budget: Budget = { used: 0 };

  const rootRels = await relationships(data, entries, '_rels/.rels', limits, budget);
  const office = [...rootRels.values()].find((r) => r.type.endsWith('/officeDocument'));
  const workbookPath = office ? resolvePart('', office.target) : 'xl/workbook.xml';
  const workbook = entries.get(workbookPath);
  if (!workbook) throw unreadable('no workbook in the file');
  const base = workbookPath.slice(0, workbookPath.lastIndexOf('/') + 1);

  let firstSheetRel: string | undefined;
  let date1904 = false;
  await scanEntry(data, workbook, limits, budget, {
    open(name, attrs) {
      if (name === 'sheet' && firstSheetRel === undefined) firstSheetRel = attrs.id ?? '';
      else if (name === 'workbookPr') date1904 = attrs.date1904 === '1' || attrs.date1904 === 'true';
    },
    close() {},
    text() {},
  });
  if (firstSheetRel === undefined) return [];
  const rels = await relationships(
    data,
    entries,
    `${base}_rels/${workbookPath.slice(base.length)}.rels`,
    limits,
    budget,
  );
  const byType = (suffix: string) => {
    const rel = [...rels.values()].find((r) => r.type.endsWith(suffix));
    return rel ? entries.get(resolvePart(base, rel.target)) : undefined;
  };
  const sheetRel = rels.get(firstSheetRel);
  const sheet = sheetRel ? entries.get(resolvePart(base, sheetRel.target)) : undefined;
  if (!sheet) throw unreadable('the first sheet is missing');

  const strings = await sharedStrings(data, byType('/sharedStrings'), limits, budget);
  const dates = await dateStyles(data, byType('/styles'), limits, budget);

  const rows: string[][] = [];
  let cells: string[] = [];
  let cell: { column: number; type: string; style: number } | null = null;
  let lastColumn = 0;
  let inValue = false;
  let inInline = false;
  let inInlineT = false;
  let inPhonetic = false;
  const value = cellTextCollector(limits);
  const inline = cellTextCollector(limits);

  const cellText = (type: string, style: number, v: string, is: string): string => {
    switch (type) {
      case 'inlineStr':
        return is;
      case 's':
        return strings[Number(v)] ?? '';
      case 'b':
        return v === '1' ? 'true' : v === '0' ? 'false' : v;
      case 'e':
        return '';
      case 'str':
        return v;
      default: {
        if (v === '') return '';
        const n = Number(v);
        if (Number.isNaN(n)) return v;
        return dates[style] ? excelDate(n, date1904) : String(n);
      }
    }
  };

  await scanEntry(data, sheet, limits, budget, {
    open(name, attrs) {
      if (name === 'row') {
        cells = [];
        lastColumn = 0;
      } else if (name === 'c') {
        // A cell without a reference follows the one before it.
        const column = attrs.r ? columnOf(attrs.r) : lastColumn + 1;
        lastColumn = column;
        cell = { column, type: attrs.t ?? 'n', style: Number(attrs.s ?? 0) };
      } else if (name === 'v') inValue = cell !== null;
      else if (name === 'is') inInline = cell !== null;
      else if (name === 'rPh') inPhonetic = true;
      else if (name === 't') inInlineT = inInline && !inPhonetic;
    },
    close(name) {
      if (name === 'v') inValue = false;
      else if (name === 't') inInlineT = false;
      else if (name === 'rPh') inPhonetic = false;
      else if (name === 'is') inInline = false;
      else if (name === 'c' && cell) {
        const text = cellText(cell.type, cell.style, value.take(), inline.take()).trim();
        if (text !== '') {
          if (cell.column > limits.maxColumns) throw new SpreadsheetLimitError('columns', limits.maxColumns);
          if (text.length > limits.maxCellChars)
            throw new SpreadsheetLimitError('cellSize', limits.maxCellChars);
          while (cells.length < cell.column - 1) cells.push('');
          cells[cell.column - 1] = text;
        }
        cell = null;
      } else if (name === 'row') {
        if (cells.length > 0) {
          if (rows.length >= limits.maxRows) throw new SpreadsheetLimitError('rows', limits.maxRows);
          rows.push(cells);
        }
        cells = [];
      }
    },
    text(t) {
      if (inValue) value.add(t);
      else if (inInlineT) inline.add(t);
    },
  });
  return rows;
}
