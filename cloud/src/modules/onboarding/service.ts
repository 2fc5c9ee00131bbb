// Onboarding: one-call person + identity + enrollment for a tenant's own staff or server, and the
// public self-service flow register -> verify-token -> enroll authorised by a single-use token.
import { enrollmentFrames } from '@portico/contract';
import type {
  EnrollRequest,
  EnrollResult,
  OnboardingHealth,
  OnboardingRequest,
  OnboardingResult,
  RegisterRequest,
  RegisterResult,
  RegistrationPending,
  VerifyTokenResult,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import type { RequestMeta } from '../../http/request-context.js';
import { AppError, notFound } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import { isUniqueViolation, newId, type Tx } from '../../infra/db/index.js';
import { auditActorOf, recordAudit } from '../audit/record.js';
import { eventByToken } from '../events/service.js';
import { checkEnrollmentAge, checkRegistrationAge } from '../privacy/age-policy.js';
import { enqueueMail } from '../privacy/jobs.js';
import { getTenantSettings, tenantBySlug } from '../tenants/service.js';
import { createIdentity, withIdentity } from '../identities/service.js';
import type { PersonContext } from '../persons/service.js';
import { birthDateOf, newPersonRow, toPersonWire } from '../persons/wire.js';
import { personLocaleOf } from '../guests/locale.js';
import { writtenWhen } from '../pages/language.js';
import { createEnrollment } from './enrollment.js';
import { registrationConfirmMail } from './mails.js';
import { consumeToken, issueEnrollmentToken, usableToken } from './tokens.js';

/** Public calls are limited per client address (shared by every API process through the database). */
export const PUBLIC_LIMITS = {
  register: { limit: 20, windowMs: 10 * 60_000 },
  verify: { limit: 60, windowMs: 10 * 60_000 },
  enroll: { limit: 30, windowMs: 10 * 60_000 },
} satisfies Record<string, RateLimitRule>;

export type EnrollCaller = ActorOf<'apiKey'> | ActorOf<'adminSession'> | ActorOf<'public'>;

/**
 * The guest a registration's invitation names: a guest of one of the tenant's public events, not
 * declined and not yet linked to a person, whose address (when it has one) is the one registering.
 */
async function invitedGuest(
  tx: Tx,
  tenantId: string,
  invitation: { eventToken: string; guestToken: string },
  email: string,
): Promise<{ id: string }> {
  const event = await eventByToken(tx, invitation.eventToken).catch(() => null);
  const guest =
    event && event.tenantId === tenantId
      ? await tx.guest.findFirst({
          where: { eventId: event.id, guestToken: invitation.guestToken, deletedAt: null },
          select: { id: true, status: true, personId: true, email: true },
        })
      : null;
  if (!guest || guest.status === 'declined') throw notFound('Invitation');
  if (guest.email && guest.email.toLowerCase() !== email.toLowerCase()) {
    throw new AppError(403, 'invitation_required', 'This invitation is for another e-mail address');
  }
  if (guest.personId)
    throw new AppError(409, 'conflict', 'This invitation has already been used to register');
  return { id: guest.id };
}

export function createOnboardingService(
  deps: Pick<
    AppDeps,
    'db' | 'face' | 'gallery' | 'cipher' | 'config' | 'clock' | 'logger' | 'outbox' | 'images'
  >,
) {
  const { prisma } = deps.db;
  const enrollment = createEnrollment(deps);
  const limiter = createRateLimiter(deps.db, deps.clock);

  const limit = (kind: keyof typeof PUBLIC_LIMITS, ip: string) =>
    limiter.enforce(`onboarding:${kind}:${ip}`, PUBLIC_LIMITS[kind]);

  return {
    health(): { status: number; body: OnboardingHealth } {
      const s = deps.face.status();
      const body: OnboardingHealth = {
        status: s.state === 'ready' ? 'ok' : s.state,
        modelId: s.modelId,
        workers: s.workers,
        ...(s.reason ? { reason: s.reason } : {}),
      };
      return { status: s.state === 'ready' ? 200 : 503, body };
    },

    /** Person + identity + enrollment in one transaction; the face is checked before it opens. */
    async onboard(ctx: PersonContext, input: OnboardingRequest): Promise<OnboardingResult> {
      const { age_policy } = await getTenantSettings(deps.db, ctx.tenantId);
      const birthDate = birthDateOf(input.birthDate);
      checkRegistrationAge(age_policy, birthDate, deps.clock.now());
      const guardianConsent = checkEnrollmentAge(
        age_policy,
        birthDate,
        deps.clock.now(),
        input.guardianConsent,
      );
      const face = await enrollment.check(ctx.tenantId, enrollmentFrames(input), null);
      const personId = newId();
      const stored = await enrollment.store(ctx.tenantId, personId, face);
      const now = deps.clock.now();
      let result: { identityId: string };
      try {
        result = await prisma.$transaction(async (tx) => {
          await tx.person.create({
            data: { id: personId, ...newPersonRow(ctx.tenantId, input, now) },
          });
          const identity = await createIdentity(tx, { tenantId: ctx.tenantId, personId, now });
          await stored.write(tx);
          await recordAudit(tx, {
            tenantId: ctx.tenantId,
            actorType: ctx.actorType,
            actorId: ctx.actorId,
            action: 'person.onboarded',
            targetType: 'person',
            targetId: personId,
            metadata: {
              identityId: identity.id,
              quality: face.quality,
              modelId: face.modelId,
              ...(guardianConsent ? { guardianConsent: guardianConsent.relationship } : {}),
            },
            ip: ctx.ip,
            requestId: ctx.requestId,
          });
          return { identityId: identity.id };
        });
      } catch (error) {
        await stored.rolledBack();
        if (isUniqueViolation(error)) {
          throw new AppError(409, 'conflict', 'Another person of this tenant already has this externalId');
        }
        throw error;
      }
      await stored.committed();
      deps.outbox.notify();
      const person = await prisma.person.findUniqueOrThrow({
        where: { id: personId },
        include: withIdentity,
      });
      return {
        person: toPersonWire(person),
        identityId: result.identityId,
        quality: face.quality,
        photos: face.photos.length,
        modelId: face.modelId,
      };
    },

    /**
     * Public self-registration, as the tenant's `selfRegistration` allows: `off` refuses; `invitation`
     * takes only a guest invitation of one of its events (the person is linked to that guest) and
     * answers the enrollment token; `open_verified` takes anyone but mails the enrollment link to the
     * address given instead of answering it, so only that mailbox's holder can enroll a face.
     */
    async register(
      input: RegisterRequest,
      meta: RequestMeta,
      acceptLanguage: string | null = null,
    ): Promise<{ status: 201; body: RegisterResult } | { status: 202; body: RegistrationPending }> {
      await limit('register', meta.ip);
      const tenant = await tenantBySlug(deps.db, input.tenantSlug);
      const now = deps.clock.now();
      const { age_policy, selfRegistration } = await getTenantSettings(deps.db, tenant.id);
      if (selfRegistration === 'off') {
        throw new AppError(403, 'self_registration_off', 'This organisation does not take self-registration');
      }
      if (selfRegistration === 'invitation' && !input.invitation) {
        throw new AppError(
          403,
          'invitation_required',
          'This organisation takes registrations only from the guests it invited (invitation)',
        );
      }
      checkRegistrationAge(age_policy, birthDateOf(input.birthDate), now);
      const answer = await prisma.$transaction(async (tx) => {
        const guest = input.invitation
          ? await invitedGuest(tx, tenant.id, input.invitation, input.email)
          : null;
        const person = await tx.person.create({
          data: { id: newId(), ...newPersonRow(tenant.id, input, now) },
        });
        await createIdentity(tx, { tenantId: tenant.id, personId: person.id, now });
        if (guest) {
          // A new change number, so devices' replicas pick the link up with the guest's next delta.
          await tx.$executeRaw`
            UPDATE guests SET person_id = ${person.id}, change_seq = nextval('guests_change_seq_seq'),
                   updated_at = ${now}
             WHERE id = ${guest.id}`;
        }
        const token = await issueEnrollmentToken(tx, {
          tenantId: tenant.id,
          personId: person.id,
          purpose: 'self_registration',
          now,
        });
        const verified = selfRegistration === 'open_verified' && !guest;
        await recordAudit(tx, {
          tenantId: tenant.id,
          actorType: 'public',
          action: 'person.registered',
          targetType: 'person',
          targetId: person.id,
          metadata: guest ? { by: 'invitation', guestId: guest.id } : { by: 'email_link' },
          ip: meta.ip,
          requestId: meta.requestId,
        });
        if (verified) {
          // No event here: the person's saved language, the browser's, then the tenant's; the end in
          // UTC, named in words.
          const { organisation, locale: lang } = await personLocaleOf(tx, {
            tenantId: tenant.id,
            email: input.email,
            browser: acceptLanguage,
          });
          const link = `${deps.config.publicUrl.replace(/\/$/, '')}/enroll?token=${encodeURIComponent(token.token)}`;
          await enqueueMail(
            tx,
            deps,
            registrationConfirmMail(lang, {
              to: input.email,
              name: input.name,
              organisation: organisation.name,
              link,
              until: writtenWhen(lang, token.expiresAt, 'UTC', now),
            }),
            now,
          );
          return {
            status: 202 as const,
            body: { status: 'verification_sent' as const, expiresAt: token.expiresAt.toISOString() },
          };
        }
        return {
          status: 201 as const,
          body: {
            personId: person.id,
            enrollment_token: token.token,
            expiresAt: token.expiresAt.toISOString(),
          },
        };
      });
      if (answer.status === 202) deps.outbox.notify();
      return answer;
    },

    async verifyToken(
      token: string,
      meta: RequestMeta,
      acceptLanguage: string | null = null,
    ): Promise<VerifyTokenResult> {
      await limit('verify', meta.ip);
      const row = await usableToken(prisma, token, deps.clock.now());
      // No event here: the person's saved language, the browser's, then the tenant's default.
      const person = await prisma.person.findUnique({ where: { id: row.personId }, select: { email: true } });
      const { organisation, locale } = await personLocaleOf(prisma, {
        tenantId: row.tenantId,
        email: person?.email ?? null,
        browser: acceptLanguage,
      });
      return {
        valid: true,
        personId: row.personId,
        expiresAt: row.expiresAt.toISOString(),
        organisation: { name: organisation.name },
        locale,
      };
    },

    /**
     * Authorised by an enrollment token bound to `personId` (consumed on success), by an API key of the
     * person's tenant or by an admin session of it. Re-enrollment replaces the template and the image.
     */
    async enroll(caller: EnrollCaller, input: EnrollRequest, meta: RequestMeta): Promise<EnrollResult> {
      const now = deps.clock.now();
      let tenantId: string;
      let tokenId: string | null = null;
      if (input.enrollment_token !== undefined) {
        if (caller.kind === 'public') await limit('enroll', meta.ip);
        const row = await usableToken(prisma, input.enrollment_token, now);
        if (
          row.personId !== input.personId ||
          (caller.kind !== 'public' && caller.tenantId !== row.tenantId)
        ) {
          throw new AppError(400, 'invalid_token', 'This enrollment token is not for this person');
        }
        tenantId = row.tenantId;
        tokenId = row.id;
      } else if (caller.kind !== 'public') {
        tenantId = caller.tenantId;
      } else {
        throw new AppError(
          401,
          'unauthorized',
          'Send an enrollment_token, an integrator API key or an admin session',
          {
            headers: { 'WWW-Authenticate': 'Bearer' },
          },
        );
      }
      const person = await prisma.person.findFirst({ where: { id: input.personId, tenantId } });
      if (!person) throw notFound('Person');
      if (person.anonymisedAt) throw new AppError(409, 'conflict', 'The person was anonymised');
      const { age_policy } = await getTenantSettings(deps.db, tenantId);
      const guardianConsent = checkEnrollmentAge(age_policy, person.birthDate, now, input.guardianConsent);

      // A link's holder is not told that the face is enrolled for someone else (enrollment.ts).
      const anonymous = caller.kind === 'public' ? { ip: meta.ip, requestId: meta.requestId } : undefined;
      const face = await enrollment.check(tenantId, enrollmentFrames(input), person.id, anonymous);
      const stored = await enrollment.store(tenantId, person.id, face);
      try {
        await prisma.$transaction(async (tx) => {
          if (tokenId) await consumeToken(tx, tokenId, now);
          await stored.write(tx);
          await recordAudit(tx, {
            tenantId,
            ...auditActorOf(caller),
            action: person.enrolledAt ? 'person.reenrolled' : 'person.enrolled',
            targetType: 'person',
            targetId: person.id,
            metadata: {
              quality: face.quality,
              modelId: face.modelId,
              viaToken: tokenId !== null,
              ...(guardianConsent ? { guardianConsent: guardianConsent.relationship } : {}),
            },
            ip: meta.ip,
            requestId: meta.requestId,
          });
        });
      } catch (error) {
        await stored.rolledBack();
        // Two enrollments of the same person at once: the unique template per person and model lets one win.
        if (isUniqueViolation(error))
          throw new AppError(409, 'conflict', 'Another enrollment of this person is in progress');
        throw error;
      }
      await stored.committed();
      deps.outbox.notify();
      return {
        personId: person.id,
        quality: face.quality,
        photos: face.photos.length,
        enrolled: true,
        modelId: face.modelId,
      };
    },
  };
}
