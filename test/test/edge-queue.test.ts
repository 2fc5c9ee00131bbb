// The device agent's durable queue with the real cloud: decisions taken offline survive a SIGKILL,
// drain by themselves when the cloud returns, arrive exactly once, and fire webhooks marked offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOf } from '@portico/test-support/identity';
import { startWebhookReceiver, type WebhookReceiver } from '@portico/test-support/webhook-receiver';
import {
  agentCall,
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../support/edge.js';

describe('device agent queue (real cloud on PGlite, agent as a child process)', () => {
  let cloud: Cloud;
  let receiver: WebhookReceiver;
  let agent: AgentProcess | undefined;
  let env: Record<string, string>;
  let event: { id: string; publicToken: string };
  let admin: Awaited<ReturnType<typeof adminOf>>;
  const guests: { id: string; checkinUrl: string }[] = [];

  beforeAll(async () => {
    cloud = await startCloud();
    receiver = await startWebhookReceiver();
    admin = await adminOf(cloud.app);
    await cloud.app.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
      body: { webhookUrl: receiver.url },
    });
    event = await openEvent(cloud.app, admin.headers, { name: 'Expo' });
    for (const name of ['Ana Lima', 'Bruno Reis', 'Carla Dias']) {
      guests.push(await confirmedGuest(cloud.app, admin.headers, event.id, { name }));
    }
    const token = await deviceToken(cloud.app, admin.headers, 'Gate 1');
    env = await agentEnv(cloud.url, token, [event.publicToken]);
  });
  afterAll(async () => {
    await agent?.kill('SIGKILL');
    await receiver.close();
    await cloud.close();
  });

  it('replicates, decides offline, keeps its queue through a SIGKILL and drains it exactly once when the cloud returns', async () => {
    agent = await startAgentProcess(env);
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.events[0].guests === 3,
      20_000,
      'replica',
    );
    expect((await agentCall(agent, 'GET', '/status')).body.online).toBe(true);

    await cloud.down();
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.online === false,
      10_000,
      'offline',
    );
    const admitted = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guests[0]!.checkinUrl,
    });
    expect(admitted.status).toBe(200);
    expect(admitted.body).toMatchObject({ outcome: 'success', guest: { displayName: 'Ana' } });
    const again = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: guests[1]!.checkinUrl,
    });
    const stranger = await agentCall(agent, 'POST', `/events/${event.publicToken}/qr`, {
      code: 'https://x.example/forged-token',
    });
    expect(stranger.body).toMatchObject({ outcome: 'denied', reason: 'not_recognised', guest: null });
    // Killed right after answering: whatever it answered must already be on disk.
    await agent.kill('SIGKILL');

    agent = await startAgentProcess(env);
    const status = (await agentCall(agent, 'GET', '/status')).body;
    expect(status).toMatchObject({ online: false, queueLength: 3 });
    expect(status.events[0].guests).toBe(3);

    await cloud.up();
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
      20_000,
      'queue drained',
    );
    const ids = [admitted.body.checkInId, again.body.checkInId, stranger.body.checkInId];
    const rows = await cloud.app.deps.db.prisma.checkIn.findMany({ where: { id: { in: ids } } });
    expect(rows.map((r) => [r.id, r.outcome, r.source]).sort()).toEqual(
      [
        [admitted.body.checkInId, 'success', 'sync'],
        [again.body.checkInId, 'success', 'sync'],
        [stranger.body.checkInId, 'denied', 'sync'],
      ].sort(),
    );
    expect(rows.find((r) => r.id === admitted.body.checkInId)!.occurredAt.toISOString()).toBe(
      admitted.body.recordedAt,
    );
    const hook = await receiver.waitForBody((b) => b.data?.checkInId === admitted.body.checkInId, 10_000);
    expect(hook).toMatchObject({
      event: 'checkin.success',
      data: { offline: true, recordedAt: admitted.body.recordedAt, guestId: guests[0]!.id },
    });
    expect(await cloud.app.deps.db.prisma.checkIn.count({ where: { eventId: event.id } })).toBe(3);
  });

  it('a guest admitted again by a second kiosk is recorded again, unflagged under the default reentry (allow)', async () => {
    const token = await deviceToken(cloud.app, admin.headers, 'Gate 2');
    const other = await startAgentProcess(await agentEnv(cloud.url, token, [event.publicToken]));
    try {
      // Gate 2 loses the cloud and admits Ana again, as the cloud itself would for a second scan.
      await until(
        async () => (await agentCall(other, 'GET', '/status')).body.events[0].guests === 3,
        20_000,
        'replica',
      );
      await cloud.down();
      await until(
        async () => (await agentCall(other, 'GET', '/status')).body.online === false,
        10_000,
        'offline',
      );
      const second = await agentCall(other, 'POST', `/events/${event.publicToken}/qr`, {
        code: guests[0]!.checkinUrl,
      });
      expect(second.body.outcome).toBe('success');
      await cloud.up();
      await until(
        async () => (await agentCall(other, 'GET', '/status')).body.queueLength === 0,
        20_000,
        'drained',
      );
      const row = await cloud.app.deps.db.prisma.checkIn.findUniqueOrThrow({
        where: { id: second.body.checkInId },
      });
      // The event lets guests back in (reentry allow): a return is no disagreement (edge-reentry.test.ts
      // shows refuse and flag).
      expect(row.conflict).toBeNull();
      expect(await cloud.app.deps.db.prisma.checkIn.count({ where: { eventId: event.id } })).toBe(4);
      const hook = await receiver.waitForBody((b) => b.data?.checkInId === second.body.checkInId, 10_000);
      expect(hook.data).toMatchObject({ source: 'sync', offline: true, flags: [] });
    } finally {
      await other.kill('SIGKILL');
    }
  });

  it('stops admitting by face once its replica is older than the maximum age, and says why; QR goes on', async () => {
    const token = await deviceToken(cloud.app, admin.headers, 'Gate 3');
    const stale = await startAgentProcess(
      await agentEnv(cloud.url, token, [event.publicToken], { MAX_REPLICA_AGE_S: '1' }),
    );
    try {
      await until(
        async () => (await agentCall(stale, 'GET', '/status')).body.events[0].faceAdmission,
        20_000,
        'replica',
      );
      await cloud.down();
      await until(
        async () => !(await agentCall(stale, 'GET', '/status')).body.events[0].faceAdmission,
        10_000,
        'stale',
      );
      const face = await agentCall(stale, 'POST', `/events/${event.publicToken}/identify`, {
        frames: ['AAAA'],
      });
      expect(face.status).toBe(409);
      expect(face.body.code).toBe('replica_too_old');
      const qr = await agentCall(stale, 'POST', `/events/${event.publicToken}/qr`, {
        code: guests[2]!.checkinUrl,
      });
      expect(qr.body.outcome).toBe('success');
      expect((await agentCall(stale, 'GET', '/status')).body.queueLength).toBe(1);
    } finally {
      await stale.kill('SIGKILL');
      await cloud.up();
    }
  });

  it('streams its status as server-sent events, a new one after each decision', async () => {
    const controller = new AbortController();
    const res = await fetch(`${agent!.url}/status/stream`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const events: { queueLength: number; online: boolean }[] = [];
    let buffered = '';
    const next = async () => {
      while (!buffered.includes('\n\n')) buffered += new TextDecoder().decode((await reader.read()).value);
      const [first, ...rest] = buffered.split('\n\n');
      buffered = rest.join('\n\n');
      events.push(JSON.parse(first!.replace(/^data: /, '')));
    };
    await next();
    expect(events[0]).toMatchObject({ online: expect.any(Boolean), queueLength: expect.any(Number) });
    await agentCall(agent!, 'POST', `/events/${event.publicToken}/qr`, { code: 'unknown-code' });
    await next();
    expect(events).toHaveLength(2);
    controller.abort();
  });

  it('serves its own OpenAPI document at /docs-json', async () => {
    const doc = await agentCall(agent!, 'GET', '/docs-json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/status',
        '/status/stream',
        '/challenge',
        '/events/{token}/identify',
        '/events/{token}/qr',
      ]),
    );
  });
});
