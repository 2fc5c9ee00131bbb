// The one spreadsheet reader of the imports (guests, persons): an uploaded CSV or XLSX file becomes its
// header row and data rows, each data row as field -> cell through the importer's header spellings.
// Limits are enforced while the file is read, and every refusal is a 4xx with a stable code.
import { parse as parseCsv } from 'csv-parse/sync';
import { AppError, invalidFields } from '../../http/errors.js';
import type { UploadedFile } from '../../http/upload.js';
import {
  readXlsxRows,
  SpreadsheetLimitError,
  UnreadableSpreadsheetError,
  type SpreadsheetLimit,
  type SpreadsheetLimits,
} from './xlsx.js';

/**
 * What one uploaded spreadsheet may hold besides its rows (each importer says how many), enforced while
 * it is read so a small file that expands to millions of rows or gigabytes is refused early. Generous
 * for a list of people: a few fields of at most 200 characters, a few ignored columns beside them.
 */
export const SPREADSHEET_LIMITS: Omit<SpreadsheetLimits, 'maxRows'> = {
  maxColumns: 100,
  maxCellChars: 4096,
  maxEntryBytes: 16 * 1024 * 1024,
  maxWorkbookBytes: 32 * 1024 * 1024,
};

/** Characters in one CSV row: bounds the CSV parser's buffers, far above any real row. */
export const CSV_MAX_ROW_CHARS = 64 * 1024;

const LIMIT_TEXT: Record<Exclude<SpreadsheetLimit, 'rows'>, string> = {
  columns: `Cells beyond column ${SPREADSHEET_LIMITS.maxColumns} are not accepted`,
  cellSize: `A cell holds more than ${SPREADSHEET_LIMITS.maxCellChars} characters`,
  rowSize: `A CSV row holds more than ${CSV_MAX_ROW_CHARS} characters`,
  entrySize: `A part of the XLSX file expands beyond ${SPREADSHEET_LIMITS.maxEntryBytes} bytes`,
  workbookSize: `The XLSX file expands beyond ${SPREADSHEET_LIMITS.maxWorkbookBytes} bytes`,
};

/** 400 `too_many_rows` for the row limit, 413 `payload_too_large` naming the limit for the others. */
function limitReached(error: SpreadsheetLimitError, maxDataRows: number): AppError {
  if (error.limit === 'rows') {
    return new AppError(400, 'too_many_rows', `At most ${maxDataRows} rows per file`, {
      extra: { limit: 'rows', maxRows: maxDataRows },
    });
  }
  return new AppError(413, 'payload_too_large', `${LIMIT_TEXT[error.limit]}; nothing was imported`, {
    extra: { limit: error.limit, max: error.max },
  });
}

const XLSX_TYPES = new Set([
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/octet-stream',
]);

function kindOf(file: UploadedFile): 'csv' | 'xlsx' {
  const name = file.filename.toLowerCase();
  // An XLSX file is a ZIP archive: its first bytes say so whatever its name.
  if (file.data.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    if (name.endsWith('.xlsx') || XLSX_TYPES.has(file.mimeType) || !name.endsWith('.csv')) return 'xlsx';
  }
  if (name.endsWith('.csv') || /^text\/(csv|plain)$/.test(file.mimeType)) return 'csv';
  throw new AppError(400, 'unsupported_file', 'Upload a CSV (.csv) or Excel (.xlsx) file');
}

function csvRows(data: Buffer, limits: SpreadsheetLimits): string[][] {
  let rows = 0;
  return parseCsv(data, {
    bom: true,
    delimiter: [',', ';', '\t'],
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
    max_record_size: CSV_MAX_ROW_CHARS,
    // Checked as each record is parsed, so parsing stops at the first one over a limit.
    on_record: (record: string[]) => {
      if (++rows > limits.maxRows) throw new SpreadsheetLimitError('rows', limits.maxRows);
      let last = record.length;
      while (last > 0 && record[last - 1] === '') last--;
      if (last > limits.maxColumns) throw new SpreadsheetLimitError('columns', limits.maxColumns);
      if (record.some((cell) => cell.length > limits.maxCellChars)) {
        throw new SpreadsheetLimitError('cellSize', limits.maxCellChars);
      }
      return last < record.length ? record.slice(0, last) : record;
    },
  }) as string[][];
}

