// Wire types of `/v1/team/*`: the tenant's users (list, invite, change role, deactivate, reactivate,
// resend) and the invitation link an invitee opens to set a name and password.
import { ConsoleLanguage, NewPassword, UserRole } from './auth.js';
import { Id, Text, Timestamp } from './common.js';
import { z } from './zod.js';

/** An invitation link works once, for 7 days. */
export const TEAM_INVITATION_TTL_DAYS = 7;

export const TEAM_MEMBER_STATUSES = ['active', 'invited', 'deactivated'] as const;
export const TeamMemberStatus = z.enum(TEAM_MEMBER_STATUSES).openapi('TeamMemberStatus', {
  description:
    '`active` signs in; `invited` was mailed a link and has not set a password yet; `deactivated` cannot ' +
    'sign in (their sessions were ended) until reactivated.',
});
export type TeamMemberStatus = z.infer<typeof TeamMemberStatus>;

export const TeamMember = z
  .object({
    id: Id,
    email: z.string().openapi({ example: 'rita@acme.example' }),
    name: z.string().nullable().openapi({ description: 'Null until the invitee sets it.' }),
    role: UserRole,
    status: TeamMemberStatus,
    mfaEnabled: z.boolean(),
    lastLoginAt: Timestamp.nullable(),
    createdAt: Timestamp,
    invitation: z
      .object({
        sentAt: Timestamp,
        expiresAt: Timestamp,
        expired: z.boolean().openapi({ description: 'The link no longer works: resend it.' }),
      })
      .nullable()
      .openapi({ description: 'The pending link of an `invited` member; null otherwise.' }),
  })
  .openapi('TeamMember', {
    example: {
      id: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11',
      email: 'rita@acme.example',
      name: null,
      role: 'operator',
      status: 'invited',
      mfaEnabled: false,
      lastLoginAt: null,
      createdAt: '2026-11-21T10:15:30.123Z',
      invitation: {
        sentAt: '2026-11-21T10:15:30.123Z',
        expiresAt: '2026-11-28T10:15:30.123Z',
        expired: false,
      },
    },
  });
export type TeamMember = z.infer<typeof TeamMember>;

export const TeamMemberList = z
  .object({ items: z.array(TeamMember) })
  .openapi('TeamMemberList', { description: 'Every user of the tenant: owners first, then by e-mail.' });

export const InviteMemberRequest = z
  .strictObject({
    email: z.email().max(320).openapi({ example: 'rita@acme.example' }),
    role: UserRole,
    language: ConsoleLanguage.optional().openapi({
      description: 'Language of the invitation mail (default: the inviter’s, else `en`).',
    }),
  })
  .openapi('InviteMemberRequest', {
    example: { email: 'rita@acme.example', role: 'operator', language: 'en' },
  });
export type InviteMemberRequest = z.infer<typeof InviteMemberRequest>;

export const ChangeRoleRequest = z
  .strictObject({ role: UserRole })
  .openapi('ChangeRoleRequest', { example: { role: 'admin' } });

export const InvitationTokenRequest = z
  .strictObject({
    token: Text.min(1).max(200).openapi({ description: 'The `token` of the mailed link.', example: 'inv_…' }),
  })
  .openapi('InvitationTokenRequest');

export const InvitationPreview = z
  .object({
    email: z.string(),
    role: UserRole,
    tenant: z.object({ name: z.string() }),
    expiresAt: Timestamp,
    language: ConsoleLanguage,
  })
  .openapi('InvitationPreview', {
    example: {
      email: 'rita@acme.example',
      role: 'operator',
      tenant: { name: 'Acme Events' },
      expiresAt: '2026-11-28T10:15:30.123Z',
      language: 'en',
    },
  });

export const AcceptInvitationRequest = z
  .strictObject({
    token: Text.min(1).max(200).openapi({ example: 'inv_…' }),
    name: Text.trim().min(1).max(200).openapi({ example: 'Rita Alves' }),
    password: NewPassword,
  })
  .openapi('AcceptInvitationRequest');
