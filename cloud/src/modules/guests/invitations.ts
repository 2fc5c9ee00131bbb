// Invitations by e-mail: each guest gets their personal confirmation link and check-in link. A guest is
// claimed (a conditional update) before their mail is sent, so concurrent calls mail them once; a mail
// that fails gives the claim back and is reported for that guest only.
import type { Guest } from '../../generated/prisma/client.js';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { createRateLimiter, type RateLimitRule } from '../../http/rate-limit.js';
import { recordAudit } from '../audit/record.js';
import { findEvent, type AdminContext } from '../events/service.js';
import { writtenWhen } from '../pages/language.js';
import { guestLocale } from './locale.js';
import { invitationMail } from './mails.js';
import { guestLinks } from './wire.js';

/** Invite and reinvite calls per event (shared by every API process). */
export const INVITE_LIMIT: RateLimitRule = { limit: 20, windowMs: 10 * 60_000 };
/** Most guests mailed by one call; the answer's `remaining` says how many are left for the next. */
export const INVITE_BATCH = 200;
/** A reinvitation reaches the same guest at most once in this time. */
export const REINVITE_AFTER_MS = 60 * 60_000;

type Kind = 'invite' | 'reinvite';
type Outcome = { guestId: string; status: 'sent' | 'skipped' | 'failed'; reason?: string };

export function createInvitations(deps: Pick<AppDeps, 'db' | 'clock' | 'config' | 'mailer' | 'logger'>) {
  const { prisma } = deps.db;
  const limiter = createRateLimiter(deps.db, deps.clock);

  /** Why `guest` gets no mail from this kind of call, or null when it does. */
  function skipReason(kind: Kind, guest: Guest, now: Date): string | null {
    if (!guest.email) return 'no_email';
    if (guest.status === 'checked_in') return 'checked_in';
    if (kind === 'invite') return guest.inviteCount > 0 ? 'already_invited' : null;
    if (guest.status === 'declined') return 'declined';
    if (guest.invitedAt && now.getTime() - guest.invitedAt.getTime() < REINVITE_AFTER_MS)
      return 'recently_sent';
    return null;
  }

  return {
    /**
     * Without `guestIds`: invite mails every guest never invited (status `pending`); reinvite mails every
     * `invited` guest who has not answered. At most INVITE_BATCH guests per call.
     */
    async send(ctx: AdminContext, eventId: string, kind: Kind, guestIds: string[] | undefined) {
      const event = await findEvent(prisma, ctx.tenantId, eventId);
      // A draft has no public page: its links would answer "not valid" to every guest until published.
      if (event.status === 'draft') {
        throw new AppError(
          409,
          'event_not_published',
          'The event is a draft: publish it before mailing invitations, or their links will not work',
          { extra: { eventStatus: event.status } },
        );
      }
      await limiter.enforce(
        `guests:${kind}:${event.id}`,
        INVITE_LIMIT,
        'Too many invitation calls for this event',
      );
      const now = deps.clock.now();
      const results: Outcome[] = [];
      let candidates: Guest[];
      let remaining = 0;
      if (guestIds) {
        const unique = [...new Set(guestIds)];
        const found = await prisma.guest.findMany({
          where: { id: { in: unique }, eventId: event.id, deletedAt: null },
        });
        const byId = new Map(found.map((g) => [g.id, g]));
        candidates = [];
        for (const id of unique) {
          const g = byId.get(id);
          if (g) candidates.push(g);
          else results.push({ guestId: id, status: 'skipped', reason: 'not_found' });
        }
      } else {
        const where = {
          eventId: event.id,
          deletedAt: null,
          email: { not: null },
          ...(kind === 'invite'
            ? { status: 'pending', inviteCount: 0 }
            : {
                status: 'invited',
                OR: [
                  { invitedAt: null },
                  { invitedAt: { lte: new Date(now.getTime() - REINVITE_AFTER_MS) } },
                ],
              }),
        };
        candidates = await prisma.guest.findMany({
          where,
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          take: INVITE_BATCH,
        });
        remaining = Math.max(0, (await prisma.guest.count({ where })) - candidates.length);
      }
      const extra = candidates.slice(INVITE_BATCH);
      for (const g of extra) results.push({ guestId: g.id, status: 'skipped', reason: 'batch_full' });

      for (const guest of candidates.slice(0, INVITE_BATCH)) {
        const reason = skipReason(kind, guest, now);
        if (reason) {
          results.push({ guestId: guest.id, status: 'skipped', reason });
          continue;
        }
        // The claim: only the call whose update matches the row as read sends the mail.
        const claim = await prisma.guest.updateMany({
          where: { id: guest.id, inviteCount: guest.inviteCount, deletedAt: null },
          data: {
            inviteCount: guest.inviteCount + 1,
            invitedAt: now,
            lastInviteError: null,
            ...(guest.status === 'pending' ? { status: 'invited' } : {}),
          },
        });
        if (claim.count === 0) {
          results.push({ guestId: guest.id, status: 'skipped', reason: 'in_progress' });
          continue;
        }
        const links = guestLinks(deps.config.publicUrl, event, guest);
        try {
          const { organisation, locale } = await guestLocale(prisma, event, guest);
          await deps.mailer.send(
            invitationMail(locale, kind, {
              to: guest.email!,
              name: guest.name,
              organisation: organisation.name,
              event: event.name,
              when: event.startsAt ? writtenWhen(locale, event.startsAt, event.timeZone, now) : null,
              venue: [event.venueName, event.venueAddress].filter(Boolean).join(', ') || null,
              ...links,
            }),
          );
          results.push({ guestId: guest.id, status: 'sent' });
        } catch (error) {
          const message = (error as Error).message?.slice(0, 300) || 'mail failed';
          deps.logger.warn({ guestId: guest.id, err: message }, 'invitation mail failed');
          await prisma.guest.updateMany({
            where: { id: guest.id, inviteCount: guest.inviteCount + 1 },
            data: {
              inviteCount: guest.inviteCount,
              invitedAt: guest.invitedAt,
              status: guest.status,
              lastInviteError: message,
            },
          });
          results.push({ guestId: guest.id, status: 'failed', reason: message });
        }
      }
      const count = (s: Outcome['status']) => results.filter((r) => r.status === s).length;
      const summary = { sent: count('sent'), skipped: count('skipped'), failed: count('failed') };
      await recordAudit(prisma, {
        tenantId: ctx.tenantId,
        actorType: ctx.actorType,
        actorId: ctx.actorId,
        action: `guest.${kind}d`,
        targetType: 'event',
        targetId: event.id,
        metadata: summary,
        ip: ctx.ip,
        requestId: ctx.requestId,
      });
      return { ...summary, remaining, results };
    },
  };
}
