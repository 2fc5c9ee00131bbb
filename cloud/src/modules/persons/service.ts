// Persons of the caller's tenant: CRUD, upsert by externalId, batch import, enrollment links,
// deletion and anonymisation (with erasure of templates and images). Every query is scoped by the
// caller's tenant: another tenant's id is 404.
import {
  Id,
  IMPORT_MAX_ROWS,
  ImportPersonRow,
  PersonSort,
  Timestamp,
  z,
  type CreatePersonRequest,
  type EnrollmentLinkSent,
  type ImportPersonsResult,
  type ImportRowResult,
  type Person as PersonWire,
  type PersonListQuery,
  type UpdatePersonRequest,
  type UpsertPersonRequest,
  type UpsertPersonResult,
} from '@portico/contract';
import { Prisma } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import { AppError, notFound } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { toFieldErrors } from '../../http/route.js';
import { isUniqueViolation, newId, type Tx } from '../../infra/db/index.js';
import { likeLiteral } from '../../infra/db/like.js';

import { recordAudit, targetAudit } from '../audit/record.js';
import { createIdentity, identityRows, revokeIdentities, withIdentity } from '../identities/service.js';
import { issueEnrollmentToken } from '../onboarding/tokens.js';
import { emitEvent } from '../outbox/emit.js';
import { checkRegistrationAge } from '../privacy/age-policy.js';
import { getTenantSettings } from '../tenants/service.js';
import { birthDateOf, newPersonRow, toPersonWire } from './wire.js';
import { organisationOf, savedLanguageOf } from '../guests/locale.js';
import { personLocale, writtenWhen } from '../pages/language.js';
import { enrollmentLinkMail } from './mails.js';

export interface PersonContext {
  tenantId: string;
  /** `portal`: the person acting in the portal; `system`: a job (a confirmed deletion request). */
  actorType: 'apiKey' | 'adminSession' | 'portal' | 'system';
  actorId: string;
  ip: string | null;
  requestId: string | null;
}

type Deps = Pick<
  AppDeps,
  'db' | 'clock' | 'cipher' | 'config' | 'mailer' | 'outbox' | 'gallery' | 'logger' | 'images'
>;

const externalIdTaken = () =>
  new AppError(409, 'conflict', 'Another person of this tenant already has this externalId');

/** `[createdAt, id, sort]` of a page's last person; `[createdAt, id]` from before `sort` existed. */
const PersonCursor = z.union([
  z.tuple([Timestamp, Id, PersonSort]),
  z.tuple([Timestamp, Id]).transform(([at, id]) => [at, id, 'createdAt'] as const),
]);

/** What a document number is written with besides its digits and letters (`123.456.789-00`). */
const DOCUMENT_PUNCTUATION = /[-./\s]/g;

