// Wire types of `/v1/persons`: the person record, its list filters, upsert, batch import and the
// self-enrollment link. Biometric data (templates, images) never appears in any of them.
import { Id, PageQuery, pageOf, Text, Timestamp } from './common.js';
import { z } from './zod.js';

const Name = Text.trim().min(1).max(200).openapi({ example: 'Ana Souza' });
const Document = Text.trim()
  .min(1)
  .max(64)
  .openapi({ description: 'Personal document number, as the tenant records it.', example: '123.456.789-09' });
const ExternalId = Text.trim().min(1).max(200).openapi({
  description: 'The person’s key in the integrator’s system; unique within the tenant.',
  example: 'hr-0042',
});
const Email = z.email().max(320).openapi({ example: 'ana@example.com' });
const Phone = Text.trim().min(3).max(32).openapi({ example: '+55 11 91234-5678' });
const BirthDate = z.iso.date().openapi({ description: 'Calendar date, YYYY-MM-DD.', example: '1990-04-30' });

/** Fields of a person a caller may send on create (and on upsert/import). */
export const PersonFields = z.strictObject({
  name: Name,
  document: Document,
  externalId: ExternalId.optional(),
  email: Email.optional(),
  phone: Phone.optional(),
  birthDate: BirthDate.optional(),
});

export const CreatePersonRequest = PersonFields.openapi('CreatePersonRequest');
export type CreatePersonRequest = z.infer<typeof CreatePersonRequest>;

export const UpdatePersonRequest = z
  .strictObject({
    name: Name,
    document: Document,
    externalId: ExternalId.nullable(),
    email: Email.nullable(),
    phone: Phone.nullable(),
    birthDate: BirthDate.nullable(),
  })
  .partial()
  .openapi('UpdatePersonRequest', {
    description: 'Only the fields sent change; null clears an optional field.',
  });
export type UpdatePersonRequest = z.infer<typeof UpdatePersonRequest>;