/** The file's rows of cell text, the header first; a limit passed or an unreadable file is an AppError. */
async function tableOf(file: UploadedFile, maxDataRows: number): Promise<string[][]> {
  const limits: SpreadsheetLimits = { ...SPREADSHEET_LIMITS, maxRows: maxDataRows + 1 };
  const kind = kindOf(file);
  try {
    return kind === 'csv' ? csvRows(file.data, limits) : await readXlsxRows(file.data, limits);
  } catch (error) {
    if (error instanceof SpreadsheetLimitError) throw limitReached(error, maxDataRows);
    if (kind === 'csv') {
      if ((error as { code?: string }).code === 'CSV_MAX_RECORD_SIZE') {
        throw limitReached(new SpreadsheetLimitError('rowSize', CSV_MAX_ROW_CHARS), maxDataRows);
      }
      throw new AppError(400, 'unsupported_file', `The CSV file cannot be read: ${(error as Error).message}`);
    }
    if (error instanceof UnreadableSpreadsheetError || error instanceof RangeError) {
      throw new AppError(400, 'unsupported_file', 'The XLSX file cannot be read');
    }
    throw error;
  }
}

/** A header cell as a spelling key: accents, case, spaces and punctuation dropped (`E-mail` -> `email`). */
export const headerKey = (h: string) =>
  h
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

export interface SheetRecord<F extends string> {
  /** Spreadsheet row number (the header is row 1). */
  row: number;
  /** The non-empty cells of the row under a recognised header, trimmed. */
  values: Partial<Record<F, string>>;
}

export interface Sheet<F extends string> {
  /** Fields the header row names; columns under other headers are ignored. */
  fields: ReadonlySet<F>;
  records: SheetRecord<F>[];
}

/**
 * Reads an uploaded CSV (comma, semicolon or tab separated, UTF-8 with or without a BOM, RFC 4180
 * quoting) or XLSX (first sheet) file. `spellings` maps header keys (see `headerKey`) to fields; at
 * most `maxDataRows` rows below the header (400 `too_many_rows` beyond).
 */
export async function readSpreadsheet<F extends string>(
  file: UploadedFile,
  options: { maxDataRows: number; spellings: Readonly<Record<string, F>> },
): Promise<Sheet<F>> {
  const [header, ...body] = await tableOf(file, options.maxDataRows);
  if (!header) throw invalidFields([{ path: 'body.file', message: 'the file has no header row' }]);
  // The readers stop past the row limit; this is the same rule, said once more for any reader.
  if (body.length > options.maxDataRows) {
    throw limitReached(new SpreadsheetLimitError('rows', options.maxDataRows + 1), options.maxDataRows);
  }
  const columns = header.map((h) => options.spellings[headerKey(h)] ?? null);
  const records = body.map((cells, i) => {
    const values: Partial<Record<F, string>> = {};
    columns.forEach((field, c) => {
      const value = cells[c]?.trim();
      if (field && value) values[field] = value;
    });
    return { row: i + 2, values };
  });
  return { fields: new Set(columns.filter((f): f is F => f !== null)), records };
}

/** The limits as the OpenAPI description of an import route says them. */
export function spreadsheetLimitsDoc(maxDataRows: number): string {
  return (
    'Limits, enforced while the file is read (an XLSX is inflated and scanned streaming, so a small file ' +
    'that expands to millions of rows is stopped at the limit): more than ' +
    `${maxDataRows} rows with a value: 400 \`too_many_rows\`. Otherwise 413 \`payload_too_large\` ` +
    'with `limit` naming the one passed and `max` its value: `columns` (a value beyond column ' +
    `${SPREADSHEET_LIMITS.maxColumns}), \`cellSize\` (a cell over ${SPREADSHEET_LIMITS.maxCellChars} characters), ` +
    `\`entrySize\` (an XLSX part over ${SPREADSHEET_LIMITS.maxEntryBytes} bytes decompressed, whatever its ` +
    `ZIP header declares), \`workbookSize\` (the parts read over ${SPREADSHEET_LIMITS.maxWorkbookBytes} bytes ` +
    `decompressed together), \`rowSize\` (a CSV row over ${CSV_MAX_ROW_CHARS} characters). Nothing is stored then.`
  );
}

/** The refusals of `readUpload` and `readSpreadsheet`, as an import route documents them. */
export function spreadsheetErrors(maxDataRows: number) {
  return [
    { status: 400, code: 'unsupported_file', description: 'not a readable CSV or XLSX file' },
    { status: 400, code: 'too_many_rows', description: `more than ${maxDataRows} rows` },
    {
      status: 413,
      code: 'payload_too_large',
      description: 'the file is over 10 MB, or passes a limit while read (`limit` names it, `max` its value)',
    },
  ] as const;
}