export function createPersonService(deps: Deps) {
  const { prisma } = deps.db;
  const { images } = deps;

  const audit = targetAudit('person');

  async function findPerson(db: Pick<Tx, 'person'>, ctx: PersonContext, id: string) {
    const person = await db.person.findFirst({
      where: { id, tenantId: ctx.tenantId },
      include: withIdentity,
    });
    if (!person) throw notFound('Person');
    return person;
  }

  /** Atomic insert-or-update on the (tenant_id, external_id) unique index: concurrent calls make one row. */
  async function upsertRow(
    ctx: PersonContext,
    input: UpsertPersonRequest,
    options: { audit: boolean } = { audit: true },
  ): Promise<{ id: string; created: boolean }> {
    const now = deps.clock.now();
    const has = (k: keyof UpsertPersonRequest) => input[k] !== undefined;
    return prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ id: string; inserted: boolean }>>`
      INSERT INTO persons (id, tenant_id, external_id, name, document, email, phone, birth_date, created_at, updated_at)
      VALUES (${newId()}, ${ctx.tenantId}, ${input.externalId}, ${input.name}, ${input.document},
              ${input.email ?? null}, ${input.phone ?? null}, ${input.birthDate ?? null}::date,
              ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (tenant_id, external_id) DO UPDATE SET
        name = EXCLUDED.name,
        document = EXCLUDED.document,
        email = CASE WHEN ${has('email')}::boolean THEN EXCLUDED.email ELSE persons.email END,
        phone = CASE WHEN ${has('phone')}::boolean THEN EXCLUDED.phone ELSE persons.phone END,
        birth_date = CASE WHEN ${has('birthDate')}::boolean THEN EXCLUDED.birth_date ELSE persons.birth_date END,
        updated_at = EXCLUDED.updated_at
      RETURNING id, (xmax = 0) AS inserted`;
      const row = rows[0]!;
      if (row.inserted) await createIdentity(tx, { tenantId: ctx.tenantId, personId: row.id, now });
      if (options.audit) {
        await audit(tx, ctx, row.inserted ? 'person.created' : 'person.updated', row.id, { via: 'upsert' });
      }
      return { id: row.id, created: row.inserted };
    });
  }

  async function createRow(ctx: PersonContext, input: CreatePersonRequest) {
    const now = deps.clock.now();
    try {
      return await prisma.$transaction(async (tx) => {
        const person = await tx.person.create({
          data: { id: newId(), ...newPersonRow(ctx.tenantId, input, now) },
        });
        const identity = await createIdentity(tx, { tenantId: ctx.tenantId, personId: person.id, now });
        await audit(tx, ctx, 'person.created', person.id, { identityId: identity.id });
        return { ...person, identities: [identity] };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw externalIdTaken();
      throw error;
    }
  }

  /**
   * Deletes the image rows of the person (enrollment images, and check-in images linked to the person
   * or to one of their check-ins) in `tx`; the files are erased by the caller after commit.
   */
  async function detachImages(tx: Pick<Tx, 'biometricImage'>, tenantId: string, personId: string) {
    const where = { tenantId, OR: [{ personId }, { checkIn: { personId } }] };
    const rows = await tx.biometricImage.findMany({ where, select: { storageKey: true } });
    await tx.biometricImage.deleteMany({ where });
    return rows.map((r) => r.storageKey);
  }

  /** The tenant's age_policy, for a birth date that is being set (registration or change). */
  async function checkAge(tenantId: string, birthDate: string | null | undefined) {
    if (!birthDate) return;
    const { age_policy } = await getTenantSettings(deps.db, tenantId);
    checkRegistrationAge(age_policy, birthDateOf(birthDate), deps.clock.now());
  }

  async function eraseFiles(keys: string[]) {
    for (const key of keys) {
      try {
        await images.erase(key);
      } catch (error) {
        deps.logger.error({ err: error, storageKey: key }, 'could not erase a biometric image file');
      }
    }
  }

  return {
    /**
     * A page of the tenant's persons in `sort` order (newest first by default), with the total matching
     * the filters. `q` is folded (case and accents) as the stored search text is and, for documents, also
     * tried without punctuation.
     */
    async list(ctx: PersonContext, query: PersonListQuery) {
      const where = [Prisma.sql`tenant_id = ${ctx.tenantId}`];
      if (query.q) {
        // search_text is folded by the database (fold_text, trigger persons_search_text); so is `q` here.
        const digits = query.q.replace(DOCUMENT_PUNCTUATION, '');
        where.push(Prisma.sql`(search_text LIKE '%' || fold_text(${likeLiteral(query.q)}) || '%'
          ${
            /\d/.test(digits) && digits !== query.q
              ? Prisma.sql`OR search_text LIKE '%' || fold_text(${likeLiteral(digits)}) || '%'`
              : Prisma.empty
          })`);
      }
      if (query.externalId) where.push(Prisma.sql`external_id = ${query.externalId}`);
      if (query.enrolled !== undefined)
        where.push(query.enrolled ? Prisma.sql`enrolled_at IS NOT NULL` : Prisma.sql`enrolled_at IS NULL`);
      if (query.createdFrom)
        where.push(Prisma.sql`created_at >= ${new Date(query.createdFrom)}::timestamptz`);
      if (query.createdTo) where.push(Prisma.sql`created_at < ${new Date(query.createdTo)}::timestamptz`);
      const filtered = Prisma.join(where, ' AND ');
      // A cursor carries the sort it was issued with; one from before `sort` existed is oldest first.
      const [at, afterId, sort] = query.cursor
        ? decodeCursor(query.cursor, PersonCursor)
        : [null, null, query.sort];
      const newest = sort === '-createdAt';
      const page = [...where];
      if (at !== null && afterId !== null) {
        const createdAt = new Date(at);
        page.push(
          newest
            ? Prisma.sql`(created_at, id) < (${createdAt}::timestamptz, ${afterId})`
            : Prisma.sql`(created_at, id) > (${createdAt}::timestamptz, ${afterId})`,
        );
      }
      const order = newest ? Prisma.sql`created_at DESC, id DESC` : Prisma.sql`created_at, id`;
      const [ids, [count]] = await Promise.all([
        prisma.$queryRaw<{ id: string }[]>`
          SELECT id FROM persons WHERE ${Prisma.join(page, ' AND ')}
           ORDER BY ${order} LIMIT ${query.limit + 1}`,
        prisma.$queryRaw<{ total: bigint }[]>`SELECT COUNT(*) AS total FROM persons WHERE ${filtered}`,
      ]);
      const rows = await prisma.person.findMany({
        where: { tenantId: ctx.tenantId, id: { in: ids.map((r) => r.id) } },
        include: withIdentity,
      });
      const byId = new Map(rows.map((p) => [p.id, p]));
      const found = ids.flatMap((r) => byId.get(r.id) ?? []);
      const items = found.slice(0, query.limit);
      const last = items[items.length - 1];
      return {
        items: items.map(toPersonWire),
        nextCursor:
          found.length > query.limit && last
            ? encodeCursor([last.createdAt.toISOString(), last.id, sort])
            : null,
        total: Number(count?.total ?? 0),
      };
    },

    async get(ctx: PersonContext, id: string): Promise<PersonWire> {
      return toPersonWire(await findPerson(prisma, ctx, id));
    },

    async create(ctx: PersonContext, input: CreatePersonRequest): Promise<PersonWire> {
      await checkAge(ctx.tenantId, input.birthDate);
      return toPersonWire(await createRow(ctx, input));
    },

    async update(ctx: PersonContext, id: string, patch: UpdatePersonRequest): Promise<PersonWire> {
      await checkAge(ctx.tenantId, patch.birthDate);
      try {
        return await prisma.$transaction(async (tx) => {
          const person = await findPerson(tx, ctx, id);
          if (person.anonymisedAt)
            throw new AppError(409, 'conflict', 'An anonymised person cannot be changed');
          const updated = await tx.person.update({
            where: { id: person.id },
            data: {
              ...(patch.name !== undefined ? { name: patch.name } : {}),
              ...(patch.document !== undefined ? { document: patch.document } : {}),
              ...(patch.externalId !== undefined ? { externalId: patch.externalId } : {}),
              ...(patch.email !== undefined ? { email: patch.email } : {}),
              ...(patch.phone !== undefined ? { phone: patch.phone } : {}),
              ...(patch.birthDate !== undefined ? { birthDate: birthDateOf(patch.birthDate) ?? null } : {}),
              updatedAt: deps.clock.now(),
            },
            include: withIdentity,
          });
          await audit(tx, ctx, 'person.updated', person.id, { fields: Object.keys(patch) });
          return toPersonWire(updated);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw externalIdTaken();
        throw error;
      }
    },

    async upsert(ctx: PersonContext, input: UpsertPersonRequest): Promise<UpsertPersonResult> {
      await checkAge(ctx.tenantId, input.birthDate);
      const { id, created } = await upsertRow(ctx, input);
      return {
        result: created ? 'created' : 'updated',
        person: toPersonWire(await findPerson(prisma, ctx, id)),
      };
    },

    /**
     * Each row is checked and stored on its own (no transaction across rows): a bad row is reported
     * as `failed` and never loses the good ones. Rows with externalId are upserted.
     */
    async importRows(ctx: PersonContext, rows: unknown[]): Promise<ImportPersonsResult> {
      if (rows.length > IMPORT_MAX_ROWS) {
        throw new AppError(
          400,
          'too_many_rows',
          `At most ${IMPORT_MAX_ROWS} rows per call; got ${rows.length}`,
          {
            extra: { maxRows: IMPORT_MAX_ROWS, rows: rows.length },
          },
        );
      }
      const results: ImportRowResult[] = new Array(rows.length);
      const plain: Array<{ index: number; row: ImportPersonRow }> = [];
      const fail = (index: number, error: unknown) => {
        if (!(error instanceof AppError)) deps.logger.error({ err: error, index }, 'import row failed');
        const message = error instanceof AppError ? error.message : 'the row could not be stored';
        results[index] = { index, status: 'failed', errors: [{ path: `rows.${index}`, message }] };
      };
      const { age_policy } = await getTenantSettings(deps.db, ctx.tenantId);
      const underAge = (birthDate: string | undefined) => {
        try {
          checkRegistrationAge(age_policy, birthDateOf(birthDate), deps.clock.now());
          return undefined;
        } catch (error) {
          return error;
        }
      };
      for (const [index, raw] of rows.entries()) {
        const parsed = ImportPersonRow.safeParse(raw);
        const refused = parsed.success ? underAge(parsed.data.birthDate) : undefined;
        if (!parsed.success) {
          results[index] = { index, status: 'failed', errors: toFieldErrors(parsed.error, `rows.${index}`) };
        } else if (refused) {
          fail(index, refused);
        } else if (parsed.data.externalId) {
          // In row order, so a later row with the same externalId updates the earlier one.
          try {
            const { id, created } = await upsertRow(
              ctx,
              { ...parsed.data, externalId: parsed.data.externalId },
              { audit: false },
            );
            results[index] = { index, status: created ? 'created' : 'updated', personId: id };
          } catch (error) {
            fail(index, error);
          }
        } else {
          plain.push({ index, row: parsed.data });
        }
      }
      // Rows without externalId cannot collide: one insert per chunk (persons and their identities);
      // if a chunk fails, row by row.
      const now = deps.clock.now();
      for (let start = 0; start < plain.length; start += 100) {
        const chunk = plain.slice(start, start + 100).map((p) => ({ ...p, id: newId() }));
        const data = chunk.map(({ id, row }) => ({
          id,
          tenantId: ctx.tenantId,
          name: row.name,
          document: row.document,
          email: row.email ?? null,
          phone: row.phone ?? null,
          birthDate: birthDateOf(row.birthDate) ?? null,
          createdAt: now,
          updatedAt: now,
        }));
        try {
          await prisma.$transaction([
            prisma.person.createMany({ data }),
            prisma.identity.createMany({
              data: identityRows(
                ctx.tenantId,
                chunk.map((c) => c.id),
                now,
              ),
            }),
          ]);
          for (const { index, id } of chunk) results[index] = { index, status: 'created', personId: id };
        } catch {
          for (const [k, { index }] of chunk.entries()) {
            try {
              await prisma.$transaction([
                prisma.person.create({ data: data[k]! }),
                prisma.identity.createMany({ data: identityRows(ctx.tenantId, [data[k]!.id], now) }),
              ]);
              results[index] = { index, status: 'created', personId: data[k]!.id };
            } catch (error) {
              fail(index, error);
            }
          }
        }
      }
      const count = (s: ImportRowResult['status']) => results.filter((r) => r.status === s).length;
      const summary = { created: count('created'), updated: count('updated'), failed: count('failed') };
      await recordAudit(prisma, {
        tenantId: ctx.tenantId,
        actorType: ctx.actorType,
        actorId: ctx.actorId,
        action: 'person.imported',
        // Per-row audit entries would be 500 writes; the summary names the created and updated ids.
        metadata: {
          rows: rows.length,
          ...summary,
          personIds: results.filter((r) => r.personId).map((r) => r.personId!),
        },
        ip: ctx.ip,
        requestId: ctx.requestId,
      });
      return { ...summary, results };
    },

    /**
     * Removes the person (templates, template refreshes, tokens, identities cascade); check-ins stay with
     * personId null.
     */
    async remove(ctx: PersonContext, id: string): Promise<void> {
      const now = deps.clock.now();
      const files = await prisma.$transaction(async (tx) => {
        const person = await findPerson(tx, ctx, id);
        const keys = await detachImages(tx, ctx.tenantId, person.id);
        await tx.person.delete({ where: { id: person.id } });
        await emitEvent(tx, {
          tenantId: ctx.tenantId,
          name: 'person.deleted',
          data: { personId: person.id, reason: 'deleted' },
          at: now,
        });
        await audit(tx, ctx, 'person.deleted', person.id, { imagesErased: keys.length });
        return keys;
      });
      deps.gallery.drop(ctx.tenantId, id);
      deps.outbox.notify();
      await eraseFiles(files);
    },

    /**
     * Data-protection erasure that keeps the id: personal fields blanked, templates (with their refresh
     * embeddings) and images erased
     * (rows and files), enrollment tokens deleted, identities revoked, check-ins kept but de-identified.
     */
    async anonymise(ctx: PersonContext, id: string): Promise<void> {
      const now = deps.clock.now();
      const files = await prisma.$transaction(async (tx) => {
        const person = await findPerson(tx, ctx, id);
        if (person.anonymisedAt) return [];
        const keys = await detachImages(tx, ctx.tenantId, person.id);
        await tx.faceTemplate.deleteMany({ where: { tenantId: ctx.tenantId, personId: person.id } });
        await tx.faceTemplateRefresh.deleteMany({ where: { tenantId: ctx.tenantId, personId: person.id } });
        await tx.enrollmentToken.deleteMany({ where: { tenantId: ctx.tenantId, personId: person.id } });
        const identities = await revokeIdentities(tx, { tenantId: ctx.tenantId, personId: person.id });
        const checkIns = await tx.checkIn.updateMany({
          where: { tenantId: ctx.tenantId, personId: person.id },
          data: { personId: null, identityId: null, anonymised: true, latitude: null, longitude: null },
        });
        await tx.person.update({
          where: { id: person.id },
          data: {
            name: 'Anonymised',
            document: '',
            externalId: null,
            email: null,
            phone: null,
            birthDate: null,
            portalAccountId: null,
            enrolledAt: null,
            anonymisedAt: now,
            updatedAt: now,
          },
        });
        await emitEvent(tx, {
          tenantId: ctx.tenantId,
          name: 'person.deleted',
          data: { personId: person.id, reason: 'anonymised' },
          at: now,
        });
        await audit(tx, ctx, 'person.anonymised', person.id, {
          imagesErased: keys.length,
          identitiesRevoked: identities,
          checkInsDeidentified: checkIns.count,
        });
        return keys;
      });
      deps.gallery.drop(ctx.tenantId, id);
      deps.outbox.notify();
      await eraseFiles(files);
    },

    /**
     * Withdrawal of biometric consent (the person, in the portal): templates (with their refresh
     * embeddings) and images erased (rows and files), the person record kept and no longer enrolled; the
     * tenant gets `person.biometrics_revoked`.
     */
    async eraseBiometrics(ctx: PersonContext, id: string) {
      const now = deps.clock.now();
      const { files, templates } = await prisma.$transaction(async (tx) => {
        const person = await findPerson(tx, ctx, id);
        const keys = await detachImages(tx, ctx.tenantId, person.id);
        const erased = await tx.faceTemplate.deleteMany({
          where: { tenantId: ctx.tenantId, personId: person.id },
        });
        await tx.faceTemplateRefresh.deleteMany({ where: { tenantId: ctx.tenantId, personId: person.id } });
        await tx.person.update({ where: { id: person.id }, data: { enrolledAt: null, updatedAt: now } });
        const data = { personId: person.id, templatesErased: erased.count, imagesErased: keys.length };
        await emitEvent(tx, { tenantId: ctx.tenantId, name: 'person.biometrics_revoked', data, at: now });
        await audit(tx, ctx, 'person.biometrics_revoked', person.id, data);
        return { files: keys, templates: erased.count };
      });
      deps.gallery.drop(ctx.tenantId, id);
      deps.outbox.notify();
      await eraseFiles(files);
      return { templatesErased: templates, imagesErased: files.length };
    },

    /** A single-use 72-hour link to `${publicUrl}/enroll?token=…`, mailed to the person. */
    async sendEnrollmentLink(ctx: PersonContext, id: string): Promise<EnrollmentLinkSent> {
      const now = deps.clock.now();
      const issued = await prisma.$transaction(async (tx) => {
        const person = await findPerson(tx, ctx, id);
        if (person.anonymisedAt) throw new AppError(409, 'conflict', 'The person was anonymised');
        if (!person.email) {
          throw new AppError(
            400,
            'email_required',
            'The person has no e-mail address; set one with PATCH first',
          );
        }
        const token = await issueEnrollmentToken(tx, {
          tenantId: ctx.tenantId,
          personId: person.id,
          purpose: 'enrollment_link',
          now,
        });
        await audit(tx, ctx, 'person.enrollment_link_sent', person.id);
        return { ...token, email: person.email, name: person.name };
      });
      const link = `${deps.config.publicUrl.replace(/\/$/, '')}/enroll?token=${encodeURIComponent(issued.token)}`;
      // No event here: the person's saved language, else the tenant's; the end in UTC, named in words.
      const organisation = await organisationOf(prisma, ctx.tenantId);
      const lang = personLocale({
        saved: await savedLanguageOf(prisma, issued.email),
        tenantDefault: organisation.defaultLocale,
      });
      await deps.mailer.send(
        enrollmentLinkMail(lang, {
          to: issued.email,
          name: issued.name,
          organisation: organisation.name,
          link,
          until: writtenWhen(lang, issued.expiresAt, 'UTC', now),
        }),
      );
      return { personId: id, expiresAt: issued.expiresAt.toISOString() };
    },
  };
}
