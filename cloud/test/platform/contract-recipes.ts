// How the contract run reaches each operation of /docs-json with a request it should accept: who
// calls, and what in the generated request must name real things. Everything a recipe does not set
// is generated from the operation's documented schemas. An operation without a recipe fails the run,
// so a route added later is noticed; `{}` is a recipe (the documented caller and the fixtures).
import { randomUUID } from 'node:crypto';
import { PASSWORD } from '../support/identity.js';
import { waitForMail } from '../portal/support.js';
import type { Caller, Fixtures, Headers } from './contract-fixtures.js';

/** What a recipe sets in a request, over what was generated. */
export interface Parts {
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Headers;
  body: Record<string, unknown>;
  /** A body that is not JSON (an upload). */
  raw: { type: string; text: string };
}

export interface Recipe {
  /** Who calls; default: the first caller kind the operation documents, the public when none. */
  as?: Caller;
  /**
   * Runs before every request: makes what the request uses up (the person it deletes, a single-use
   * token) and answers the parts to set.
   */
  prepare?: (f: Fixtures) => Promise<Partial<Parts>>;
  /** Adjusts the generated query: parameters that go together in ways the schema cannot say. */
  query?: (generated: Record<string, string>) => Record<string, string>;
  /** Adjusts the generated JSON body: fields that must name real things, or be unique. */
  body?: (generated: Record<string, unknown>, f: Fixtures) => Record<string, unknown>;
  /**
   * The operation needs the face engine, or what it makes (a stored photo): without the models it
   * answers 503 `engine_unavailable` or finds nothing, and is excused from answering 2xx.
   */
  faces?: true;
  /** Why no generated request can be answered 2xx (listed in the run's output). */
  no2xx?: string;
}

