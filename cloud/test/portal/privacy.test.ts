// Data protection (contract 4.10): the deletion request from the portal to the erasure of every
// tenant's record (bus message seen by a real MQTT client, confirmation by e-mail, bytes scanned
// afterwards), cancellation, a restart during the grace period, and the data export archive.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import JSZip from 'jszip';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';
import { serviceLogin } from '../support/bus.js';
import { createTestDatabase } from '../support/database.js';
import { TestClock } from '../support/identity.js';
import { startSmtpSink } from '../support/smtp.js';
import {
  adminHeaders,
  enrollDirectly,
  fakeJpeg,
  PUBLIC_URL,
  sha256,
  signIn,
  startPortalApp,
  tenantWithPerson,
  waitForMail,
  type PortalApp,
} from './support.js';

const HOUR = 3_600_000;

/** Every row of every table of the database, as text. */
async function databaseText(app: PortalApp): Promise<string> {
  const { prisma } = app.deps.db;
  const tables = await prisma.$queryRaw<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await prisma.$queryRawUnsafe<{ row: string }[]>(
      `SELECT t::text AS row FROM "${table_name}" t`,
    );
    parts.push(...rows.map((r) => `${table_name}: ${r.row}`));
  }
  return parts.join('\n');
}

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

async function confirmToken(app: PortalApp, email: string): Promise<string> {
  const mail = await waitForMail(app.smtp, email, /Confirm the deletion of your data/);
  return /token to the portal: (dc_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('deletion request with a zero grace period', () => {
  let app: PortalApp;
  beforeAll(async () => {
    app = await startPortalApp({ DELETION_GRACE_HOURS: '0' });
  });
  afterAll(() => app?.close());

  const person = {
    name: 'Zulmira Quintanilha',
    document: 'ZQ-918273',
    email: 'zulmira.q@example.com',
    phone: '+55 11 98888-7777',
    birthDate: '1987-03-14',
  };

  it('publishes identity.deletion_requested, confirms by the e-mailed token and erases every tenant’s record', async () => {
    const a = await tenantWithPerson(app, person);
    const b = await tenantWithPerson(app, { ...person, externalId: 'hr-77' });
    const photo = fakeJpeg();
    const enrolled = [
      await enrollDirectly(app, a.tenantId, a.personId, photo),
      await enrollDirectly(app, b.tenantId, b.personId, fakeJpeg()),
    ];
    const admin = await adminHeaders(app, a);
    const checkin = await app.request('POST', '/v1/checkin/manual', {
      headers: admin,
      body: { personId: a.personId },
    });
    expect(checkin.status, checkin.text).toBe(200);
    const event = await app.request('POST', '/v1/events', { headers: admin, body: { name: 'Gala' } });
    expect(event.status, event.text).toBe(201);
    const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: admin,
      body: { name: person.name, email: person.email, document: person.document, personId: a.personId },
    });
    expect(guest.status, guest.text).toBe(201);

    const { headers } = await signIn(app, person.email);
    await app.request('PATCH', '/v1/me', { headers, body: { name: person.name, phone: person.phone } });
    // The scan below finds these fields while they are held.
    const before = (await databaseText(app)).toLowerCase();
    for (const field of [person.name, person.document, person.email, person.phone]) {
      expect(before).toContain(field.toLowerCase());
    }

    const bus = await mqtt.connectAsync(app.deps.bus.url, { ...serviceLogin(app), clean: true });
    const seen: { topic: string; body: any }[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    // CI's Mosquitto is shared by the test files running at the same time: only this test's tenants count.
    const ours = new Set(
      [a.tenantId, b.tenantId].map((t) => `portico/v1/tenants/${t}/identity.deletion_requested`),
    );
    try {
      await bus.subscribeAsync('portico/v1/tenants/+/identity.deletion_requested', { qos: 1 });
      bus.on('message', (topic, payload) => {
        if (ours.has(topic)) seen.push({ topic, body: JSON.parse(payload.toString()) });
      });

      const requested = await app.request('POST', '/v1/me/deletion-request', { headers });
      expect(requested.status, requested.text).toBe(201);
      expect(requested.body).toMatchObject({
        status: 'pending_confirmation',
        confirmedAt: null,
        scheduledFor: null,
      });
      await until(
        async () => seen.length,
        (n) => n >= 2,
      );
      expect(seen.map((m) => m.topic).sort()).toEqual(
        [a.tenantId, b.tenantId].map((t) => `portico/v1/tenants/${t}/identity.deletion_requested`).sort(),
      );
      expect(seen[0]!.body).toMatchObject({
        event: 'identity.deletion_requested',
        data: {
          deletionRequestId: requested.body.id,
          tenantIds: expect.arrayContaining([a.tenantId, b.tenantId]),
        },
      });
    } finally {
      await bus.endAsync();
    }

    const again = await app.request('POST', '/v1/me/deletion-request', { headers });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');

    const token = await confirmToken(app, person.email);
    const forged = await app.request('POST', '/v1/portal/auth/deletion-confirm', {
      body: { token: 'dc_forged' },
    });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('invalid_token');
    const confirmed = await app.request('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'confirmed', scheduledFor: confirmed.body.confirmedAt });
    const reused = await app.request('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
    expect(reused.status).toBe(401);
    expect(reused.body.code).toBe('invalid_token');

    const { prisma } = app.deps.db;
    const done = await until(
      () => prisma.deletionRequest.findUniqueOrThrow({ where: { id: confirmed.body.id } }),
      (r) => r.status === 'completed',
    );
    expect(done.completedAt).not.toBeNull();

    // Nothing biometric is left: no template, no image row, no image file.
    const ids = [a.personId, b.personId];
    expect(await prisma.faceTemplate.count({ where: { personId: { in: ids } } })).toBe(0);
    expect(await prisma.biometricImage.count({ where: { tenantId: { in: [a.tenantId, b.tenantId] } } })).toBe(
      0,
    );
    for (const { storageKey } of enrolled) expect(existsSync(app.deps.images.pathOf(storageKey))).toBe(false);
    // Each tenant was told, and keeps a de-identified check-in.
    for (const t of [a, b]) {
      const events = await prisma.outboxEvent.findMany({
        where: { tenantId: t.tenantId, name: 'person.deleted' },
      });
      expect(events.map((e) => e.payload)).toEqual([
        expect.objectContaining({ data: { personId: t.personId, reason: 'anonymised' } }),
      ]);
    }
    const kept = await prisma.checkIn.findUniqueOrThrow({ where: { id: checkin.body.checkInId } });
    expect(kept).toMatchObject({ personId: null, anonymised: true });

    // No plain personal field anywhere in the database or the data directory.
    const needles = [person.name, person.document, person.email, person.phone, '1987-03-14', 'Quintanilha'];
    const text = (await databaseText(app)).toLowerCase();
    for (const needle of needles) expect(text, needle).not.toContain(needle.toLowerCase());
    const files = await filesUnder(app.dataDir);
    for (const file of files) {
      const bytes = (await readFile(file)).toString('latin1').toLowerCase();
      for (const needle of needles)
        expect(bytes.includes(needle.toLowerCase()), `${needle} in ${file}`).toBe(false);
      expect((await readFile(file)).includes(photo.subarray(0, 64)), file).toBe(false);
    }

    // The sessions ended with the account.
    const after = await app.request('GET', '/v1/me', { headers });
    expect(after.status).toBe(401);
  });

  it('cancels a request still waiting for confirmation; its token is then refused', async () => {
    const t = await tenantWithPerson(app, {
      name: 'Cancel Me',
      document: 'CM-1',
      email: 'cancel@example.com',
    });
    const { headers } = await signIn(app, 'cancel@example.com');
    expect((await app.request('POST', '/v1/me/deletion-request', { headers })).status).toBe(201);
    const token = await confirmToken(app, 'cancel@example.com');
    const cancelled = await app.request('DELETE', '/v1/me/deletion-request', { headers });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const status = await app.request('GET', '/v1/me/deletion-request', { headers });
    expect(status.body.status).toBe('cancelled');
    const confirm = await app.request('POST', '/v1/portal/auth/deletion-confirm', { body: { token } });
    expect(confirm.status).toBe(401);
    expect((await app.request('DELETE', '/v1/me/deletion-request', { headers })).status).toBe(404);
    const kept = await app.deps.db.prisma.person.findUniqueOrThrow({ where: { id: t.personId } });
    expect(kept.name).toBe('Cancel Me');
  });

  it('GET without any request is 404', async () => {
    await tenantWithPerson(app, { name: 'Never', document: 'N-1', email: 'never@example.com' });
    const { headers } = await signIn(app, 'never@example.com');
    const res = await app.request('GET', '/v1/me/deletion-request', { headers });
    expect(res.status).toBe(404);
  });
});

describe('deletion request with a grace period', () => {
  it('can be cancelled after confirmation, and a confirmed one is carried out after a restart', async () => {
    const database = await createTestDatabase();
    const clock = new TestClock();
    const smtp = await startSmtpSink();
    const env = { SMTP_URL: smtp.url, PUBLIC_URL, DELETION_GRACE_HOURS: '1' };
    const start = async () => Object.assign(await createTestApp({ clock, database, env }), { clock, smtp });
    try {
      const first = await start();
      const keep = await tenantWithPerson(first, {
        name: 'Changed Mind',
        document: 'K-1',
        email: 'keep@example.com',
      });
      const go = await tenantWithPerson(first, {
        name: 'Leaving Soon',
        document: 'L-1',
        email: 'go@example.com',
      });
      const ids: Record<string, string> = {};
      for (const email of ['keep@example.com', 'go@example.com']) {
        const { headers } = await signIn(first, email);
        await first.request('POST', '/v1/me/deletion-request', { headers });
        const token = await confirmToken(first, email);
        const confirmed = await first.request('POST', '/v1/portal/auth/deletion-confirm', {
          body: { token },
          headers: email === 'keep@example.com' ? headers : {},
        });
        expect(confirmed.body.status).toBe('confirmed');
        expect(Date.parse(confirmed.body.scheduledFor) - Date.parse(confirmed.body.confirmedAt)).toBe(HOUR);
        ids[email] = confirmed.body.id;
        if (email === 'keep@example.com') {
          const cancelled = await first.request('DELETE', '/v1/me/deletion-request', { headers });
          expect(cancelled.body.status).toBe('cancelled');
        }
      }
      await first.close();

      clock.advance(HOUR + 1000);
      const second = await start();
      try {
        const { prisma } = second.deps.db;
        await until(
          () => prisma.deletionRequest.findUniqueOrThrow({ where: { id: ids['go@example.com']! } }),
          (r) => r.status === 'completed',
        );
        expect(
          (await prisma.person.findUniqueOrThrow({ where: { id: go.personId } })).anonymisedAt,
        ).not.toBeNull();
        const kept = await prisma.person.findUniqueOrThrow({ where: { id: keep.personId } });
        expect(kept).toMatchObject({ name: 'Changed Mind', anonymisedAt: null });
        expect(
          (await prisma.deletionRequest.findUniqueOrThrow({ where: { id: ids['keep@example.com']! } }))
            .status,
        ).toBe('cancelled');
      } finally {
        await second.close();
      }
    } finally {
      await smtp.close();
      await database.close();
    }
  });
});

describe('data export', () => {
  let app: PortalApp;
  beforeAll(async () => {
    app = await startPortalApp();
  });
  afterAll(() => app?.close());

  it('builds the archive in the background and mails a signed link; the archive matches the rows', async () => {
    const email = 'export.me@example.com';
    const a = await tenantWithPerson(app, {
      name: 'Export Me',
      document: 'E-1',
      email,
      birthDate: '1990-01-02',
    });
    const b = await tenantWithPerson(app, { name: 'Export M.', document: 'E-2', email });
    const photo = fakeJpeg();
    const { imageId } = await enrollDirectly(app, a.tenantId, a.personId, photo);
    for (const t of [a, b]) {
      const res = await app.request('POST', '/v1/checkin/manual', {
        headers: await adminHeaders(app, t),
        body: { personId: t.personId },
      });
      expect(res.status).toBe(200);
    }
    // A guest list entry with the address but no person linked is the person's data too.
    const admin = await adminHeaders(app, b);
    const event = await app.request('POST', '/v1/events', { headers: admin, body: { name: 'Launch' } });
    const guest = await app.request('POST', `/v1/events/${event.body.id}/guests`, {
      headers: admin,
      body: { name: 'Export Guest', email: email.toUpperCase() },
    });
    expect(guest.status, guest.text).toBe(201);
    const { headers } = await signIn(app, email);
    const requested = await app.request('POST', '/v1/me/data-export', {
      headers,
      body: { includeImages: true },
    });
    expect(requested.status, requested.text).toBe(202);
    expect(requested.body.status).toBe('pending');

    const mail = await waitForMail(app.smtp, email, /Your data export is ready/);
    const link = new RegExp(`${PUBLIC_URL}(/v1/portal/data-exports/[^\\s]+)`).exec(mail)![1]!;
    const res = await fetch(app.url + link);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const zip = await JSZip.loadAsync(Buffer.from(await res.arrayBuffer()));
    const read = async (name: string) => JSON.parse(await zip.file(name)!.async('string'));

    const { prisma } = app.deps.db;
    const persons = await read('persons.json');
    const rows = await prisma.person.findMany({ where: { id: { in: [a.personId, b.personId] } } });
    expect(persons).toHaveLength(2);
    for (const row of rows) {
      expect(persons).toContainEqual(
        expect.objectContaining({
          id: row.id,
          tenantId: row.tenantId,
          name: row.name,
          document: row.document,
          email: row.email,
          birthDate: row.birthDate?.toISOString().slice(0, 10) ?? null,
        }),
      );
    }
    const checkins = await read('checkins.json');
    const checkinRows = await prisma.checkIn.findMany({
      where: { personId: { in: [a.personId, b.personId] } },
    });
    expect(checkins.map((c: { id: string }) => c.id).sort()).toEqual(checkinRows.map((c) => c.id).sort());
    const images = await read('biometric-images.json');
    expect(images).toEqual([expect.objectContaining({ id: imageId, sha256: sha256(photo) })]);
    const file = await zip.file(images[0].file)!.async('nodebuffer');
    expect(file.equals(photo)).toBe(true);
    expect(await read('guests.json')).toEqual([
      expect.objectContaining({ id: guest.body.id, eventName: 'Launch', name: 'Export Guest' }),
    ]);
    expect(await read('profile.json')).toMatchObject({ email });
    expect(await read('consents.json')).toEqual([
      expect.objectContaining({ tenantId: a.tenantId, purpose: 'facial_checkin' }),
    ]);

    // The archive is encrypted at rest.
    const stored = await prisma.dataExport.findUniqueOrThrow({ where: { id: requested.body.id } });
    expect(stored.status).toBe('ready');
    const onDisk = await readFile(path.join(app.dataDir, stored.storageKey!));
    expect(onDisk.subarray(0, 2).toString()).not.toBe('PK');

    const tampered = await app.request('GET', link.replace(/signature=[^&]+/, `signature=${'A'.repeat(43)}`));
    expect(tampered.status).toBe(401);
    expect(tampered.body.code).toBe('invalid_token');

    // After seven days the link lapses and the archive is erased.
    app.clock.advance(7 * 24 * HOUR + 1000);
    const expired = await app.request('GET', link);
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('token_expired');
    await until(
      () => prisma.dataExport.findUniqueOrThrow({ where: { id: requested.body.id } }),
      (r) => r.status === 'expired',
    );
    expect(existsSync(path.join(app.dataDir, stored.storageKey!))).toBe(false);
  });
});
