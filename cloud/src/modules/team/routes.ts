import type { Request, Response } from 'express';
import {
  AcceptInvitationRequest,
  ChangeRoleRequest,
  IdParams,
  InvitationPreview,
  InvitationTokenRequest,
  InviteMemberRequest,
  TEAM_INVITATION_TTL_DAYS,
  TeamMember,
  TeamMemberList,
  TokenResponse,
  z,
} from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { refreshCookie } from '../auth/cookie.js';
import { requireManager } from '../auth/roles.js';
import { createInvitationAcceptance } from './acceptance.js';
import type { Language } from './mails.js';
import { createTeamService, type TeamContext } from './service.js';

const TAG = 'Team';
const MANAGERS =
  'Needs the session JWT of a tenant owner or admin (an operator is 403 `forbidden`; an API key is 403 ' +
  '`forbidden` too). The team is the live tenant’s, whichever environment the session is switched to. ';
const NOT_FOUND = {
  status: 404,
  code: 'not_found',
  description: 'no such user in the caller’s tenant (another tenant’s user id included)',
} as const;
const OWNER_ONLY = {
  status: 403,
  code: 'owner_only',
  description: 'an admin tried to make, change or deactivate an owner',
} as const;
const LAST_OWNER = {
  status: 409,
  code: 'last_owner',
  description: 'the change would leave the tenant without an active owner',
} as const;
const LINK_ERRORS = [
  {
    status: 404,
    code: 'invitation_invalid',
    description: 'unknown token, or the link was used, replaced by a resend or withdrawn',
  },
  {
    status: 410,
    code: 'invitation_expired',
    description: `the link is older than ${TEAM_INVITATION_TTL_DAYS} days`,
  },
  {
    status: 429,
    code: 'rate_limited',
    description: 'too many links tried from this address; see Retry-After',
  },
] as const;

const ResendRequest = z
  .strictObject({ language: InviteMemberRequest.shape.language })
  .optional()
  .openapi('ResendInvitationRequest');

/** The console sends its language; else the caller's browser language, else English. */
function languageOf(req: Request, chosen: Language | undefined): Language {
  if (chosen) return chosen;
  return /^\s*pt\b/i.test(req.get('accept-language') ?? '') ? 'pt-BR' : 'en';
}

function contextOf(actor: ActorOf<'adminSession'>, req: Request, res: Response): TeamContext {
  requireManager(actor);
  const meta = requestMeta(req, res);
  return {
    tenantId: actor.liveTenantId,
    userId: actor.userId,
    role: actor.role,
    ip: meta.ip,
    requestId: meta.requestId,
  };
}

