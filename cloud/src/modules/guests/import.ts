// Guest import: one uploaded spreadsheet (multipart field `file`, CSV or XLSX), a header row mapped to
// guest fields, each row checked on its own and reported. Rows are written in chunks, each in a short
// transaction under the event's lock, so an import of thousands never holds the lock for long.
import busboy from 'busboy';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Request } from 'express';
import { GUEST_IMPORT_MAX_ROWS, GuestFields, type z } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError, invalidFields } from '../../http/errors.js';
import { toFieldErrors } from '../../http/route.js';
import { newId } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { findEvent, type AdminContext } from '../events/service.js';
import { lockEvent, newGuestTokens } from './service.js';
import {
  readXlsxRows,
  SpreadsheetLimitError,
  UnreadableSpreadsheetError,
  type SpreadsheetLimit,
  type SpreadsheetLimits,
} from './xlsx.js';

export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/**
 * What one uploaded spreadsheet may hold, enforced while it is read so a small file that expands to
 * millions of rows or gigabytes is refused early. Generous for a guest list: 5 fields of at most 200
 * characters, a few ignored columns beside them.
 */
export const SPREADSHEET_LIMITS: SpreadsheetLimits = {
  maxRows: GUEST_IMPORT_MAX_ROWS + 1,
  maxColumns: 100,
  maxCellChars: 4096,
  maxEntryBytes: 16 * 1024 * 1024,
  maxWorkbookBytes: 32 * 1024 * 1024,
};

/** Characters in one CSV row: bounds the CSV parser's buffers, far above any real guest row. */
export const CSV_MAX_ROW_CHARS = 64 * 1024;

const LIMIT_TEXT: Record<Exclude<SpreadsheetLimit, 'rows'>, string> = {
  columns: `Cells beyond column ${SPREADSHEET_LIMITS.maxColumns} are not accepted`,
  cellSize: `A cell holds more than ${SPREADSHEET_LIMITS.maxCellChars} characters`,
  rowSize: `A CSV row holds more than ${CSV_MAX_ROW_CHARS} characters`,
  entrySize: `A part of the XLSX file expands beyond ${SPREADSHEET_LIMITS.maxEntryBytes} bytes`,
  workbookSize: `The XLSX file expands beyond ${SPREADSHEET_LIMITS.maxWorkbookBytes} bytes`,
};

/** 400 `too_many_rows` for the row limit, 413 `payload_too_large` naming the limit for the others. */
function limitReached(error: SpreadsheetLimitError): AppError {
  if (error.limit === 'rows') {
    return new AppError(400, 'too_many_rows', `At most ${GUEST_IMPORT_MAX_ROWS} rows per file`, {
      extra: { limit: 'rows', maxRows: GUEST_IMPORT_MAX_ROWS },
    });
  }
  return new AppError(413, 'payload_too_large', `${LIMIT_TEXT[error.limit]}; nothing was imported`, {
    extra: { limit: error.limit, max: error.max },
  });
}

const CHUNK = 1000;

type Field = keyof z.infer<typeof GuestFields>;

/** Header spellings (lower-case, letters and digits only) -> field. */
const HEADERS: Record<string, Field> = {
  name: 'name',
  fullname: 'name',
  nome: 'name',
  nombre: 'name',
  guest: 'name',
  email: 'email',
  emailaddress: 'email',
  mail: 'email',
  phone: 'phone',
  phonenumber: 'phone',
  mobile: 'phone',
  telefone: 'phone',
  telefono: 'phone',
  document: 'document',
  documentnumber: 'document',
  documento: 'document',
  doc: 'document',
  idnumber: 'document',
  cpf: 'document',
  birthdate: 'birthDate',
  dateofbirth: 'birthDate',
  dob: 'birthDate',
  nascimento: 'birthDate',
  datanascimento: 'birthDate',
};

const headerKey = (h: string) =>
  h
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

interface Upload {
  filename: string;
  mimeType: string;
  data: Buffer;
}

