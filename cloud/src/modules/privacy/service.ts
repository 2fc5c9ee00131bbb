// Data protection in the portal: the deletion request (request -> e-mailed confirmation -> grace
// period -> erasure of every tenant's record by a job) and the data export (an archive built by a job,
// downloaded through a signed, expiring link). Both survive restarts: the work is in the `jobs` table.
import { createHmac } from 'node:crypto';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import JSZip from 'jszip';
import {
  DATA_EXPORT_TTL_SECONDS,
  DELETION_CONFIRM_TTL_SECONDS,
  type DeletionRequest as DeletionRequestWire,
} from '@portico/contract';
import type { DeletionRequest, DataExport } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { AppError, notFound } from '../../http/errors.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken, safeEqual } from '../../infra/crypto.js';
import { newId } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { bumpGuests } from '../guests/service.js';
import { emitEvent } from '../outbox/emit.js';
import { createPersonService } from '../persons/service.js';
import {
  guestsOfAccount,
  linkedPersons,
  photoKey,
  preferencesOf,
  TOKEN_TRIES_PER_CLIENT,
  tokenTriesKey,
} from '../portal/service.js';
import { createRateLimiter } from '../../http/rate-limit.js';
import { enqueueJob, enqueueMail, type JobRow } from './jobs.js';
import { deletionConfirmMail, exportReadyMail } from './mails.js';

type Deps = Pick<
  AppDeps,
  'db' | 'clock' | 'cipher' | 'config' | 'mailer' | 'outbox' | 'gallery' | 'logger' | 'images' | 'secrets'
>;
type Portal = ActorOf<'portal'>;

const OPEN = ['pending_confirmation', 'confirmed'];
const HOUR_MS = 3_600_000;

const invalidConfirmation = () =>
  new AppError(401, 'invalid_token', 'The confirmation token is not valid, was already used or has expired');

