import type { Request, Response } from 'express';
import {
  CreatePersonRequest,
  EnrollmentLinkSent,
  IdParams,
  IMPORT_MAX_ROWS,
  ImportPersonsRequest,
  ImportPersonsResult,
  Person,
  PersonImportUpload,
  PersonList,
  PersonListQuery,
  UpdatePersonRequest,
  UpsertPersonRequest,
  UpsertPersonResult,
} from '@portico/contract';
import { auditActorOf } from '../audit/record.js';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { readUpload } from '../../http/upload.js';
import { spreadsheetErrors, spreadsheetLimitsDoc } from '../../infra/spreadsheet/read.js';
import { importPersonsFile } from './import.js';
import { createPersonService, type PersonContext } from './service.js';

const TAG = 'Persons';
const AUTH = ['apiKey', 'adminSession'] as const;
const HOUR_MS = 3_600_000;
/** Enrollment-link mails: each one lands in a person's inbox, so a caller cannot make it a mail cannon. */
const LINKS_PER_PERSON: RateLimitRule = { limit: 3, windowMs: HOUR_MS };
const LINKS_PER_TENANT: RateLimitRule = { limit: 500, windowMs: HOUR_MS };

const WHO =
  'Integrator API key or tenant admin session; always within the caller’s tenant. Reading needs the scope ' +
  '`persons:read`, every change `persons:write` (owner and admin; the operator role only reads). ';

export function personContextOf(
  actor: ActorOf<'apiKey'> | ActorOf<'adminSession'>,
  req: Request,
  res: Response,
): PersonContext {
  const { ip, requestId } = requestMeta(req, res);
  return {
    tenantId: actor.tenantId,
    actorType: actor.kind,
    actorId: auditActorOf(actor).actorId!,
    ip,
    requestId,
  };
}