export function teamRoutes(deps: AppDeps) {
  const team = createTeamService(deps);
  const acceptance = createInvitationAcceptance(deps);
  const secureCookie = deps.config.env !== 'development' && deps.config.env !== 'test';
  const memberAnswer = (description: string) => ({ 200: { description, schema: TeamMember } });

  return [
    defineRoute({
      method: 'get',
      path: '/v1/team/members',
      operationId: 'listTeamMembers',
      summary: 'List the tenant’s users',
      description:
        `${MANAGERS}Every user with name, e-mail, role, status (\`active\`, \`invited\`, \`deactivated\`), ` +
        'whether two-step verification is on, the last sign-in, and for an invited member when the link was ' +
        'sent and when it expires. Owners first, then admins and operators, each by e-mail.',
      tag: TAG,
      auth: ['adminSession'],
      responses: { 200: { description: 'The whole team', schema: TeamMemberList } },
      handler: async ({ actor, req, res }) => ({
        status: 200,
        body: await team.list(contextOf(actor, req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/members',
      operationId: 'inviteTeamMember',
      summary: 'Invite someone by e-mail with a role',
      description:
        `${MANAGERS}Creates the user as \`invited\` and mails them a single-use link to ` +
        `\`/console#/accept-invite?token=inv_…\`, valid ${TEAM_INVITATION_TTL_DAYS} days; the service keeps ` +
        'only the SHA-256 of the token. The mail is in `language` (default: the caller’s `Accept-Language` ' +
        'if Portuguese, else English). Only an owner may invite an owner. At most 100 invitation mails an ' +
        'hour per tenant. E-mail addresses are unique across tenants: an address with an account in ' +
        'another organisation is 409 `email_in_use`.',
      tag: TAG,
      auth: ['adminSession'],
      body: InviteMemberRequest,
      responses: { 201: { description: 'Invited; the mail is sent', schema: TeamMember } },
      errors: [
        OWNER_ONLY,
        { status: 409, code: 'already_member', description: 'the address is already a member of this team' },
        { status: 409, code: 'email_in_use', description: 'the address has an account in another tenant' },
        { status: 429, code: 'rate_limited', description: 'too many invitation mails; see Retry-After' },
      ],
      handler: async ({ actor, body, req, res }) => ({
        status: 201,
        body: await team.invite(contextOf(actor, req, res), {
          email: body.email,
          role: body.role,
          language: languageOf(req, body.language),
        }),
      }),
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/team/members/{id}',
      operationId: 'changeTeamMemberRole',
      summary: 'Change a member’s role',
      description:
        `${MANAGERS}Only an owner may give the owner role or change an owner’s role. The last active owner ` +
        'cannot be demoted. The member’s sessions end (their tokens stop at once), so the new role applies ' +
        'from their next sign-in. The same role again changes nothing.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      body: ChangeRoleRequest,
      responses: memberAnswer('The member with the new role'),
      errors: [NOT_FOUND, OWNER_ONLY, LAST_OWNER],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await team.changeRole(contextOf(actor, req, res), params.id, body.role),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/members/{id}/deactivate',
      operationId: 'deactivateTeamMember',
      summary: 'Deactivate a member',
      description:
        `${MANAGERS}The member’s sessions end at once and they can no longer sign in (401 ` +
        '`invalid_credentials`, as for a wrong password); a pending invitation link stops working. Nobody ' +
        'deactivates themselves; only an owner deactivates an owner; the last active owner stays. ' +
        'Deactivating a deactivated member changes nothing.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      responses: memberAnswer('The member, deactivated'),
      errors: [
        NOT_FOUND,
        OWNER_ONLY,
        LAST_OWNER,
        { status: 409, code: 'cannot_deactivate_self', description: 'the caller named themselves' },
      ],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await team.deactivate(contextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/members/{id}/reactivate',
      operationId: 'reactivateTeamMember',
      summary: 'Reactivate a deactivated member',
      description:
        `${MANAGERS}The member signs in again with their password; one who never accepted their invitation ` +
        'goes back to `invited` (resend them a link). Only an owner reactivates an owner. Reactivating a ' +
        'member who is not deactivated changes nothing.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      responses: memberAnswer('The member, active or invited'),
      errors: [NOT_FOUND, OWNER_ONLY],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await team.reactivate(contextOf(actor, req, res), params.id),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/members/{id}/resend-invitation',
      operationId: 'resendTeamInvitation',
      summary: 'Mail an invited member a new link',
      description:
        `${MANAGERS}A new single-use link, valid ${TEAM_INVITATION_TTL_DAYS} days from now; the previous one ` +
        'stops working. The body is optional: `language` of the mail (default: the previous mail’s). At most ' +
        '5 resends an hour per member.',
      tag: TAG,
      auth: ['adminSession'],
      params: IdParams,
      body: ResendRequest,
      responses: memberAnswer('The member with the new link’s dates'),
      errors: [
        NOT_FOUND,
        OWNER_ONLY,
        { status: 409, code: 'not_invited', description: 'the member is active or deactivated' },
        { status: 429, code: 'rate_limited', description: 'too many invitation mails; see Retry-After' },
      ],
      handler: async ({ actor, params, body, req, res }) => ({
        status: 200,
        body: await team.resend(contextOf(actor, req, res), params.id, body?.language),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/invitations/lookup',
      operationId: 'readTeamInvitation',
      summary: 'Read an invitation link before accepting it',
      description:
        'For the acceptance page, without credentials: whose team, which address and role, until when. ' +
        'The token travels in the body (the link carries it in the URL fragment), so it stays out of ' +
        'access logs. 30 link reads and acceptances per client address in 15 minutes.',
      tag: TAG,
      auth: ['public'],
      body: InvitationTokenRequest,
      responses: { 200: { description: 'The invitation', schema: InvitationPreview } },
      errors: LINK_ERRORS,
      handler: async ({ body, req, res }) => ({
        status: 200,
        body: await acceptance.preview(body.token, requestMeta(req, res)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/team/invitations/accept',
      operationId: 'acceptTeamInvitation',
      summary: 'Accept an invitation: set a name and password, and sign in',
      description:
        'Without credentials. The password follows the service’s rule (12 to 256 characters). The link ' +
        'is spent, the member becomes `active` and is signed in: the answer is a login’s (`accessToken`, ' +
        'the `portico_refresh` cookie). When the tenant requires two-step verification of owners and admins, ' +
        'an invited owner or admin gets a session that first has to set it up, as after a login.',
      tag: TAG,
      auth: ['public'],
      body: AcceptInvitationRequest,
      responses: { 200: { description: 'Signed in; a refresh cookie is set', schema: TokenResponse } },
      errors: LINK_ERRORS,
      handler: async ({ body, req, res }) => {
        const session = await acceptance.accept(body, requestMeta(req, res));
        return {
          status: 200,
          body: session.tokens,
          headers: {
            'Set-Cookie': refreshCookie(
              session.refreshToken,
              session.refreshExpiresAt,
              deps.clock.now(),
              secureCookie,
            ),
          },
        };
      },
    }),
  ];
}