/** Reads the one file of a multipart/form-data request (field `file`), refusing anything larger than the limit. */
export function readUpload(req: Request): Promise<Upload> {
  if (!req.is('multipart/form-data')) {
    return Promise.reject(
      new AppError(
        415,
        'unsupported_media_type',
        'Send the spreadsheet as multipart/form-data, field `file`',
      ),
    );
  }
  return new Promise((resolve, reject) => {
    let upload: Upload | null = null;
    let failure: AppError | null = null;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: UPLOAD_MAX_BYTES, fields: 10 } });
    } catch {
      reject(new AppError(400, 'validation_failed', 'The multipart body has no usable boundary'));
      return;
    }
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      // A body that ends inside the file destroys the file stream with an error of its own.
      stream.on('error', () => {
        failure ??= new AppError(400, 'validation_failed', 'The multipart body is malformed');
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        failure = new AppError(413, 'payload_too_large', `The file is larger than ${UPLOAD_MAX_BYTES} bytes`);
      });
      stream.on('end', () => {
        if (field === 'file' && !upload) {
          upload = { filename: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(chunks) };
        }
      });
    });
    parser.on('error', () =>
      reject(new AppError(400, 'validation_failed', 'The multipart body is malformed')),
    );
    parser.on('close', () => {
      if (failure) reject(failure);
      else if (!upload)
        reject(invalidFields([{ path: 'body.file', message: 'a file field named `file` is required' }]));
      else resolve(upload);
    });
    req.pipe(parser);
  });
}

const XLSX_TYPES = new Set([
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/octet-stream',
]);

function kindOf(upload: Upload): 'csv' | 'xlsx' {
  const name = upload.filename.toLowerCase();
  // An XLSX file is a ZIP archive: its first bytes say so whatever its name.
  if (upload.data.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) {
    if (name.endsWith('.xlsx') || XLSX_TYPES.has(upload.mimeType) || !name.endsWith('.csv')) return 'xlsx';
  }
  if (name.endsWith('.csv') || /^text\/(csv|plain)$/.test(upload.mimeType)) return 'csv';
  throw new AppError(400, 'unsupported_file', 'Upload a CSV (.csv) or Excel (.xlsx) file');
}

function csvRows(data: Buffer): string[][] {
  const limits = SPREADSHEET_LIMITS;
  let rows = 0;
  try {
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
  } catch (error) {
    if (error instanceof SpreadsheetLimitError) throw limitReached(error);
    if ((error as { code?: string }).code === 'CSV_MAX_RECORD_SIZE') {
      throw limitReached(new SpreadsheetLimitError('rowSize', CSV_MAX_ROW_CHARS));
    }
    throw new AppError(400, 'unsupported_file', `The CSV file cannot be read: ${(error as Error).message}`);
  }
}

async function xlsxRows(data: Buffer): Promise<string[][]> {
  try {
    return await readXlsxRows(data, SPREADSHEET_LIMITS);
  } catch (error) {
    if (error instanceof SpreadsheetLimitError) throw limitReached(error);
    if (error instanceof UnreadableSpreadsheetError || error instanceof RangeError) {
      throw new AppError(400, 'unsupported_file', 'The XLSX file cannot be read');
    }
    throw error;
  }
}

export interface ImportRowReport {
  row: number;
  status: 'created' | 'duplicate' | 'failed';
  guestId?: string;
  duplicateOf?: string;
  errors?: { path: string; message: string }[];
}

