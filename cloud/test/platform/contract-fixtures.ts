// The real resources the contract run's requests name: a tenant with its admin, an API key, an
// enrolled person with a portal account, an open event with guests, a device; path parameters are
// filled from them by parameter name or resource kind (`fixtureKey`), and operations that use up what
// they name (deletions, rotations, single-use tokens) get a fresh one per request from the factories.
import { randomUUID } from 'node:crypto';
import { newId } from '../../src/infra/db/index.js';
import { hashPassword } from '../../src/modules/auth/passwords.js';
import { integratorOf } from '../persons/support.js';
import { waitForMail } from '../portal/support.js';
import type { TestApp } from '../support/app.js';
import { base64, cleanPhotos, facelessPng } from '../support/faces.js';
import { bearer, login, PASSWORD, totp } from '../support/identity.js';
import type { SmtpSink } from '../support/smtp.js';

/** Caller kinds, as the route declarations name them. */
export type Caller = 'public' | 'apiKey' | 'adminSession' | 'portal' | 'device';

/** The OpenAPI security scheme names, as caller kinds (a device sends both of its schemes). */
export const CALLER_OF_SCHEME: Record<string, Caller> = {
  adminSession: 'adminSession',
  apiKey: 'apiKey',
  portalJwt: 'portal',
  internalSecret: 'device',
  deviceToken: 'device',
};

/**
 * The fixture a path parameter takes: `id` and `token` by the resource before them
 * (`/v1/events/{id}` -> `events/id`, `/v1/public/checkin/qr/{token}` -> `qr/token`), any other
 * parameter by its name (`guestId`, `tenantSlug`, `eventToken`, ...).
 */
export function fixtureKey(path: string, name: string): string {
  if (name !== 'id' && name !== 'token') return name;
  const segments = path.split('/');
  return `${segments[segments.indexOf(`{${name}}`) - 1]}/${name}`;
}

export type Headers = Record<string, string>;

interface Guest {
  id: string;
  guestToken: string;
  checkinUrl: string;
}

async function expectStatus<T>(
  what: string,
  status: number | number[],
  res: Promise<{ status: number; text: string; body: T }>,
): Promise<T> {
  const answer = await res;
  if (![status].flat().includes(answer.status))
    throw new Error(`set-up: ${what} answered ${answer.status}: ${answer.text}`);
  return answer.body;
}