export function personRoutes(deps: AppDeps) {
  const persons = createPersonService(deps);
  const limiter = createRateLimiter(deps.db, deps.clock);
  const notFound = {
    status: 404,
    code: 'not_found',
    description: 'no such person in the caller’s tenant',
  } as const;
  const tooYoung = {
    status: 400,
    code: 'age_below_minimum',
    description: 'the birthDate is under the tenant’s age_policy.minimumAge and belowMinimum is deny',
  } as const;
  const externalIdConflict = {
    status: 409,
    code: 'conflict',
    description: 'another person of the tenant has this externalId',
  } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/v1/persons',
      operationId: 'listPersons',
      summary: 'List persons',
      description:
        `${WHO}Cursor-paginated, newest first by default (\`sort=-createdAt\`; \`sort=createdAt\` for oldest ` +
        'first), ties by id, with `total` (the persons matching the filters) on every page; follow `nextCursor` ' +
        'for a list of any length. Filters combine with AND; `q` ignores case and accents.',
      tag: TAG,
      auth: AUTH,
      scope: 'persons:read',
      query: PersonListQuery,
      responses: { 200: { description: 'A page of persons', schema: PersonList } },
      handler: async ({ actor, query, req, res }) => ({
        status: 200,
        body: await persons.list(personContextOf(actor, req, res), query),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/persons',
      operationId: 'createPerson',
      summary: 'Create a person',
      description: `${WHO}Biometric enrollment is a separate step (see Onboarding).`,
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      body: CreatePersonRequest,
      responses: { 201: { description: 'Created', schema: Person } },
      errors: [tooYoung, externalIdConflict],
      handler: async ({ actor, body, req, res }) => ({
        status: 201,
        body: await persons.create(personContextOf(actor, req, res), body),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/persons/upsert',
      operationId: 'upsertPerson',
      summary: 'Create or update a person matched by externalId',
      description:
        `${WHO}Atomic on the unique (tenant, externalId) key: concurrent calls with the same externalId make ` +
        'one person. Answers 201 with `result: created` or 200 with `result: updated`.',
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      body: UpsertPersonRequest,
      responses: {
        200: { description: 'An existing person was updated', schema: UpsertPersonResult },
        201: { description: 'A new person was created', schema: UpsertPersonResult },
      },
      errors: [tooYoung],
      handler: async ({ actor, body, req, res }) => {
        const result = await persons.upsert(personContextOf(actor, req, res), body);
        return { status: result.result === 'created' ? 201 : 200, body: result };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/persons/import',
      operationId: 'importPersons',
      summary: `Import up to ${IMPORT_MAX_ROWS} persons (JSON rows or a CSV/XLSX file)`,
      description:
        `${WHO}Either JSON \`{ rows: [...] }\` or multipart/form-data with a spreadsheet in field \`file\` ` +
        '(CSV or XLSX; row 1 is the header, its spellings mapped to the person fields). Each row is validated ' +
        'and stored on its own: the answer reports every row (`created`, `updated` or `failed` with its ' +
        'errors; for a file also its spreadsheet `row`), and a bad row never loses the good ones. Rows with ' +
        `externalId are upserted by it. More than ${IMPORT_MAX_ROWS} rows: 400 \`too_many_rows\`, nothing ` +
        'stored. An `Idempotency-Key` is honoured for JSON rows only.\n\n' +
        spreadsheetLimitsDoc(IMPORT_MAX_ROWS),
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      body: ImportPersonsRequest,
      upload: PersonImportUpload,
      requestExamples: {
        'application/json': {
          rows: {
            summary: 'Two rows, one upserted by its externalId',
            value: {
              rows: [
                { name: 'Ana Souza', document: '123.456.789-09', email: 'ana@example.com' },
                { name: 'Bruno Lima', document: '987.654.321-00', externalId: 'hr-0042' },
              ],
            },
          },
        },
        'multipart/form-data': {
          csv: {
            summary: 'A CSV file (Portuguese headers, semicolon separated)',
            value: {
              file: 'Nome;CPF;E-mail;Data de nascimento\nAna Souza;123.456.789-09;ana@example.com;1990-04-30\n',
            },
          },
        },
      },
      responses: {
        200: {
          description: 'Per-row results',
          schema: ImportPersonsResult,
          examples: {
            file: {
              summary: 'A file with one bad row',
              value: {
                created: 1,
                updated: 0,
                failed: 1,
                results: [
                  { index: 0, row: 2, status: 'created', personId: '01936f8e-5b7a-7c3e-9a41-2f6d8b0c1e55' },
                  {
                    index: 1,
                    row: 3,
                    status: 'failed',
                    errors: [
                      {
                        path: 'rows.1.document',
                        message: 'Invalid input: expected string, received undefined',
                      },
                    ],
                  },
                ],
              },
            },
          },
        },
      },
      errors: [
        ...spreadsheetErrors(IMPORT_MAX_ROWS),
        {
          status: 400,
          code: 'validation_failed',
          description:
            'no rows, no file field, a file without rows below the header, or a header without a name or document column',
        },
      ],
      handler: async ({ actor, body, req, res }) => {
        const ctx = personContextOf(actor, req, res);
        return {
          status: 200,
          body: body
            ? await persons.importRows(ctx, body.rows)
            : await importPersonsFile(persons, ctx, await readUpload(req)),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/persons/{id}',
      operationId: 'getPerson',
      summary: 'Get a person',
      description: WHO,
      tag: TAG,
      auth: AUTH,
      scope: 'persons:read',
      params: IdParams,
      responses: { 200: { description: 'The person', schema: Person } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await persons.get(personContextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/persons/{id}',
      operationId: 'updatePerson',
      summary: 'Update a person',
      description: `${WHO}Only the fields sent change; null clears an optional field.`,
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      params: IdParams,
      body: UpdatePersonRequest,
      responses: { 200: { description: 'The updated person', schema: Person } },
      errors: [
        notFound,
        tooYoung,
        externalIdConflict,
        { status: 409, code: 'conflict', description: 'the person was anonymised' },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await persons.update(personContextOf(actor, req, res), params.id, body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/persons/{id}',
      operationId: 'deletePerson',
      summary: 'Remove a person',
      description:
        `${WHO}Deletes the person with their face template, biometric images (rows and encrypted files), ` +
        'enrollment tokens and identities. Check-ins stay, no longer linked to anyone. Emits `person.deleted` ' +
        'with `reason: deleted`.',
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      params: IdParams,
      responses: { 204: { description: 'Removed' } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => {
        await persons.remove(personContextOf(actor, req, res), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/persons/{id}/data',
      operationId: 'anonymisePerson',
      summary: 'Anonymise a person’s personal data',
      description:
        `${WHO}The person keeps its id with \`anonymised: true\`; name becomes "Anonymised", document is ` +
        'blanked and externalId, email, phone and birthDate are cleared. The face template and every ' +
        'biometric image (rows and files) are erased, enrollment tokens deleted, identities revoked (with their ' +
        'QR/link tokens), check-ins kept but de-identified (no person, no location, `anonymised`). Emits ' +
        '`person.deleted` with `reason: anonymised`. Repeating the call changes nothing.',
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      params: IdParams,
      responses: { 204: { description: 'Anonymised' } },
      errors: [notFound],
      handler: async ({ actor, params, req, res }) => {
        await persons.anonymise(personContextOf(actor, req, res), params.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/persons/{id}/send-enrollment-link',
      operationId: 'sendEnrollmentLink',
      summary: 'E-mail a self-enrollment link to the person',
      description:
        `${WHO}Mails \`{PUBLIC_URL}/enroll?token=…\` to the person’s e-mail. The token works once (for ` +
        '`POST /v1/public/onboarding/enroll`) and expires after 72 hours; it is stored only as a hash. At most ' +
        '3 links per person and 500 per tenant in an hour (429 `rate_limited` with `Retry-After`).',
      tag: TAG,
      auth: AUTH,
      scope: 'persons:write',
      params: IdParams,
      responses: { 200: { description: 'Sent', schema: EnrollmentLinkSent } },
      errors: [
        notFound,
        { status: 400, code: 'email_required', description: 'the person has no e-mail address' },
        { status: 409, code: 'conflict', description: 'the person was anonymised' },
        {
          status: 429,
          code: 'rate_limited',
          description: 'over 3 links for this person or 500 for the tenant in an hour',
        },
      ],
      handler: async ({ actor, params, req, res }) => {
        await limiter.enforceAll(
          [
            { key: `enrollment-link:person:${actor.tenantId}:${params.id}`, rule: LINKS_PER_PERSON },
            { key: `enrollment-link:tenant:${actor.tenantId}`, rule: LINKS_PER_TENANT },
          ],
          'Too many enrollment links; try again later',
        );
        return {
          status: 200,
          body: await persons.sendEnrollmentLink(personContextOf(actor, req, res), params.id),
        };
      },
    }),
  ];
}
