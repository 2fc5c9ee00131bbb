// The person portal: sign-in by magic link, and what a person can see and do about the data every
// tenant holds on them. An account is a verified e-mail address; at each sign-in it is linked to the
// persons (of any tenant) that carry that address and are not anonymised. Guest entries are matched by
// the address each time they are read (they have no account link): an address found only on guest
// lists signs in and sees them too.
import {
  MAGIC_LINK_TTL_SECONDS,
  NOTIFICATION_DEFAULTS,
  NotificationPreferences,
  PORTAL_TOKEN_TTL_SECONDS,
  Timestamp,
  z,
  MagicLinkRequest,
  type Me,
  type MePatch,
  type MyOrganisation,
  type PortalTokenResponse,
} from '@portico/contract';
import type { Prisma } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { AppError, invalidFields, notFound } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import type { RequestMeta } from '../../http/request-context.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Tx } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { signPortalToken } from '../auth/tokens.js';
import { createPersonService } from '../persons/service.js';
import { enqueueMail, enqueueSealedJob, openSealedJob, type JobRow } from '../privacy/jobs.js';
import { magicLinkMail, signInAlertMail, type Language } from '../privacy/mails.js';
import type { AuditAction } from '@portico/contract';

type Deps = Pick<
  AppDeps,
  'db' | 'clock' | 'cipher' | 'config' | 'mailer' | 'outbox' | 'gallery' | 'logger' | 'images' | 'secrets'
>;
type Portal = ActorOf<'portal'>;

const HOUR_MS = 3_600_000;
/** Sign-in mails: per address (a mailbox cannot be flooded) and per client (nor many mailboxes). */
const LINKS_PER_EMAIL: RateLimitRule = { limit: 5, windowMs: HOUR_MS };
const LINKS_PER_CLIENT: RateLimitRule = { limit: 30, windowMs: HOUR_MS };
/** Spending an e-mailed token (sign-in, deletion confirmation), per client: guessing is bounded too. */
export const TOKEN_TRIES_PER_CLIENT: RateLimitRule = { limit: 30, windowMs: 10 * 60_000 };
export const tokenTriesKey = (ip: string) => `portal-link:tries:${ip}`;
const PHOTO_MAX_BYTES = 2 * 1024 * 1024;
/** Profile photos are not biometrics of any tenant: they live in the image store under this folder. */
const PHOTO_FOLDER = 'portal';

const CheckInCursor = z.tuple([Timestamp, z.string()]);

const invalidLink = () =>
  new AppError(401, 'invalid_token', 'The sign-in link is not valid, was already used or has expired');

/** The persons of an account: one per tenant at most in practice, anonymised ones excluded. */
export function linkedPersons(db: Pick<Tx, 'person'>, accountId: string) {
  return db.person.findMany({
    where: { portalAccountId: accountId, anonymisedAt: null },
    include: { tenant: { select: { name: true } } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

/**
 * The guest entries the portal shows and exports for an account: of live tenants (a sandbox's guests
 * are test data), not removed, carrying the address (any case) or linked to one of its persons.
 */
export function guestsOfAccount(email: string, personIds: string[]): Prisma.GuestWhereInput {
  return {
    deletedAt: null,
    tenant: { sandboxOfId: null },
    OR: [
      { email: { equals: email, mode: 'insensitive' } },
      ...(personIds.length > 0 ? [{ personId: { in: personIds } }] : []),
    ],
  };
}

/** Check-ins of the account's persons or of its guest entries. */
const checkInsOf = (personIds: string[], guestIds: string[]): Prisma.CheckInWhereInput => ({
  OR: [{ personId: { in: personIds } }, { guestId: { in: guestIds } }],
});

/** At most this many check-ins per organisation in the overview (the full history: `/v1/me/checkins`). */
const CHECKINS_PER_ORGANISATION = 50;

export async function preferencesOf(
  db: Pick<Tx, 'notificationPreference'>,
  accountId: string,
): Promise<NotificationPreferences> {
  const row = await db.notificationPreference.findUnique({ where: { accountId } });
  const stored = NotificationPreferences.partial().safeParse(row?.settings ?? {});
  return { ...NOTIFICATION_DEFAULTS, ...(stored.success ? stored.data : {}) };
}

/** Strict base64 of a JPEG or PNG (the profile photo); 400 on anything else. */
function photoBytes(photo: string): { bytes: Buffer; contentType: string } {
  const body = photo.trim().replace(/^data:[^,]*;base64,/i, '');
  const bad = (message: string) => invalidFields([{ path: 'body.photo', message }]);
  if (body.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw bad('not valid base64');
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length > PHOTO_MAX_BYTES) throw bad(`larger than ${PHOTO_MAX_BYTES} bytes`);
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff)
    return { bytes, contentType: 'image/jpeg' };
  if (bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47])))
    return { bytes, contentType: 'image/png' };
  throw bad('neither a JPEG nor a PNG');
}