export function createGuestImport(deps: Pick<AppDeps, 'db' | 'clock'>) {
  const { prisma } = deps.db;

  return {
    async importFile(ctx: AdminContext, eventId: string, upload: Upload) {
      const event = await findEvent(prisma, ctx.tenantId, eventId);
      const table = kindOf(upload) === 'csv' ? csvRows(upload.data) : await xlsxRows(upload.data);
      const [header, ...body] = table;
      if (!header) throw invalidFields([{ path: 'body.file', message: 'the file has no header row' }]);
      const columns = header.map((h) => HEADERS[headerKey(h)] ?? null);
      if (!columns.includes('name')) {
        throw invalidFields([
          { path: 'body.file', message: 'the header row needs a name column (name, full name, nome)' },
        ]);
      }
      // The readers stop past the row limit; this is the same rule, said once more for any reader.
      if (body.length > GUEST_IMPORT_MAX_ROWS) {
        throw limitReached(new SpreadsheetLimitError('rows', SPREADSHEET_LIMITS.maxRows));
      }

      // What the event's list already holds, and what earlier rows of this file claimed.
      const existing = await prisma.guest.findMany({
        where: { eventId: event.id, deletedAt: null },
        select: { id: true, email: true, document: true },
      });
      const seen = new Map<string, string>();
      for (const g of existing) {
        if (g.email) seen.set(`e:${g.email.toLowerCase()}`, g.id);
        if (g.document) seen.set(`d:${g.document}`, g.id);
      }

      const reports: ImportRowReport[] = [];
      const accepted: { report: ImportRowReport; data: z.infer<typeof GuestFields> }[] = [];
      for (const [i, cells] of body.entries()) {
        const row = i + 2;
        const raw: Record<string, string> = {};
        columns.forEach((field, c) => {
          const value = cells[c]?.trim();
          if (field && value) raw[field] = value;
        });
        const parsed = GuestFields.safeParse(raw);
        if (!parsed.success) {
          reports.push({ row, status: 'failed', errors: toFieldErrors(parsed.error, `rows.${row}`) });
          continue;
        }
        const keys = [
          parsed.data.email ? `e:${parsed.data.email.toLowerCase()}` : null,
          parsed.data.document ? `d:${parsed.data.document}` : null,
        ].filter((k): k is string => k !== null);
        const repeated = keys.map((k) => seen.get(k)).find((v) => v !== undefined);
        if (repeated) {
          reports.push({ row, status: 'duplicate', duplicateOf: repeated });
          continue;
        }
        for (const k of keys) seen.set(k, `row ${row}`);
        const report: ImportRowReport = { row, status: 'created', guestId: newId() };
        reports.push(report);
        accepted.push({ report, data: parsed.data });
      }

      for (let startAt = 0; startAt < accepted.length; startAt += CHUNK) {
        const chunk = accepted.slice(startAt, startAt + CHUNK);
        const now = deps.clock.now();
        try {
          await prisma.$transaction(async (tx) => {
            // Each chunk re-checks the event (it may have been deleted meanwhile) under its lock.
            await lockEvent(tx, ctx.tenantId, event.id);
            // One statement with one array per column: Prisma's createMany binds a parameter per cell.
            const col = <T>(pick: (r: (typeof chunk)[number]) => T) => chunk.map(pick);
            const tokens = chunk.map(() => newGuestTokens());
            await tx.$executeRaw`
              INSERT INTO guests (id, tenant_id, event_id, name, email, phone, document, birth_date, status,
                                  guest_token, link_token, created_at, updated_at)
              SELECT id, ${ctx.tenantId}, ${event.id}, name, email, phone, document, birth_date, 'pending',
                     guest_token, link_token, ${now}, ${now}
                FROM unnest(${col((r) => r.report.guestId!)}::text[], ${col((r) => r.data.name)}::text[],
                            ${col((r) => r.data.email ?? null)}::text[], ${col((r) => r.data.phone ?? null)}::text[],
                            ${col((r) => r.data.document ?? null)}::text[],
                            ${col((r) => r.data.birthDate ?? null)}::date[],
                            ${tokens.map((t) => t.guestToken)}::text[], ${tokens.map((t) => t.linkToken)}::text[])
                     WITH ORDINALITY AS r(id, name, email, phone, document, birth_date, guest_token, link_token, n)
               ORDER BY n`;
          });
        } catch (error) {
          if (error instanceof AppError && error.status === 404) {
            for (const { report } of accepted.slice(startAt)) {
              report.status = 'failed';
              delete report.guestId;
              report.errors = [
                { path: `rows.${report.row}`, message: 'the event was deleted during the import' },
              ];
            }
            break;
          }
          throw error;
        }
      }

      const count = (s: ImportRowReport['status']) => reports.filter((r) => r.status === s).length;
      const summary = { created: count('created'), duplicates: count('duplicate'), failed: count('failed') };
      await recordAudit(prisma, {
        tenantId: ctx.tenantId,
        actorType: ctx.actorType,
        actorId: ctx.actorId,
        action: 'guest.imported',
        targetType: 'event',
        targetId: event.id,
        metadata: { rows: body.length, ...summary, file: upload.filename.slice(0, 200) },
        ip: ctx.ip,
        requestId: ctx.requestId,
      });
      return { ...summary, results: reports };
    },
  };
}
