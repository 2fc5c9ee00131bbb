// Guest import: one uploaded spreadsheet (multipart field `file`, CSV or XLSX, read by
// infra/spreadsheet), its header row mapped to guest fields, each row checked on its own and reported. Rows are written in chunks, each in a short
// transaction under the event's lock, so an import of thousands never holds the lock for long.
import { GUEST_IMPORT_MAX_ROWS, GuestFields, type z } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { AppError, invalidFields } from '../../http/errors.js';
import { toFieldErrors } from '../../http/route.js';
import type { UploadedFile } from '../../http/upload.js';
import { newId } from '../../infra/db/index.js';
import { readSpreadsheet } from '../../infra/spreadsheet/read.js';
import { recordAudit } from '../audit/record.js';
import { findEvent, type AdminContext } from '../events/service.js';
import { lockEvent, newGuestTokens } from './service.js';

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
    async importFile(ctx: AdminContext, eventId: string, upload: UploadedFile) {
      const event = await findEvent(prisma, ctx.tenantId, eventId);
      const sheet = await readSpreadsheet(upload, { maxDataRows: GUEST_IMPORT_MAX_ROWS, spellings: HEADERS });
      if (!sheet.fields.has('name')) {
        throw invalidFields([
          { path: 'body.file', message: 'the header row needs a name column (name, full name, nome)' },
        ]);
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
      for (const { row, values } of sheet.records) {
        const parsed = GuestFields.safeParse(values);
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
        metadata: { rows: sheet.records.length, ...summary, file: upload.filename.slice(0, 200) },
        ip: ctx.ip,
        requestId: ctx.requestId,
      });
      return { ...summary, results: reports };
    },
  };
}
