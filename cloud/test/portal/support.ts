// Set-up shared by the portal tests: an app that mails through a real SMTP server, persons of several
// tenants with one e-mail address, and signing in through the e-mailed magic link.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import type { TestApp } from '../support/app.js';
import { bearer, login, startApp, type IdentityApp } from '../support/identity.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp.js';
import { integratorOf } from '../persons/support.js';

export const PUBLIC_URL = 'https://portico.example.com';

export interface PortalApp extends IdentityApp {
  smtp: SmtpSink;
}

export async function startPortalApp(env: Record<string, string> = {}): Promise<PortalApp> {
  const smtp = await startSmtpSink();
  const app = await startApp({ SMTP_URL: smtp.url, PUBLIC_URL, ...env });
  const close = app.close;
  return Object.assign(app, {
    smtp,
    async close() {
      await close();
      await smtp.close();
    },
  });
}

/** A raw message's headers and text, quoted-printable decoded (as UTF-8). */
export function decodeMail(raw: string): string {
  const joined = raw.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined[i] === '=' ? /^[0-9A-F]{2}/.exec(joined.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Waits for the next message to `to` whose text matches `pattern`; answers the decoded text. */
export async function waitForMail(smtp: SmtpSink, to: string, pattern: RegExp, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  const seen = new Set<number>();
  for (;;) {
    for (const [i, raw] of smtp.messages.entries()) {
      if (seen.has(i)) continue;
      const text = decodeMail(raw);
      if (new RegExp(`^To: ${to.replace(/[.+]/g, '\\$&')}$`, 'mi').test(text) && pattern.test(text)) {
        smtp.messages.splice(i, 1);
        return text;
      }
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function requestLink(app: TestApp, email: string, extra: Record<string, unknown> = {}) {
  return app.request('POST', '/v1/portal/auth/magic-link', { body: { email, ...extra } });
}

/** The whole sign-in: request a link, read it from the mail, verify it. Answers the bearer headers. */
export async function signIn(app: PortalApp, email: string, headers: Record<string, string> = {}) {
  // Tests sign in more often than the hourly per-address limit allows; the limit has its own test.
  await app.deps.db.prisma.rateLimitBucket.deleteMany({ where: { key: { startsWith: 'portal-link:' } } });
  const res = await requestLink(app, email);
  expect(res.status, res.text).toBe(202);
  const mail = await waitForMail(app.smtp, email, /portal\/login\?token=/);
  const token = /\/portal\/login\?token=(ml_[A-Za-z0-9_-]+)/.exec(mail)![1]!;
  const verified = await app.request(
    'GET',
    `/v1/portal/auth/magic-link/verify?token=${encodeURIComponent(token)}`,
    { headers },
  );
  expect(verified.status, verified.text).toBe(200);
  return { headers: bearer(verified.body.accessToken as string), token, body: verified.body };
}

/** A tenant (with an API key and a webhook receiver URL, if given) and one person of it. */
export async function tenantWithPerson(app: TestApp, person: Record<string, unknown>, webhookUrl?: string) {
  const org = await integratorOf(app);
  if (webhookUrl) {
    const set = await app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { webhookUrl },
    });
    expect(set.status, set.text).toBe(200);
  }
  const created = await app.request('POST', '/v1/persons', { headers: org.keyHeaders, body: person });
  expect(created.status, created.text).toBe(201);
  return { ...org, personId: created.body.id as string };
}

/** An enrollment as the face pipeline leaves it: an encrypted template and an encrypted photo. */
export async function enrollDirectly(app: TestApp, tenantId: string, personId: string, photo: Buffer) {
  const { prisma } = app.deps.db;
  const now = new Date();
  const embedding = Buffer.from(new Float32Array(512).map(() => Math.random()).buffer);
  await prisma.faceTemplate.create({
    data: {
      id: newId(),
      tenantId,
      personId,
      modelId: 'test-model@1',
      embeddingEnc: app.deps.cipher.encrypt(embedding, `face-template:${tenantId}:${personId}`),
      quality: 0.87,
    },
  });
  const imageId = newId();
  const stored = await app.deps.images.save(tenantId, imageId, photo);
  await prisma.biometricImage.create({
    data: {
      id: imageId,
      tenantId,
      personId,
      kind: 'enrollment',
      storageKey: stored.storageKey,
      contentType: 'image/jpeg',
      byteSize: stored.byteSize,
      sha256: stored.sha256,
    },
  });
  await prisma.person.update({ where: { id: personId }, data: { enrolledAt: now } });
  return { imageId, storageKey: stored.storageKey };
}

/** Bytes that start like a JPEG (the portal and the store only look at the type, never decode). */
export function fakeJpeg(size = 2048): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(size)]);
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Admin bearer headers of a tenant, from a fresh login (access tokens last 15 minutes of the test clock). */
export async function adminHeaders(app: TestApp, org: { tenant: { adminEmail: string } }) {
  const { token } = await login(app, org.tenant.adminEmail);
  return bearer(token);
}
