// What the service writes to its log: one structured line per request with its request id, and never
// a password, token, API key, secret or frame, whatever the caller sends.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/infra/logger.js';
import { adminOf, bearer, PASSWORD } from '../support/identity.js';
import { createTestApp, type TestApp } from '../support/app.js';

describe('logs', () => {
  const lines: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    t = await createTestApp({ logger: createLogger('trace', sink) });
  });
  afterAll(() => t.close());

  it('logs each request with its id and never the credentials or frames it carried', async () => {
    const admin = await adminOf(t);
    const app = await t.request('POST', '/v1/applications', {
      body: { name: 'logs' },
      headers: admin.headers,
    });
    const apiKey: string = app.body.apiKey?.key ?? app.body.key;
    const frame = Buffer.from('\x89PNG\r\n\x1a\n' + 'x'.repeat(64)).toString('base64');
    const identify = await t.request('POST', `/v1/public/checkin/${admin.tenant.slug}/identify`, {
      body: { frame, nonce: 'a.b.c' },
      headers: { ...bearer(apiKey), 'x-request-id': 'trace-logging-123' },
    });
    expect(identify.status).toBeGreaterThanOrEqual(400);
    await t.request('GET', '/v1/health/live', {
      headers: { 'x-internal-secret': t.deps.secrets.internalSecret },
    });
    await t.request('POST', '/v1/auth/login', {
      body: { email: admin.tenant.adminEmail, password: 'wrong-password-xyz' },
    });

    const log = lines.join('\n');
    const request = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === 'trace-logging-123');
    expect(request).toMatchObject({ msg: 'request', method: 'POST', status: identify.status });
    for (const secret of [
      PASSWORD,
      'wrong-password-xyz',
      admin.token,
      admin.refresh!,
      apiKey,
      admin.tenant.webhookSecret,
      t.deps.secrets.internalSecret,
      frame.slice(0, 24),
    ]) {
      expect(log).not.toContain(secret);
    }
  });
});