export function createPortalService(deps: Deps) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);
  const persons = createPersonService(deps);

  const audit = (
    tx: Pick<Tx, '$executeRaw'>,
    actor: Portal,
    meta: RequestMeta,
    entry: {
      action: AuditAction;
      tenantId?: string | null;
      targetType?: string;
      targetId?: string;
      metadata?: Prisma.InputJsonObject;
    },
  ) =>
    recordAudit(tx, {
      tenantId: entry.tenantId ?? null,
      actorType: 'portal',
      actorId: actor.accountId,
      action: entry.action,
      targetType: entry.targetType ?? 'portal_account',
      targetId: entry.targetId ?? actor.accountId,
      metadata: entry.metadata ?? {},
      ip: meta.ip,
      requestId: meta.requestId,
    });

  async function personIdsOf(accountId: string): Promise<string[]> {
    return (await linkedPersons(prisma, accountId)).map((p) => p.id);
  }

  /** What the account is matched to: its linked persons and the guest entries of its address. */
  async function heldFor(accountId: string) {
    const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: accountId } });
    const people = await linkedPersons(prisma, accountId);
    const guests = await prisma.guest.findMany({
      where: guestsOfAccount(
        account.email,
        people.map((p) => p.id),
      ),
      include: {
        tenant: { select: { name: true } },
        event: { select: { name: true, startsAt: true, endsAt: true, timeZone: true } },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return { account, people, guests };
  }

  /** Images of the account's persons: enrollment images and images of their check-ins, not erased. */
  const imagesWhere = (ids: string[]): Prisma.BiometricImageWhereInput => ({
    erasedAt: null,
    OR: [{ personId: { in: ids } }, { checkIn: { personId: { in: ids } } }],
  });

  return {
    /**
     * The same answer and the same work whether or not the address is known: the request only queues
     * a sealed job, so its time says nothing about the address; the job (`sendMagicLink`) looks it up
     * and mails a known one.
     */
    async requestMagicLink(input: MagicLinkRequest, meta: RequestMeta): Promise<void> {
      await limiter.enforceAll(
        [
          { key: `portal-link:email:${hashToken(input.email)}`, rule: LINKS_PER_EMAIL },
          { key: `portal-link:client:${meta.ip}`, rule: LINKS_PER_CLIENT },
        ],
        'Too many sign-in links requested; try again later',
      );
      await enqueueSealedJob(prisma, deps, {
        kind: 'portal.magic_link',
        data: { email: input.email, ...(input.language && { language: input.language }) },
        runAt: deps.clock.now(),
      });
      deps.outbox.notify();
    },

    /** The `portal.magic_link` job: only an address a tenant holds (or a portal account) gets a mail. */
    sendMagicLink: async (job: JobRow): Promise<void> => {
      const input = MagicLinkRequest.parse(openSealedJob(deps, job));
      const now = deps.clock.now();
      const account = await prisma.portalAccount.findUnique({ where: { email: input.email } });
      const person = account
        ? null
        : await prisma.person.findFirst({
            where: { email: { equals: input.email, mode: 'insensitive' }, anonymisedAt: null },
            select: { id: true },
          });
      // An address on a guest list only (no person, no account yet) is held too: it may sign in.
      const guest =
        account || person
          ? null
          : await prisma.guest.findFirst({
              where: {
                email: { equals: input.email, mode: 'insensitive' },
                deletedAt: null,
                tenant: { sandboxOfId: null },
              },
              select: { id: true },
            });
      if (!account && !person && !guest) return;
      const language: Language =
        input.language ?? (account ? (await preferencesOf(prisma, account.id)).language : 'en');
      const token = randomToken('ml_');
      await prisma.$transaction(async (tx) => {
        await tx.magicLink.create({
          data: {
            id: newId(),
            accountId: account?.id ?? null,
            email: input.email,
            tokenHash: hashToken(token),
            purpose: 'login',
            expiresAt: new Date(now.getTime() + MAGIC_LINK_TTL_SECONDS * 1000),
          },
        });
        const link = `${deps.config.publicUrl}/portal/login?token=${encodeURIComponent(token)}`;
        await enqueueMail(
          tx,
          deps,
          magicLinkMail(input.email, language, link, MAGIC_LINK_TTL_SECONDS / 60),
          now,
        );
      });
      deps.outbox.notify();
    },

    /** Spends the link (once), creates the account on first use, links its persons, opens a session. */
    async verifyMagicLink(token: string, meta: RequestMeta): Promise<PortalTokenResponse> {
      await limiter.enforce(
        tokenTriesKey(meta.ip),
        TOKEN_TRIES_PER_CLIENT,
        'Too many attempts; try again later',
      );
      const now = deps.clock.now();
      const jti = newId();
      const session = await prisma.$transaction(async (tx) => {
        const link = await tx.magicLink.findUnique({ where: { tokenHash: hashToken(token) } });
        if (!link || link.purpose !== 'login' || link.usedAt || link.expiresAt <= now) throw invalidLink();
        const spent = await tx.magicLink.updateMany({
          where: { id: link.id, usedAt: null },
          data: { usedAt: now },
        });
        if (spent.count !== 1) throw invalidLink();
        const account = await tx.portalAccount.upsert({
          where: { email: link.email },
          create: { id: newId(), email: link.email },
          update: {},
        });
        // A person whose address changed since the last sign-in is no longer this account's.
        await tx.person.updateMany({
          where: {
            portalAccountId: account.id,
            OR: [{ email: null }, { NOT: { email: { equals: account.email, mode: 'insensitive' } } }],
          },
          data: { portalAccountId: null },
        });
        // Live tenants only: a sandbox's persons are test data, never shown, exported or revoked here
        // (a deletion request still erases them: privacy/service.ts matches by address everywhere).
        await tx.person.updateMany({
          where: {
            email: { equals: account.email, mode: 'insensitive' },
            anonymisedAt: null,
            tenant: { sandboxOfId: null },
          },
          data: { portalAccountId: account.id },
        });
        const created = await tx.portalSession.create({
          data: {
            id: newId(),
            accountId: account.id,
            tokenId: jti,
            userAgent: meta.userAgent?.slice(0, 300) ?? null,
            ip: meta.ip,
            createdAt: now,
            lastSeenAt: now,
            expiresAt: new Date(now.getTime() + PORTAL_TOKEN_TTL_SECONDS * 1000),
          },
        });
        const prefs = await preferencesOf(tx, account.id);
        if (prefs.signInAlerts) {
          await enqueueMail(
            tx,
            deps,
            signInAlertMail(account.email, prefs.language, now, meta.userAgent),
            now,
          );
        }
        await recordAudit(tx, {
          tenantId: null,
          actorType: 'portal',
          actorId: account.id,
          action: 'portal.signed_in',
          targetType: 'portal_session',
          targetId: created.id,
          ip: meta.ip,
          requestId: meta.requestId,
        });
        return created;
      });
      deps.outbox.notify();
      const accessToken = await signPortalToken(
        deps.secrets.jwtKey,
        { sub: session.accountId, sid: session.id, jti },
        now,
        PORTAL_TOKEN_TTL_SECONDS,
      );
      return { accessToken, tokenType: 'Bearer', expiresIn: PORTAL_TOKEN_TTL_SECONDS, sessionId: session.id };
    },

    async me(actor: Portal): Promise<Me> {
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: actor.accountId } });
      const linked = await linkedPersons(prisma, actor.accountId);
      return {
        id: account.id,
        email: account.email,
        name: account.name,
        phone: account.phone,
        hasPhoto: account.photoImageId !== null,
        tenants: linked.map((p) => ({ tenantId: p.tenantId, tenantName: p.tenant.name, personId: p.id })),
        createdAt: account.createdAt.toISOString(),
      };
    },

    async updateMe(actor: Portal, patch: MePatch, meta: RequestMeta): Promise<Me> {
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: actor.accountId } });
      const photo = patch.photo ? photoBytes(patch.photo) : undefined;
      let photoImageId: string | null | undefined = patch.photo === null ? null : undefined;
      if (photo) {
        photoImageId = newId();
        await deps.images.save(PHOTO_FOLDER, photoImageId, photo.bytes);
      }
      await prisma.$transaction(async (tx) => {
        await tx.portalAccount.update({
          where: { id: actor.accountId },
          data: {
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.phone !== undefined ? { phone: patch.phone } : {}),
            ...(photoImageId !== undefined ? { photoImageId } : {}),
          },
        });
        await audit(tx, actor, meta, {
          action: 'portal.profile_updated',
          metadata: { fields: Object.keys(patch) },
        });
      });
      if (photoImageId !== undefined && account.photoImageId) {
        await deps.images.erase(photoKey(account.photoImageId));
      }
      return this.me(actor);
    },

    /** The profile photo's bytes and type (the type is sniffed again: only JPEG and PNG are stored). */
    async photo(actor: Portal): Promise<{ bytes: Buffer; contentType: string }> {
      const account = await prisma.portalAccount.findUniqueOrThrow({ where: { id: actor.accountId } });
      if (!account.photoImageId) throw notFound('Photo');
      const bytes = await deps.images.read(
        PHOTO_FOLDER,
        account.photoImageId,
        photoKey(account.photoImageId),
      );
      return { bytes, contentType: bytes[0] === 0xff ? 'image/jpeg' : 'image/png' };
    },

    async sessions(actor: Portal) {
      const rows = await prisma.portalSession.findMany({
        where: { accountId: actor.accountId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: 100,
      });
      return {
        items: rows.map((s) => ({
          id: s.id,
          current: s.id === actor.sessionId,
          userAgent: s.userAgent,
          ip: s.ip,
          createdAt: s.createdAt.toISOString(),
          lastSeenAt: s.lastSeenAt.toISOString(),
          expiresAt: s.expiresAt.toISOString(),
          revokedAt: s.revokedAt?.toISOString() ?? null,
        })),
      };
    },

    /** Ends one of the account's sessions (its token stops working at once); another account's is 404. */
    async endSession(actor: Portal, sessionId: string, meta: RequestMeta): Promise<void> {
      await prisma.$transaction(async (tx) => {
        const session = await tx.portalSession.findFirst({
          where: { id: sessionId, accountId: actor.accountId },
        });
        if (!session) throw notFound('Session');
        if (!session.revokedAt) {
          await tx.portalSession.update({ where: { id: session.id }, data: { revokedAt: deps.clock.now() } });
        }
        await audit(tx, actor, meta, {
          action: 'portal.session_ended',
          targetType: 'portal_session',
          targetId: session.id,
        });
      });
    },

    async biometrics(actor: Portal, meta: RequestMeta) {
      const linked = await linkedPersons(prisma, actor.accountId);
      const items = await Promise.all(
        linked.map(async (p) => {
          const template = await prisma.faceTemplate.findFirst({
            where: { tenantId: p.tenantId, personId: p.id },
            orderBy: { createdAt: 'desc' },
            select: { quality: true, modelId: true },
          });
          const images = await prisma.biometricImage.count({
            where: { tenantId: p.tenantId, ...imagesWhere([p.id]) },
          });
          return {
            tenantId: p.tenantId,
            tenantName: p.tenant.name,
            personId: p.id,
            enrolled: p.enrolledAt !== null && template !== null,
            enrolledAt: p.enrolledAt?.toISOString() ?? null,
            quality: template?.quality ?? null,
            modelId: template?.modelId ?? null,
            images,
          };
        }),
      );
      await prisma.$transaction(async (tx) => {
        for (const p of linked) {
          await audit(tx, actor, meta, {
            action: 'portal.biometrics_read',
            tenantId: p.tenantId,
            targetType: 'person',
            targetId: p.id,
          });
        }
      });
      return { items };
    },

    async revokeBiometrics(actor: Portal, tenantId: string, meta: RequestMeta) {
      const person = (await linkedPersons(prisma, actor.accountId)).find((p) => p.tenantId === tenantId);
      if (!person) throw notFound('Tenant');
      const erased = await persons.eraseBiometrics(
        { tenantId, actorType: 'portal', actorId: actor.accountId, ip: meta.ip, requestId: meta.requestId },
        person.id,
      );
      return { tenantId, ...erased };
    },

    /**
     * Per organisation, what it holds about the address: the person record, guest entries and
     * check-ins (method and outcome: no scores, no images). Organisations by name.
     */
    async organisations(actor: Portal): Promise<{ items: MyOrganisation[] }> {
      const { people, guests } = await heldFor(actor.accountId);
      const names = new Map<string, string>();
      for (const p of people) names.set(p.tenantId, p.tenant.name);
      for (const g of guests) names.set(g.tenantId, g.tenant.name);
      const tenants = [...names].sort(([, x], [, y]) => x.localeCompare(y));
      const items = await Promise.all(
        tenants.map(async ([tenantId, tenantName]): Promise<MyOrganisation> => {
          const person = people.find((p) => p.tenantId === tenantId) ?? null;
          const entries = guests.filter((g) => g.tenantId === tenantId);
          const where: Prisma.CheckInWhereInput = {
            tenantId,
            ...checkInsOf(
              person ? [person.id] : [],
              entries.map((g) => g.id),
            ),
          };
          const [rows, total] = await Promise.all([
            prisma.checkIn.findMany({
              where,
              orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
              take: CHECKINS_PER_ORGANISATION,
              include: { event: { select: { name: true } } },
            }),
            prisma.checkIn.count({ where }),
          ]);
          const byEventStart = (g: (typeof entries)[number]) => g.event.startsAt?.getTime() ?? -Infinity;
          return {
            tenantId,
            tenantName,
            person: person && {
              id: person.id,
              name: person.name,
              email: person.email,
              phone: person.phone,
              enrolled: person.enrolledAt !== null,
            },
            guests: [...entries]
              .sort((x, y) => byEventStart(y) - byEventStart(x))
              .map((g) => ({
                id: g.id,
                eventId: g.eventId,
                eventName: g.event.name,
                eventStartsAt: g.event.startsAt?.toISOString() ?? null,
                eventEndsAt: g.event.endsAt?.toISOString() ?? null,
                eventTimeZone: g.event.timeZone,
                name: g.name,
                status: g.status as MyOrganisation['guests'][number]['status'],
                invitedAt: g.invitedAt?.toISOString() ?? null,
                confirmedAt: g.confirmedAt?.toISOString() ?? null,
                checkedInAt: g.checkedInAt?.toISOString() ?? null,
              })),
            checkins: rows.map((c) => ({
              id: c.id,
              tenantId,
              tenantName,
              eventId: c.eventId,
              eventName: c.event?.name ?? null,
              method: c.method,
              outcome: c.outcome,
              occurredAt: c.occurredAt.toISOString(),
            })),
            checkinsTotal: total,
          };
        }),
      );
      return { items };
    },

    async checkins(actor: Portal, query: { limit: number; cursor?: string | undefined }) {
      const { people, guests } = await heldFor(actor.accountId);
      const and: Prisma.CheckInWhereInput[] = [
        checkInsOf(
          people.map((p) => p.id),
          guests.map((g) => g.id),
        ),
      ];
      if (query.cursor) {
        const [at, id] = decodeCursor(query.cursor, CheckInCursor);
        const occurredAt = new Date(at);
        and.push({ OR: [{ occurredAt: { lt: occurredAt } }, { occurredAt, id: { lt: id } }] });
      }
      const rows = await prisma.checkIn.findMany({
        where: { AND: and },
        orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
        take: query.limit + 1,
        include: { tenant: { select: { name: true } }, event: { select: { name: true } } },
      });
      const page = rows.slice(0, query.limit);
      const last = page[page.length - 1];
      return {
        items: page.map((c) => ({
          id: c.id,
          tenantId: c.tenantId,
          tenantName: c.tenant.name,
          eventId: c.eventId,
          eventName: c.event?.name ?? null,
          method: c.method,
          outcome: c.outcome,
          occurredAt: c.occurredAt.toISOString(),
        })),
        nextCursor:
          rows.length > query.limit && last ? encodeCursor([last.occurredAt.toISOString(), last.id]) : null,
      };
    },

    preferences: (actor: Portal) => preferencesOf(prisma, actor.accountId),

    async updatePreferences(actor: Portal, patch: Partial<NotificationPreferences>) {
      const settings = { ...(await preferencesOf(prisma, actor.accountId)), ...patch };
      await prisma.notificationPreference.upsert({
        where: { accountId: actor.accountId },
        create: { accountId: actor.accountId, settings },
        update: { settings },
      });
      return settings;
    },

    async images(actor: Portal, meta: RequestMeta) {
      const ids = await personIdsOf(actor.accountId);
      const rows = await prisma.biometricImage.findMany({
        where: imagesWhere(ids),
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      });
      await audit(prisma, actor, meta, {
        action: 'portal.biometric_images_listed',
        metadata: { images: rows.length },
      });
      return {
        items: rows.map((r) => ({
          id: r.id,
          tenantId: r.tenantId,
          kind: r.kind === 'checkin' ? ('checkin' as const) : ('enrollment' as const),
          contentType: r.contentType,
          byteSize: r.byteSize,
          sha256: r.sha256,
          createdAt: r.createdAt.toISOString(),
        })),
      };
    },

    /** The decrypted image; another person's image id is 404. */
    async imageFile(actor: Portal, imageId: string, meta: RequestMeta) {
      const ids = await personIdsOf(actor.accountId);
      const row = await prisma.biometricImage.findFirst({ where: { id: imageId, ...imagesWhere(ids) } });
      if (!row) throw notFound('Biometric image');
      const bytes = await deps.images.read(row.tenantId, row.id, row.storageKey);
      await audit(prisma, actor, meta, {
        action: 'portal.biometric_image_read',
        tenantId: row.tenantId,
        targetType: 'biometric_image',
        targetId: row.id,
      });
      return { bytes, contentType: row.contentType };
    },
  };
}

export const photoKey = (imageId: string) => `images/${PHOTO_FOLDER}/${imageId}.bin`;