export async function createFixtures(
  app: TestApp & { smtp: SmtpSink },
  withFaces: boolean,
  webhookUrl: string,
) {
  // Set-up requests come from addresses of their own (documentation ranges, through the test
  // server's trusted loopback proxy), so the per-address abuse limits, tested elsewhere, never stop a run.
  let clients = 0;
  const client = (): Headers => ({
    'x-forwarded-for': `198.51.${Math.floor(clients / 250) % 250}.${clients++ % 250}`,
  });
  const call = (method: string, path: string, init: { headers?: Headers; body?: unknown } = {}) =>
    app.request(method, path, { ...init, headers: { ...client(), ...init.headers } });
  const org = await integratorOf(app);
  const admin = org.headers;
  const apiKey = org.keyHeaders;
  // The same photo may be enrolled for several persons, a single frame is enough at the door, devices
  // send their frames, and webhooks go to a local receiver (so there are deliveries to list).
  await expectStatus(
    'settings',
    200,
    call('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: admin,
      body: { allowDuplicateFaces: true, requireLiveness: false, syncCheckinImages: true, webhookUrl },
    }),
  );
  // Operations that change the tenant itself (name, settings) act on a tenant of their own.
  const scratch = await integratorOf(app);

  const photos = withFaces ? await cleanPhotos() : [];
  const faceFrame = photos[0] ? base64(photos[0].bytes) : base64(await facelessPng());

  let serial = 0;
  const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${serial++}`;

  const newPerson = async (fields: Record<string, unknown> = {}) => {
    const tag = unique('p');
    return expectStatus<{ id: string; identityId: string; email: string | null }>(
      'create a person',
      201,
      call('POST', '/v1/persons', {
        headers: apiKey,
        body: { name: 'Contract Person', document: tag, externalId: tag, ...fields },
      }),
    );
  };
  const enroll = (personId: string) =>
    expectStatus(
      'enroll',
      200,
      call('POST', '/v1/public/onboarding/enroll', { headers: apiKey, body: { personId, frame: faceFrame } }),
    );

  const newEvent = async (status: 'draft' | 'published' | 'open' = 'open') => {
    const event = await expectStatus<{ id: string; publicToken: string }>(
      'create an event',
      201,
      call('POST', '/v1/events', {
        headers: apiKey,
        body: { name: unique('Contract Gala'), checkinMethods: ['facial', 'qr', 'link', 'manual'] },
      }),
    );
    if (status !== 'draft') {
      await expectStatus(
        'publish the event',
        200,
        call('PATCH', `/v1/events/${event.id}/status`, { headers: apiKey, body: { status } }),
      );
    }
    return event;
  };
  const newGuest = async (eventId: string, fields: Record<string, unknown> = {}) =>
    expectStatus<Guest>(
      'add a guest',
      201,
      call('POST', `/v1/events/${eventId}/guests`, {
        headers: apiKey,
        body: { name: 'Contract Guest', email: `${unique('g')}@example.com`, ...fields },
      }),
    );
  const linkToken = (guest: Guest) => guest.checkinUrl.split('/').pop()!;

  const newApplication = async () => {
    const created = await expectStatus<{ application: { id: string }; apiKey: { id: string; key: string } }>(
      'create an application',
      201,
      call('POST', '/v1/applications', { headers: admin, body: { name: unique('app') } }),
    );
    return { id: created.application.id, keyId: created.apiKey.id, key: created.apiKey.key };
  };
  const newDevice = () =>
    expectStatus<{ id: string; token: string }>(
      'register a device',
      201,
      call('POST', '/v1/devices', { headers: admin, body: { name: unique('door') } }),
    );
  const deviceHeaders = (token: string): Headers => ({
    'x-internal-secret': app.deps.secrets.internalSecret,
    'x-device-token': token,
  });

  const passwordHash = await hashPassword(PASSWORD);
  /** A user of the main tenant of its own (MFA and session operations change their user). */
  const newUser = async () => {
    const email = `${unique('user')}@contract.example.com`;
    await app.deps.db.prisma.user.create({
      data: {
        id: newId(),
        tenantId: org.tenantId,
        email,
        passwordHash,
        role: 'admin',
      },
    });
    const session = await login(app, email, PASSWORD, client());
    if (!session.token) throw new Error(`set-up: login of ${email} failed: ${session.res.text}`);
    return { email, headers: bearer(session.token), refresh: session.refresh };
  };
  /** A user with MFA on: its TOTP secret, and an MFA ticket from a fresh login. */
  const newMfaUser = async () => {
    const user = await newUser();
    const setup = await expectStatus<{ secret: string }>(
      'MFA setup',
      200,
      call('POST', '/v1/auth/mfa/setup', { headers: user.headers }),
    );
    await expectStatus(
      'MFA enable',
      200,
      call('POST', '/v1/auth/mfa/enable', {
        headers: user.headers,
        body: { code: await totp(setup.secret, new Date()) },
      }),
    );
    const again = await login(app, user.email, PASSWORD, client());
    return { ...user, secret: setup.secret, mfaTicket: again.res.body?.mfaTicket as string };
  };

  /** The portal through the e-mailed magic link: a person of the tenant with an address of its own. */
  const magicLinkToken = async (email: string) => {
    // The run signs in more often than the hourly per-address limit allows; the limit has its own test.
    await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
    await expectStatus('magic link', 202, call('POST', '/v1/portal/auth/magic-link', { body: { email } }));
    const mail = await waitForMail(app.smtp, email, /portal\/login\?token=/);
    return /\/portal\/login\?token=(ml_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
  };
  const newPortalPerson = async () => {
    const email = `${unique('portal')}@example.com`;
    const person = await newPerson({ email });
    const verified = await expectStatus<{ accessToken: string }>(
      'magic link verify',
      200,
      call('GET', `/v1/portal/auth/magic-link/verify?token=${await magicLinkToken(email)}`),
    );
    return { email, personId: person.id, headers: bearer(verified.accessToken) };
  };
  const deletionConfirmToken = async (portal: { email: string; headers: Headers }) => {
    await expectStatus(
      'deletion request',
      201,
      call('POST', '/v1/me/deletion-request', { headers: portal.headers }),
    );
    const mail = await waitForMail(app.smtp, portal.email, /Confirm the deletion of your data/);
    return /token to the portal: (dc_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
  };

  // The standing resources.
  const person = await newPerson({ email: `${unique('main')}@example.com` });
  if (withFaces) await enroll(person.id);
  const qr = await expectStatus<{ token: string }>(
    'QR token',
    [200, 201],
    call('GET', `/v1/checkin/identities/${person.identityId}/qr-token`, { headers: apiKey }),
  );
  const event = await newEvent('open');
  const guest = await newGuest(event.id, { status: 'confirmed' });
  const application = await newApplication();
  const device = await newDevice();
  const portal = await newPortalPerson();
  await expectStatus(
    'portal photo',
    200,
    call('PATCH', '/v1/me', { headers: portal.headers, body: { photo: faceFrame } }),
  );
  const portalSessions = await expectStatus<{ items: { id: string }[] }>(
    'portal sessions',
    200,
    call('GET', '/v1/me/sessions', { headers: portal.headers }),
  );
  // The portal person's own photo (the portal reads images from every tenant holding the address).
  if (withFaces) await enroll(portal.personId);
  const images = await expectStatus<{ items: { id: string }[] }>(
    'biometric images',
    200,
    call('GET', '/v1/me/biometric-images', { headers: portal.headers }),
  );

  // A check-in a device synced with its frame, and a webhook delivery.
  const synced = { clientId: randomUUID(), frame: base64(await facelessPng()) };
  const sync = await expectStatus<{ results: { status: string }[] }>(
    'sync with a frame',
    200,
    call('POST', '/v1/sync/batch', {
      headers: deviceHeaders(device.token),
      body: {
        items: [
          {
            ...synced,
            eventId: event.id,
            personId: person.id,
            method: 'qr',
            outcome: 'success',
            recordedAt: new Date(Date.now() - 60_000).toISOString(),
          },
        ],
      },
    }),
  );
  if (sync.results[0]?.status !== 'accepted') throw new Error(`set-up: sync: ${JSON.stringify(sync)}`);
  await expectStatus('test webhook', 202, call('POST', '/v1/admin/webhooks/test', { headers: admin }));
  const deliveries = await expectStatus<{ items: { id: string }[] }>(
    'webhook deliveries',
    200,
    call('GET', '/v1/admin/webhook-deliveries', { headers: admin }),
  );

  const credentials: Record<Caller, Headers> = {
    public: {},
    apiKey,
    adminSession: admin,
    portal: portal.headers,
    device: deviceHeaders(device.token),
  };

  /** Path parameter values by `fixtureKey`. */
  const params: Record<string, string> = {
    'applications/id': application.id,
    keyId: application.keyId,
    'tenants/id': org.tenantId,
    tenantId: org.tenantId,
    tenantSlug: org.tenant.slug,
    'persons/id': person.id,
    identityId: person.identityId,
    'qr/token': qr.token,
    'events/id': event.id,
    'events/token': event.publicToken,
    eventToken: event.publicToken,
    guestId: guest.id,
    guestToken: guest.guestToken,
    'link/token': linkToken(guest),
    'devices/id': device.id,
    'sessions/id': portalSessions.items[0]!.id,
    'checkins/id': synced.clientId,
    'webhook-deliveries/id': deliveries.items[0]!.id,
    'biometric-images/id': images.items[0]?.id ?? 'no-image-without-the-face-engine',
  };

  return {
    app,
    call,
    org,
    scratch,
    apiKey,
    credentials,
    params,
    person,
    event,
    portal,
    faceFrame,
    enrollsFaces: withFaces,
    unique,
    newPerson,
    enroll,
    newEvent,
    newGuest,
    linkToken,
    newApplication,
    newDevice,
    newUser,
    newMfaUser,
    magicLinkToken,
    newPortalPerson,
    deletionConfirmToken,
    /** The next time step's code: accepted (30 s tolerance) after the current one was used. */
    nextTotp: (secret: string) => totp(secret, new Date(Date.now() + 30_000)),
  };
}

export type Fixtures = Awaited<ReturnType<typeof createFixtures>>;