export const Person = z
  .object({
    id: Id,
    identityId: Id.nullable().openapi({
      description:
        'The person’s identity: its QR token is `GET /v1/checkin/identities/{identityId}/qr-token`. Every ' +
        'person has one from creation (any path); null once the person is anonymised.',
    }),
    name: z.string(),
    document: z.string(),
    externalId: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    birthDate: z.string().nullable().openapi({ description: 'YYYY-MM-DD.' }),
    enrolled: z
      .boolean()
      .openapi({ description: 'True once a face template exists: facial check-in needs it.' }),
    enrolledAt: Timestamp.nullable(),
    anonymised: z.boolean().openapi({
      description: 'Personal fields were erased by `DELETE /v1/persons/{id}/data`; the id stays.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('Person', { description: 'A person of the tenant. The facial embedding is never returned.' });
export type Person = z.infer<typeof Person>;

export const PersonSort = z.enum(['-createdAt', 'createdAt']);
export type PersonSort = z.infer<typeof PersonSort>;

const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const PersonListQuery = PageQuery.extend({
  q: Text.trim()
    .min(1)
    .max(200)
    .optional()
    .openapi({
      description:
        'A piece of the name, e-mail, document or externalId, case and accents ignored (`joao` finds João); in ' +
        'a document dots, dashes, slashes and spaces are ignored too (`12345678900` finds 123.456.789-00).',
    }),
  externalId: Text.min(1).max(200).optional().openapi({ description: 'Exact externalId.' }),
  enrolled: booleanQuery
    .optional()
    .openapi({ description: '`true`: only enrolled persons; `false`: only not enrolled.' }),
  createdFrom: Timestamp.optional().openapi({ description: 'Created at or after this instant.' }),
  createdTo: Timestamp.optional().openapi({ description: 'Created before this instant.' }),
  sort: PersonSort.default('-createdAt').openapi({
    description:
      '`-createdAt` (default): newest first; `createdAt`: oldest first (the order before 2026-11-26). Ties ' +
      'by id. A `cursor` keeps the sort of the page it came from.',
  }),
});
export type PersonListQuery = z.infer<typeof PersonListQuery>;

export const PersonList = pageOf(Person)
  .extend({
    total: z.number().int().openapi({
      description: 'Persons matching the filters (q, externalId, enrolled, created…), on every page.',
    }),
  })
  .openapi('PersonList', {
    description: 'In the order of `sort` (newest first by default, then id); the cursor is opaque.',
  });

export const UpsertPersonRequest = PersonFields.extend({ externalId: ExternalId }).openapi(
  'UpsertPersonRequest',
  {
    description:
      'Matched by externalId within the tenant. On update, name and document are replaced; email, phone and ' +
      'birthDate change only when sent.',
  },
);
export type UpsertPersonRequest = z.infer<typeof UpsertPersonRequest>;

export const UpsertPersonResult = z
  .object({ result: z.enum(['created', 'updated']), person: Person })
  .openapi('UpsertPersonResult');
export type UpsertPersonResult = z.infer<typeof UpsertPersonResult>;

export const IMPORT_MAX_ROWS = 500;

export const ImportPersonRow = PersonFields.openapi('ImportPersonRow', {
  description: 'Same fields as a create; a row with externalId is upserted by it.',
});
export type ImportPersonRow = z.infer<typeof ImportPersonRow>;

export const ImportPersonsRequest = z
  .strictObject({
    rows: z
      .array(
        z
          .record(z.string(), z.unknown())
          .openapi({ description: 'An `ImportPersonRow`, checked row by row.' }),
      )
      .min(1)
      .openapi({
        description:
          `1 to ${IMPORT_MAX_ROWS} rows, each an ImportPersonRow. Rows are checked and stored one by one: a bad ` +
          'row is reported and never stops the others.',
      }),
  })
  .openapi('ImportPersonsRequest');
export type ImportPersonsRequest = z.infer<typeof ImportPersonsRequest>;

export const PersonImportUpload = z
  .object({
    file: z.string().openapi({
      format: 'binary',
      description:
        'CSV (comma, semicolon or tab separated, UTF-8) or XLSX (first sheet), at most 10 MB and ' +
        `${IMPORT_MAX_ROWS} rows below the header. Row 1 is the header: name (required; also "full name", ` +
        '"nome"), document (required; also "documento", "CPF"), externalId (also "external id", "ID externo", ' +
        '"matrícula"), email ("e-mail"), phone ("telefone", "celular"), birthDate (YYYY-MM-DD; "date of birth", ' +
        '"data de nascimento"); accents, case and punctuation in the header are ignored, other columns too.',
    }),
  })
  .openapi('PersonImportUpload');

export const ImportRowResult = z
  .object({
    index: z.number().int().min(0).openapi({
      description: 'Position of the row in `rows` (or below the header of an uploaded file), from 0.',
    }),
    row: z.number().int().min(2).optional().openapi({
      description: 'An uploaded file’s spreadsheet row number (the header is row 1); absent for JSON rows.',
    }),
    status: z.enum(['created', 'updated', 'failed']),
    personId: Id.optional(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: 'Why the row failed.' }),
  })
  .openapi('ImportRowResult');
export type ImportRowResult = z.infer<typeof ImportRowResult>;

export const ImportPersonsResult = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    failed: z.number().int(),
    results: z.array(ImportRowResult).openapi({ description: 'One entry per row, in row order.' }),
  })
  .openapi('ImportPersonsResult');
export type ImportPersonsResult = z.infer<typeof ImportPersonsResult>;

export const EnrollmentLinkSent = z
  .object({
    personId: Id,
    expiresAt: Timestamp.openapi({ description: 'The link works once, until this instant (72 hours).' }),
  })
  .openapi('EnrollmentLinkSent');
export type EnrollmentLinkSent = z.infer<typeof EnrollmentLinkSent>;