const without = (o: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const freshPortal = async (f: Fixtures) => ({ headers: (await f.newPortalPerson()).headers });

/** A member of the main tenant of their own: a new admin user's id. */
async function teamMember(f: Fixtures): Promise<string> {
  const { email } = await f.newUser();
  return (await f.app.deps.db.prisma.user.findFirstOrThrow({ where: { email } })).id;
}

/** A fresh invitation of the main tenant: the invited member's id and the token mailed to them. */
async function invitation(f: Fixtures): Promise<{ id: string; token: string }> {
  const email = `${f.unique('invitee')}@contract.example.com`;
  const invited = await f.call('POST', '/v1/team/members', {
    headers: f.credentials.adminSession,
    body: { email, role: 'operator' },
  });
  if (invited.status !== 201) throw new Error(`set-up: invitation of ${email}: ${invited.text}`);
  const mail = await waitForMail(f.app.smtp, email, /accept-invite\?token=/);
  const token = /#\/accept-invite\?token=(inv_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
  return { id: (invited.body as { id: string }).id, token };
}

export const RECIPES: Record<string, Recipe> = {
  // Health
  healthLive: {},
  healthReady: {},

  // Admin sessions: the operations that change a user get a user of their own.
  authLogin: {
    prepare: async (f) => ({ body: { email: f.org.tenant.adminEmail, password: PASSWORD } }),
  },
  authRefresh: {
    prepare: async (f) => ({ headers: { cookie: `portico_refresh=${(await f.newUser()).refresh}` } }),
  },
  authLogout: {
    as: 'adminSession',
    prepare: async (f) => {
      const user = await f.newUser();
      return { headers: { ...user.headers, cookie: `portico_refresh=${user.refresh}` } };
    },
  },
  authMe: {},
  authProducts: {},
  authMfaSetup: { prepare: async (f) => ({ headers: (await f.newUser()).headers }) },
  authMfaEnable: {
    prepare: async (f) => {
      const user = await f.newUser();
      const setup = await f.call('POST', '/v1/auth/mfa/setup', { headers: user.headers });
      return { headers: user.headers, body: { code: await f.nextTotp(setup.body.secret as string) } };
    },
  },
  authMfaVerify: {
    prepare: async (f) => {
      const user = await f.newMfaUser();
      return { body: { mfaTicket: user.mfaTicket, code: await f.nextTotp(user.secret) } };
    },
    // A TOTP code or a recovery code, never both.
    body: (g) => without(g, 'recoveryCode'),
  },
  authRecoveryCodesState: { prepare: async (f) => ({ headers: (await f.newMfaUser()).headers }) },
  authRecoveryCodesRegenerate: {
    prepare: async (f) => ({ headers: (await f.newMfaUser()).headers, body: { password: PASSWORD } }),
    body: (g) => without(g, 'code'),
  },
  authPasswordForgot: {
    prepare: async (f) => {
      // The run asks more often than the hourly limits allow; the limits have their own test.
      await f.app.deps.db.prisma.rateLimitBucket.deleteMany({
        where: { key: { startsWith: 'password-reset:' } },
      });
      return { body: { email: (await f.newUser()).email } };
    },
  },
  authPasswordReset: {
    prepare: async (f) => {
      await f.app.deps.db.prisma.rateLimitBucket.deleteMany({
        where: { key: { startsWith: 'password-reset:' } },
      });
      const { email } = await f.newUser();
      await f.call('POST', '/v1/auth/password/forgot', { body: { email } });
      const mail = await waitForMail(f.app.smtp, email, /reset-password\?token=/);
      const token = decodeURIComponent(/reset-password\?token=(\S+)/.exec(mail)![1]!);
      return { body: { token, password: 'a long enough new password' } };
    },
  },
  authMfaDisable: {
    prepare: async (f) => {
      const user = await f.newMfaUser();
      return { headers: user.headers, body: { code: await f.nextTotp(user.secret) } };
    },
  },

  // Applications and API keys
  listApplications: {},
  createApplication: {},
  deleteApplication: { prepare: async (f) => ({ params: { id: (await f.newApplication()).id } }) },
  listApiKeys: {},
  createApiKey: {},
  rotateApiKey: {
    prepare: async (f) => {
      const app = await f.newApplication();
      return { params: { id: app.id, keyId: app.keyId } };
    },
  },
  revokeApiKey: {
    prepare: async (f) => {
      const app = await f.newApplication();
      return { params: { id: app.id, keyId: app.keyId } };
    },
  },

  // Tenants: changes go to a tenant of their own, so the others' settings stay as set up.
  getTenant: {},
  updateTenant: {
    prepare: async (f) => ({ params: { id: f.scratch.tenantId }, headers: f.scratch.headers }),
  },
  getTenantSettings: {},
  getSandbox: {},
  resetSandbox: {},
  updateTenantSettings: {
    prepare: async (f) => ({ params: { id: f.scratch.tenantId }, headers: f.scratch.headers }),
    // A generated URL would be a host on the internet: no deliveries from this run.
    body: (g) => ({ ...g, webhookUrl: null }),
  },

  // Persons
  listPersons: {},
  createPerson: { body: (g, f) => ({ ...g, document: f.unique('doc') }) },
  upsertPerson: {},
  importPersons: {},
  getPerson: {},
  updatePerson: { prepare: async (f) => ({ params: { id: (await f.newPerson()).id } }) },
  deletePerson: { prepare: async (f) => ({ params: { id: (await f.newPerson()).id } }) },
  anonymisePerson: { prepare: async (f) => ({ params: { id: (await f.newPerson()).id } }) },
  sendEnrollmentLink: {
    prepare: async (f) => ({
      params: { id: (await f.newPerson({ email: `${f.unique('link')}@example.com` })).id },
    }),
  },

  // Onboarding and enrollment
  onboardPerson: {
    faces: true,
    body: (g, f) => ({
      ...without(g, 'frames', 'guardianConsent', 'birthDate'),
      document: f.unique('doc'),
      frame: f.faceFrame,
    }),
  },
  onboardingHealth: { faces: true },
  registerPerson: {
    // Open registration with the address verified (202); the invited form is what register() uses.
    prepare: async (f) => {
      await f.call('PATCH', `/v1/tenants/${f.org.tenantId}/settings`, {
        headers: f.apiKey,
        body: { selfRegistration: 'open_verified' },
      });
      return {};
    },
    body: (g, f) => ({ ...without(g, 'birthDate', 'invitation'), tenantSlug: f.org.tenant.slug }),
  },
  verifyEnrollmentToken: {
    prepare: async (f) => ({ body: { enrollment_token: (await register(f)).enrollment_token } }),
  },
  enrollFace: {
    faces: true,
    prepare: async (f) => {
      const { personId, enrollment_token } = await register(f);
      return { body: { personId, enrollment_token, frame: f.faceFrame } };
    },
    body: (g) => without(g, 'frames', 'guardianConsent'),
  },

  // Check-in
  checkinLivenessChallenge: {},
  checkinIdentify: {
    // A tenant takes identification from its API keys only by default (identifyCallers).
    as: 'apiKey',
    faces: true,
    body: (g, f) => ({ ...without(g, 'nonce', 'location'), frame: f.faceFrame, eventId: f.event.id }),
  },
  checkinStepUp: {
    as: 'apiKey',
    // Each attempt is spent once: a fresh one per request, as identify opens it between the lines.
    prepare: async (f) => {
      const attemptId = randomUUID();
      await f.app.deps.db.prisma.stepUpAttempt.create({
        data: {
          id: attemptId,
          tenantId: f.org.tenantId,
          personId: f.person.id,
          score: 0.5,
          expiresAt: new Date(Date.now() + 60_000),
        },
      });
      return { params: { attemptId } };
    },
    body: () => ({ factor: 'staff' }),
  },
  checkinGetQrToken: {},
  checkinRevokeQrToken: {
    prepare: async (f) => {
      const { identityId } = await f.newPerson();
      await f.call('GET', `/v1/checkin/identities/${identityId}/qr-token`, { headers: f.apiKey });
      return { params: { identityId } };
    },
  },
  checkinByQr: {
    prepare: async (f) => {
      const person = await f.newPerson();
      await f.newGuest(f.event.id, { personId: person.id, status: 'confirmed' });
      const qr = await f.call('GET', `/v1/checkin/identities/${person.identityId}/qr-token`, {
        headers: f.apiKey,
      });
      return { params: { token: qr.body.token as string }, query: { eventId: f.event.id } };
    },
  },
  checkinManual: {
    body: (g, f) => ({ ...without(g, 'guestId'), personId: f.person.id, eventId: f.event.id }),
  },
  voidCheckin: {
    prepare: async (f) => {
      const guest = await f.newGuest(f.event.id, { status: 'confirmed' });
      const checkin = await f.call('POST', '/v1/checkin/manual', {
        headers: f.org.headers,
        body: { guestId: guest.id, eventId: f.event.id },
      });
      return { params: { checkInId: checkin.body.checkInId as string } };
    },
    body: (g) => ({ ...g, reason: 'Wrong guest ticked' }),
  },

  // Events
  listEvents: {},
  createEvent: { body: (g) => eventRules(g) },
  getEvent: {},
  updateEvent: {
    prepare: async (f) => ({ params: { id: (await f.newEvent('draft')).id } }),
    body: (g) => eventRules(g),
  },
  deleteEvent: { prepare: async (f) => ({ params: { id: (await f.newEvent('draft')).id } }) },
  configureEvent: { prepare: async (f) => ({ params: { id: (await f.newEvent('draft')).id } }) },
  setEventStatus: { prepare: async (f) => ({ params: { id: (await f.newEvent('draft')).id } }) },
  getEventBranding: {},
  createEventListToken: {},
  revokeEventListToken: {
    prepare: async (f) => {
      const event = await f.newEvent('published');
      await f.call('POST', `/v1/events/${event.id}/list-token`, { headers: f.apiKey });
      return { params: { id: event.id } };
    },
  },

  // Guests
  listGuests: {},
  getEventAttendance: {},
  getEventArrivals: {},
  createGuest: { body: (g) => without(g, 'personId') },
  updateGuest: {
    prepare: async (f) => ({ params: { guestId: (await f.newGuest(f.event.id)).id } }),
    body: (g) => without(g, 'personId'),
  },
  deleteGuest: { prepare: async (f) => ({ params: { guestId: (await f.newGuest(f.event.id)).id } }) },
  importGuests: {
    prepare: async (f) => {
      const boundary = 'contractrun7MA4YWxk';
      const csv = `name,email\nAna Souza,${f.unique('csv')}@example.com\nBruno Lima,\n`;
      return {
        raw: {
          type: `multipart/form-data; boundary=${boundary}`,
          text:
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="guests.csv"\r\n` +
            `Content-Type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`,
        },
      };
    },
  },
  inviteGuests: {
    prepare: async (f) => ({ body: { guestIds: [(await f.newGuest(f.event.id)).id] } }),
  },
  reinviteGuests: {
    prepare: async (f) => ({
      body: { guestIds: [(await f.newGuest(f.event.id, { status: 'invited' })).id] },
    }),
  },
  getGuestByToken: {},
  confirmGuest: {
    prepare: async (f) => ({ params: { guestToken: (await f.newGuest(f.event.id)).guestToken } }),
  },
  declineGuest: {
    prepare: async (f) => ({ params: { guestToken: (await f.newGuest(f.event.id)).guestToken } }),
  },
  getConfirmedList: {
    // The event token names the event; the list token (made by an admin) is the credential.
    prepare: async (f) => {
      const made = await f.call('POST', `/v1/events/${f.event.id}/list-token`, { headers: f.apiKey });
      return { headers: { 'x-list-token': String(made.body.token) } };
    },
  },
  checkinByLink: {
    prepare: async (f) => ({
      params: { token: f.linkToken(await f.newGuest(f.event.id, { status: 'confirmed' })) },
    }),
  },
  getLinkLanding: {},
  getGuestCalendar: {
    // A calendar entry needs a start: the shared event gets one.
    prepare: async (f) => {
      await f.call('PATCH', `/v1/events/${f.event.id}`, {
        headers: f.apiKey,
        body: { startsAt: '2026-12-01T18:00:00.000Z' },
      });
      return {};
    },
  },

  // Devices and sync
  registerDevice: {},
  listDevices: {},
  revokeDevice: { prepare: async (f) => ({ params: { id: (await f.newDevice()).id } }) },
  renameDevice: {},
  // Events must be the tenant's own: the generated ids name none.
  setDeviceEvents: { body: (_g, f) => ({ eventIds: [f.event.id] }) },
  createPairingCode: { body: (g, f) => ({ ...g, eventIds: [f.event.id] }) },
  pairDevice: {
    prepare: async (f) => {
      const made = await f.call('POST', '/v1/devices/pairing-codes', {
        headers: f.credentials.adminSession,
        body: { name: 'Contract door' },
      });
      return { body: { code: String(made.body.code) } };
    },
  },
  getSyncDevice: {},
  syncBatch: {
    // The document lets an item be anything (a malformed one is rejected in its result): the generated
    // ones that are not objects become SyncItems here.
    body: (g, f) => ({
      items: ((g.items as unknown[] | undefined) ?? []).map((item) => ({
        method: 'qr',
        outcome: 'success',
        ...without(isObject(item) ? item : {}, 'frame', 'guestId'),
        clientId: randomUUID(),
        eventId: f.event.id,
        personId: f.person.id,
        recordedAt: new Date(Date.now() - 60_000).toISOString(),
      })),
    }),
  },
  getEventReplica: {},

  // Admin console (admin sessions only)
  adminListCheckins: {},
  adminExportCheckins: {},
  adminStreamCheckins: {},
  adminGetCheckinImage: {},
  // A day (`tz`, an IANA time zone) or a period (`from` and `to`), never both.
  adminStatsToday: {
    query: ({ tz, from, to }): Record<string, string> =>
      tz || !from || !to ? { tz: 'America/Sao_Paulo' } : { from, to },
  },
  adminAuditLog: {},
  adminListWebhookDeliveries: {},
  adminRedeliverWebhook: {},
  adminGetWebhookDelivery: {},
  // Only a delivery waiting for its next attempt can be tried now: the run's receiver answers 2xx, so
  // one is put back to waiting (as a failed attempt leaves it) before each request.
  adminRetryWebhookDelivery: {
    prepare: async (f) => {
      const id = f.params['webhook-deliveries/id']!;
      await f.app.deps.db.prisma.webhookDelivery.update({
        where: { id },
        data: { status: 'pending', nextAttemptAt: new Date(Date.now() + 60_000), lockedUntil: null },
      });
      return { params: { id } };
    },
  },
  adminSendTestWebhook: {},
  adminBusInfo: {},
  adminFaceQuality: { faces: true, body: (g, f) => ({ ...g, image: f.faceFrame }) },

  // Team: each request gets a member of its own (the main admin is never changed).
  listTeamMembers: {},
  inviteTeamMember: {
    body: (g, f) => ({
      ...without(g, 'language'),
      email: `${f.unique('invitee')}@contract.example.com`,
      role: 'operator',
    }),
  },
  changeTeamMemberRole: {
    prepare: async (f) => ({ params: { id: await teamMember(f) }, body: { role: 'operator' } }),
  },
  deactivateTeamMember: { prepare: async (f) => ({ params: { id: await teamMember(f) } }) },
  reactivateTeamMember: {
    prepare: async (f) => {
      const id = await teamMember(f);
      await f.call('POST', `/v1/team/members/${id}/deactivate`, { headers: f.credentials.adminSession });
      return { params: { id } };
    },
  },
  resendTeamInvitation: { prepare: async (f) => ({ params: { id: (await invitation(f)).id } }) },
  readTeamInvitation: { prepare: async (f) => ({ body: { token: (await invitation(f)).token } }) },
  acceptTeamInvitation: {
    prepare: async (f) => ({
      body: { token: (await invitation(f)).token, name: 'Rita Alves', password: PASSWORD },
    }),
  },

  // Person portal
  requestPortalMagicLink: {},
  verifyPortalMagicLink: {
    prepare: async (f) => ({ query: { token: await f.magicLinkToken(f.portal.email) } }),
  },
  getMe: {},
  listMyOrganisations: {},
  updateMe: { body: (g, f) => ({ ...g, photo: f.faceFrame }) },
  getMyPhoto: {},
  listMySessions: {},
  endMySession: {
    prepare: async (f) => {
      const other = await f.call(
        'GET',
        `/v1/portal/auth/magic-link/verify?token=${await f.magicLinkToken(f.portal.email)}`,
      );
      const sessions = await f.call('GET', '/v1/me/sessions', {
        headers: { authorization: `Bearer ${other.body.accessToken}` },
      });
      const current = (sessions.body.items as { id: string; current: boolean }[]).find((s) => s.current);
      return { params: { id: current!.id } };
    },
  },
  listMyBiometrics: {},
  revokeMyBiometrics: {
    prepare: async (f) => {
      const portal = await f.newPortalPerson();
      if (f.enrollsFaces) await f.enroll(portal.personId);
      return { headers: portal.headers };
    },
  },
  listMyCheckins: {},
  getMyNotificationPreferences: {},
  updateMyNotificationPreferences: {},
  listMyBiometricImages: {},
  getMyBiometricImageFile: { faces: true },
  requestMyDeletion: { prepare: freshPortal },
  getMyDeletionRequest: {
    prepare: async (f) => {
      const portal = await f.newPortalPerson();
      await f.deletionConfirmToken(portal);
      return { headers: portal.headers };
    },
  },
  cancelMyDeletionRequest: {
    prepare: async (f) => {
      const portal = await f.newPortalPerson();
      await f.deletionConfirmToken(portal);
      return { headers: portal.headers };
    },
  },
  confirmMyDeletion: {
    prepare: async (f) => ({ body: { token: await f.deletionConfirmToken(await f.newPortalPerson()) } }),
  },
  requestMyDataExport: { prepare: freshPortal },
  downloadMyDataExport: {
    prepare: async (f) => {
      const portal = await f.newPortalPerson();
      await f.call('POST', '/v1/me/data-export', { headers: portal.headers, body: {} });
      const mail = await waitForMail(f.app.smtp, portal.email, /Your data export is ready/);
      const link = /\/v1\/portal\/data-exports\/([^/\s]+)\/download\?(\S+)/.exec(mail)!;
      return { params: { id: link[1]! }, query: Object.fromEntries(new URLSearchParams(link[2]!)) };
    },
  },
};

/** What an event's fields must also satisfy beyond their schemas: an IANA time zone, an end not before the start. */
function eventRules(g: Record<string, unknown>): Record<string, unknown> {
  const out = { ...g };
  if (typeof out.timeZone === 'string') out.timeZone = 'America/Sao_Paulo';
  if (typeof out.startsAt === 'string' && typeof out.endsAt === 'string' && out.endsAt < out.startsAt)
    [out.startsAt, out.endsAt] = [out.endsAt, out.startsAt];
  return out;
}

/**
 * A person registered on the public onboarding page by a guest invitation (the form that answers the
 * enrollment token), at the scratch tenant: its id and single-use enrollment token.
 */
async function register(f: Fixtures): Promise<{ personId: string; enrollment_token: string }> {
  const headers = f.scratch.keyHeaders;
  await f.call('PATCH', `/v1/tenants/${f.scratch.tenantId}/settings`, {
    headers,
    body: { selfRegistration: 'invitation' },
  });
  const event = await f.call('POST', '/v1/events', { headers, body: { name: 'Invitations' } });
  await f.call('PATCH', `/v1/events/${event.body.id}/status`, { headers, body: { status: 'published' } });
  const email = `${f.unique('reg')}@example.com`;
  const guest = await f.call('POST', `/v1/events/${event.body.id}/guests`, {
    headers,
    body: { name: 'Contract Registrant', email },
  });
  const res = await f.call('POST', '/v1/public/onboarding/register', {
    body: {
      tenantSlug: f.scratch.tenant.slug,
      name: 'Contract Registrant',
      document: f.unique('reg'),
      email,
      invitation: { eventToken: event.body.publicToken, guestToken: guest.body.guestToken },
    },
  });
  if (res.status !== 201) throw new Error(`set-up: register answered ${res.status}: ${res.text}`);
  return res.body;
}
