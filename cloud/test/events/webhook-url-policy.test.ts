// The webhook URL guard (SSRF) on the forms that slip past a plain range check: IPv6 addresses that
// carry a non-public IPv4 address, and hosts that are empty once parsed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitEvent } from '../../src/modules/outbox/emit.js';
import { isPrivateAddress } from '../../src/modules/webhooks/address-policy.js';
import { adminOf, startApp, type IdentityApp } from '../support/identity.js';

describe('webhook URL policy', () => {
  let app: IdentityApp;
  beforeAll(async () => {
    app = await startApp({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
  });
  afterAll(() => app?.close());

  it('refuses IPv6 forms that embed a non-public IPv4 address, and empty hosts, with 400 validation_failed', async () => {
    const a = await adminOf(app);
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    for (const webhookUrl of [
      'http://[::127.0.0.1]/', // IPv4-compatible
      'http://[::10.0.0.1]/hook',
      'http://[::ffff:7f00:1]/hook', // IPv4-mapped, hex
      'http://[::ffff:0:127.0.0.1]/hook', // IPv4-translated
      'http://[2002:7f00:1::]/', // 6to4 of 127.0.0.1
      'http://[2002:a9fe:a9fe::1]/latest/meta-data', // 6to4 of 169.254.169.254
      'http://[64:ff9b::7f00:1]/hook', // NAT64 of 127.0.0.1
      'http://[64:ff9b:1::a00:1]/hook', // local-use NAT64
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', // Teredo of 127.0.0.1
      'http://[fec0::1]/hook', // site-local
      'http://./hook', // host "." is empty
      'http://%2e/hook',
      'http://..../hook',
      'http://a..example.com/hook',
    ]) {
      const res = await app.request('PATCH', url, { headers: a.headers, body: { webhookUrl } });
      expect(res.status, webhookUrl).toBe(400);
      expect(res.body.code, webhookUrl).toBe('validation_failed');
      expect(res.body.errors[0].path, webhookUrl).toBe('body.webhookUrl');
    }
  });

  it('accepts IPv6 forms that carry a public IPv4 address, and ordinary host names', async () => {
    const a = await adminOf(app);
    const url = `/v1/tenants/${a.tenant.tenantId}/settings`;
    for (const webhookUrl of [
      'http://[2002:5db8:d822::1]/hook', // 6to4 of 93.184.216.34
      'http://[64:ff9b::5db8:d822]/hook', // NAT64 of 93.184.216.34
      'http://[2606:4700:4700::1111]/hook',
      'https://hooks.example.com./portico',
    ]) {
      const res = await app.request('PATCH', url, { headers: a.headers, body: { webhookUrl } });
      expect(res.status, `${webhookUrl}: ${res.text}`).toBe(200);
    }
  });

  it('classifies embedded IPv4 forms by the address inside them', () => {
    for (const ip of [
      '::7f00:1',
      '::ffff:7f00:1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
      '64:ff9b::a9fe:a9fe',
    ]) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['2002:808:808::1', '64:ff9b::808:808', '::ffff:808:808']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
  });

  it('does not send to such a URL stored before the policy refused it: the delivery fails without a request', async () => {
    const a = await adminOf(app);
    await app.deps.db.prisma.tenant.update({
      where: { id: a.tenant.tenantId },
      data: { settings: { webhookUrl: 'http://[2002:7f00:1::]:9/hook' } },
    });
    const event = await app.deps.db.prisma.$transaction((tx) =>
      emitEvent(tx, {
        tenantId: a.tenant.tenantId,
        name: 'person.deleted',
        data: { personId: 'p-1', reason: 'deleted' },
        at: app.clock.now(),
      }),
    );
    app.deps.outbox.notify();
    await expect
      .poll(
        async () =>
          (await app.deps.db.prisma.webhookDelivery.findFirstOrThrow({ where: { outboxEventId: event.id } }))
            .status,
      )
      .toBe('failed');
    const attempt = await app.deps.db.prisma.webhookAttempt.findFirstOrThrow({
      where: { delivery: { outboxEventId: event.id } },
    });
    expect(attempt.error).toMatch(/not a public address/);
  });
});