export function createPrivacyService(deps: Deps) {
  const { prisma } = deps.db;
  const persons = createPersonService(deps);
  const limiter = createRateLimiter(deps.db, deps.clock);
  const graceMs = () => deps.config.deletionGraceHours * HOUR_MS;
  const exportsDir = path.join(deps.config.dataDir, 'exports');
  const exportFile = (id: string) => path.join(exportsDir, `${id}.bin`);
  const exportContext = (id: string) => `data-export:${id}`;

  const toWire = (r: DeletionRequest): DeletionRequestWire => ({
    id: r.id,
    status: r.status as DeletionRequestWire['status'],
    requestedAt: r.requestedAt.toISOString(),
    confirmedAt: r.confirmedAt?.toISOString() ?? null,
    scheduledFor:
      r.confirmedAt && r.status !== 'cancelled'
        ? new Date(r.confirmedAt.getTime() + graceMs()).toISOString()
        : null,
    cancelledAt: r.cancelledAt?.toISOString() ?? null,
    completedAt: r.completedAt?.toISOString() ?? null,
  });

  const exportWire = (e: DataExport) => ({
    id: e.id,
    status: e.status as 'pending' | 'ready' | 'failed' | 'expired',
    requestedAt: e.requestedAt.toISOString(),
    completedAt: e.completedAt?.toISOString() ?? null,
    expiresAt: e.expiresAt?.toISOString() ?? null,
  });

  const signature = (id: string, expires: number) =>
    createHmac('sha256', deps.secrets.jwtKey).update(`data-export:${id}:${expires}`).digest('base64url');

  /** Every person of the account: linked ones, and any still carrying its address (added since sign-in). */
  async function personsOfAccount(accountId: string, email: string) {
    return prisma.person.findMany({
      where: {
        anonymisedAt: null,
        OR: [{ portalAccountId: accountId }, { email: { equals: email, mode: 'insensitive' } }],
      },
      select: { id: true, tenantId: true },
    });
  }

  async function eraseExportFiles(accountId: string) {
    const rows = await prisma.dataExport.findMany({ where: { accountId }, select: { id: true } });
    for (const row of rows) await rm(exportFile(row.id), { force: true });
    await prisma.dataExport.deleteMany({ where: { accountId } });
  }

  return {
    async requestDeletion(actor: Portal, meta: RequestMeta): Promise<DeletionRequestWire> {
      const now = deps.clock.now();
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: actor.accountId } });
      const open = await prisma.deletionRequest.findFirst({
        where: { accountId: account.id, status: { in: OPEN } },
      });
      if (open) throw new AppError(409, 'conflict', `A deletion request is already ${open.status}`);
      const people = await linkedPersons(prisma, account.id);
      const guests = await prisma.guest.findMany({
        where: guestsOfAccount(
          account.email,
          people.map((p) => p.id),
        ),
        select: { tenantId: true },
      });
      // Tenants holding only guest entries of the address learn of the request too.
      const tenantIds = [...new Set([...people, ...guests].map((x) => x.tenantId))];
      const token = randomToken('dc_');
      const language = (await preferencesOf(prisma, account.id)).language;
      const row = await prisma.$transaction(async (tx) => {
        const created = await tx.deletionRequest.create({
          data: {
            id: newId(),
            accountId: account.id,
            status: 'pending_confirmation',
            confirmTokenHash: hashToken(token),
            requestedAt: now,
          },
        });
        // The bus is per tenant: each tenant holding the person learns of the request.
        for (const tenantId of tenantIds) {
          await emitEvent(tx, {
            tenantId,
            name: 'identity.deletion_requested',
            data: { accountId: account.id, deletionRequestId: created.id, tenantIds },
            at: now,
          });
        }
        const link = `${deps.config.publicUrl}/portal/delete?token=${encodeURIComponent(token)}`;
        await enqueueMail(
          tx,
          deps,
          deletionConfirmMail(account.email, language, link, token, deps.config.deletionGraceHours),
          now,
        );
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'portal',
          actorId: account.id,
          action: 'portal.deletion_requested',
          targetType: 'deletion_request',
          targetId: created.id,
          metadata: { tenantIds },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return created;
      });
      deps.outbox.notify();
      return toWire(row);
    },

    async deletionStatus(actor: Portal): Promise<DeletionRequestWire> {
      const row = await prisma.deletionRequest.findFirst({
        where: { accountId: actor.accountId },
        orderBy: [{ requestedAt: 'desc' }, { id: 'desc' }],
      });
      if (!row) throw notFound('Deletion request');
      return toWire(row);
    },

    async cancelDeletion(actor: Portal, meta: RequestMeta): Promise<DeletionRequestWire> {
      const now = deps.clock.now();
      return prisma.$transaction(async (tx) => {
        const row = await tx.deletionRequest.findFirst({
          where: { accountId: actor.accountId, status: { in: OPEN } },
        });
        if (!row) throw notFound('Open deletion request');
        // The job re-reads the status before erasing, so a cancelled request is never carried out.
        const cancelled = await tx.deletionRequest.update({
          where: { id: row.id },
          data: { status: 'cancelled', cancelledAt: now, confirmTokenHash: null },
        });
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'portal',
          actorId: actor.accountId,
          action: 'portal.deletion_cancelled',
          targetType: 'deletion_request',
          targetId: row.id,
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return toWire(cancelled);
      });
    },

    /** Spends the e-mailed token (once) and schedules the erasure after the grace period. */
    async confirmDeletion(token: string, meta: RequestMeta): Promise<DeletionRequestWire> {
      await limiter.enforce(
        tokenTriesKey(meta.ip),
        TOKEN_TRIES_PER_CLIENT,
        'Too many attempts; try again later',
      );
      const now = deps.clock.now();
      const row = await prisma.$transaction(async (tx) => {
        const found = await tx.deletionRequest.findUnique({ where: { confirmTokenHash: hashToken(token) } });
        const expired =
          !found || found.requestedAt.getTime() + DELETION_CONFIRM_TTL_SECONDS * 1000 <= now.getTime();
        if (!found || found.status !== 'pending_confirmation' || expired) throw invalidConfirmation();
        const spent = await tx.deletionRequest.updateMany({
          where: { id: found.id, status: 'pending_confirmation' },
          data: { status: 'confirmed', confirmedAt: now, confirmTokenHash: null },
        });
        if (spent.count !== 1) throw invalidConfirmation();
        await enqueueJob(tx, {
          kind: 'deletion.complete',
          payload: { deletionRequestId: found.id },
          runAt: new Date(now.getTime() + graceMs()),
        });
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'portal',
          actorId: found.accountId,
          action: 'portal.deletion_confirmed',
          targetType: 'deletion_request',
          targetId: found.id,
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return tx.deletionRequest.findUniqueOrThrow({ where: { id: found.id } });
      });
      deps.outbox.notify();
      return toWire(row);
    },

    /**
     * The erasure (job `deletion.complete`): every tenant's person anonymised as by
     * `DELETE /v1/persons/:id/data` (each tenant gets `person.deleted`), guests of those persons or of the
     * address de-identified, the account's own data erased and its sessions ended. Re-running it after a
     * crash finishes what is left.
     */
    async completeDeletion(job: JobRow): Promise<void> {
      const id = String(job.payload.deletionRequestId);
      const request = await prisma.deletionRequest.findUnique({ where: { id } });
      if (!request || request.status !== 'confirmed') return;
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: request.accountId } });
      const now = deps.clock.now();
      const found = await personsOfAccount(account.id, account.email);
      for (const p of found) {
        await persons.anonymise(
          { tenantId: p.tenantId, actorType: 'system', actorId: request.id, ip: null, requestId: null },
          p.id,
        );
      }
      const personIds = found.map((p) => p.id);
      const guests = await prisma.guest.findMany({
        where: {
          OR: [
            ...(personIds.length > 0 ? [{ personId: { in: personIds } }] : []),
            { email: { equals: account.email, mode: 'insensitive' } },
          ],
        },
        select: { id: true, eventId: true },
      });
      for (const eventId of new Set(guests.map((g) => g.eventId))) {
        const ids = guests.filter((g) => g.eventId === eventId).map((g) => g.id);
        await prisma.$transaction(async (tx) => {
          // The event's lock orders this change among the confirmed list's checkpoints.
          await tx.$queryRaw`SELECT id FROM events WHERE id = ${eventId} FOR UPDATE`;
          await tx.guest.updateMany({
            where: { id: { in: ids } },
            data: {
              name: 'Anonymised',
              email: null,
              phone: null,
              document: null,
              birthDate: null,
              personId: null,
            },
          });
          // A guest's check-ins stay as the event's statistics, de-identified as a person's are.
          await tx.checkIn.updateMany({
            where: { guestId: { in: ids } },
            data: { personId: null, identityId: null, anonymised: true, latitude: null, longitude: null },
          });
          await bumpGuests(tx, ids);
        });
      }
      if (account.photoImageId) await deps.images.erase(photoKey(account.photoImageId));
      await eraseExportFiles(account.id);
      await prisma.$transaction(async (tx) => {
        await tx.portalSession.updateMany({
          where: { accountId: account.id, revokedAt: null },
          data: { revokedAt: now },
        });
        await tx.magicLink.deleteMany({
          where: { OR: [{ accountId: account.id }, { email: account.email }] },
        });
        await tx.notificationPreference.deleteMany({ where: { accountId: account.id } });
        // The account stays as a tombstone (its requests are the proof of erasure); nothing personal is left.
        await tx.portalAccount.update({
          where: { id: account.id },
          data: { email: `erased-${account.id}@erased.invalid`, name: null, phone: null, photoImageId: null },
        });
        await tx.deletionRequest.update({ where: { id }, data: { status: 'completed', completedAt: now } });
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'system',
          action: 'portal.deletion_completed',
          targetType: 'deletion_request',
          targetId: id,
          metadata: { personsAnonymised: personIds.length, guestsDeidentified: guests.length },
        });
      });
    },

    async requestExport(actor: Portal, includeImages: boolean, meta: RequestMeta) {
      const now = deps.clock.now();
      const pending = await prisma.dataExport.count({
        where: { accountId: actor.accountId, status: 'pending' },
      });
      if (pending > 0) throw new AppError(409, 'conflict', 'An export is already being built');
      const row = await prisma.$transaction(async (tx) => {
        const created = await tx.dataExport.create({
          data: { id: newId(), accountId: actor.accountId, status: 'pending', requestedAt: now },
        });
        await enqueueJob(tx, {
          kind: 'export.build',
          payload: { exportId: created.id, includeImages },
          runAt: now,
        });
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'portal',
          actorId: actor.accountId,
          action: 'portal.export_requested',
          targetType: 'data_export',
          targetId: created.id,
          metadata: { includeImages },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return created;
      });
      deps.outbox.notify();
      return exportWire(row);
    },

    /** Job `export.build`: the archive, encrypted at rest, and a mail with its signed link. */
    async buildExport(job: JobRow): Promise<void> {
      const exportId = String(job.payload.exportId);
      const includeImages = job.payload.includeImages === true;
      const row = await prisma.dataExport.findUnique({ where: { id: exportId } });
      if (!row || row.status !== 'pending') return;
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: row.accountId } });
      const zip = await archiveOf(account.id, includeImages);
      const now = deps.clock.now();
      const expiresAt = new Date(now.getTime() + DATA_EXPORT_TTL_SECONDS * 1000);
      await mkdir(exportsDir, { recursive: true, mode: 0o700 });
      await writeFile(exportFile(exportId), deps.cipher.encrypt(zip, exportContext(exportId)), {
        mode: 0o600,
      });
      const expires = expiresAt.getTime();
      const link =
        `${deps.config.publicUrl}/v1/portal/data-exports/${exportId}/download` +
        `?expires=${expires}&signature=${signature(exportId, expires)}`;
      const language = (await preferencesOf(prisma, account.id)).language;
      await prisma.$transaction(async (tx) => {
        await tx.dataExport.update({
          where: { id: exportId },
          data: { status: 'ready', storageKey: `exports/${exportId}.bin`, completedAt: now, expiresAt },
        });
        await enqueueMail(tx, deps, exportReadyMail(account.email, language, link, expiresAt), now);
      });
      deps.outbox.notify();
    },

    /** The archive behind a signed link; a forged or altered link is 401 `invalid_token`. */
    async download(id: string, expires: string, sig: string, meta: RequestMeta): Promise<Buffer> {
      if (!safeEqual(sig, signature(id, Number(expires)))) {
        throw new AppError(401, 'invalid_token', 'The download link is not valid');
      }
      if (Number(expires) <= deps.clock.now().getTime()) {
        throw new AppError(401, 'token_expired', 'The download link has expired; request a new export');
      }
      const row = await prisma.dataExport.findUnique({ where: { id } });
      if (!row || row.status !== 'ready') throw notFound('Export');
      const zip = deps.cipher.decrypt(await readFile(exportFile(id)), exportContext(id));
      await recordAudit(prisma, {
        tenantId: null,
        actorType: 'public',
        action: 'portal.export_downloaded',
        targetType: 'data_export',
        targetId: id,
        ip: meta.ip,
        requestId: meta.requestId,
      });
      return zip;
    },

    /** Erases archives whose link has lapsed; answers how many. */
    async purgeExpiredExports(): Promise<number> {
      const rows = await prisma.dataExport.findMany({
        where: { status: 'ready', expiresAt: { lte: deps.clock.now() } },
        select: { id: true },
      });
      for (const row of rows) {
        await rm(exportFile(row.id), { force: true });
        await prisma.dataExport.update({
          where: { id: row.id },
          data: { status: 'expired', storageKey: null },
        });
      }
      return rows.length;
    },
  };

  /** Everything held about the account's person, as JSON files (and images) in a zip. */
  async function archiveOf(accountId: string, includeImages: boolean): Promise<Buffer> {
    const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: accountId } });
    const people = await linkedPersons(prisma, accountId);
    const personIds = people.map((p) => p.id);
    const inPersons = { in: personIds };
    const guests = await prisma.guest.findMany({
      where: guestsOfAccount(account.email, personIds),
      include: {
        tenant: { select: { name: true } },
        event: { select: { name: true, startsAt: true, endsAt: true, timeZone: true } },
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const guestIds = guests.map((g) => g.id);
    const [checkIns, templates, images, sessions, preferences, deletionRequests] = await Promise.all([
      prisma.checkIn.findMany({
        where: { OR: [{ personId: inPersons }, { guestId: { in: guestIds } }] },
        include: { event: { select: { name: true } } },
        orderBy: { occurredAt: 'asc' },
      }),
      prisma.faceTemplate.findMany({
        where: { personId: inPersons },
        select: { id: true, tenantId: true, personId: true, modelId: true, quality: true, createdAt: true },
      }),
      prisma.biometricImage.findMany({
        where: { erasedAt: null, OR: [{ personId: inPersons }, { checkIn: { personId: inPersons } }] },
      }),
      prisma.portalSession.findMany({ where: { accountId } }),
      preferencesOf(prisma, accountId),
      prisma.deletionRequest.findMany({ where: { accountId } }),
    ]);
    const zip = new JSZip();
    const json = (name: string, value: unknown) => zip.file(name, JSON.stringify(value, null, 2));
    json('profile.json', {
      id: account.id,
      email: account.email,
      name: account.name,
      phone: account.phone,
      createdAt: account.createdAt,
    });
    json(
      'persons.json',
      people.map((p) => ({
        tenantId: p.tenantId,
        tenantName: p.tenant.name,
        id: p.id,
        externalId: p.externalId,
        name: p.name,
        document: p.document,
        email: p.email,
        phone: p.phone,
        birthDate: p.birthDate?.toISOString().slice(0, 10) ?? null,
        enrolledAt: p.enrolledAt,
        createdAt: p.createdAt,
        updatedAt: p.updatedAt,
      })),
    );
    json(
      'guests.json',
      guests.map((g) => ({
        id: g.id,
        tenantId: g.tenantId,
        tenantName: g.tenant.name,
        eventId: g.eventId,
        eventName: g.event.name,
        eventStartsAt: g.event.startsAt,
        eventEndsAt: g.event.endsAt,
        eventTimeZone: g.event.timeZone,
        name: g.name,
        email: g.email,
        phone: g.phone,
        document: g.document,
        birthDate: g.birthDate?.toISOString().slice(0, 10) ?? null,
        status: g.status,
        invitedAt: g.invitedAt,
        confirmedAt: g.confirmedAt,
        checkedInAt: g.checkedInAt,
      })),
    );
    json(
      'checkins.json',
      checkIns.map((c) => ({
        id: c.id,
        tenantId: c.tenantId,
        eventId: c.eventId,
        eventName: c.event?.name ?? null,
        guestId: c.guestId,
        method: c.method,
        outcome: c.outcome,
        score: c.score,
        geofenceStatus: c.geofenceStatus,
        latitude: c.latitude,
        longitude: c.longitude,
        occurredAt: c.occurredAt,
      })),
    );
    // Consent to biometric processing is given at enrollment: one entry per template held.
    json(
      'consents.json',
      templates.map((t) => ({
        tenantId: t.tenantId,
        personId: t.personId,
        purpose: 'facial_checkin',
        givenAt: t.createdAt,
      })),
    );
    json('biometric-templates.json', templates);
    json(
      'biometric-images.json',
      images.map((i) => ({
        id: i.id,
        tenantId: i.tenantId,
        kind: i.kind,
        contentType: i.contentType,
        byteSize: i.byteSize,
        sha256: i.sha256,
        createdAt: i.createdAt,
        file: includeImages ? `images/${i.id}.${i.contentType === 'image/png' ? 'png' : 'jpg'}` : null,
      })),
    );
    json(
      'portal-sessions.json',
      sessions.map((s) => ({
        id: s.id,
        ip: s.ip,
        userAgent: s.userAgent,
        createdAt: s.createdAt,
        revokedAt: s.revokedAt,
      })),
    );
    json('notification-preferences.json', preferences);
    json(
      'deletion-requests.json',
      deletionRequests.map((d) => ({
        id: d.id,
        status: d.status,
        requestedAt: d.requestedAt,
        completedAt: d.completedAt,
      })),
    );
    if (includeImages) {
      for (const i of images) {
        const bytes = await deps.images.read(i.tenantId, i.id, i.storageKey);
        zip.file(`images/${i.id}.${i.contentType === 'image/png' ? 'png' : 'jpg'}`, bytes);
      }
    }
    return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
  }
}
