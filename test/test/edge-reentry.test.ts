// Re-entry and true sync fields with the real cloud and the real agent: the kiosk applies the event's
// `reentry` rule from its replica as the cloud does (allow, refuse, flag), a synced `already_checked_in`
// flag means a real disagreement (two kiosks apart under `refuse`, every return under `flag`), and the
// webhooks of uploaded check-ins carry `source`, `late_upload`, `recordedAt` and an `offline` that is
// true only when the kiosk decided with the cloud down.
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

type Reentry = 'allow' | 'refuse' | 'flag';
type Guest = { id: string; checkinUrl: string };

describe('re-entry at the kiosk (real cloud on PGlite, agents as child processes)', () => {
  let cloud: Cloud;
  let receiver: WebhookReceiver;
  let admin: Awaited<ReturnType<typeof adminOf>>;
  const events = {} as Record<Reentry, { id: string; publicToken: string; ana: Guest; bruno: Guest }>;
  const agents: AgentProcess[] = [];

  const status = async (agent: AgentProcess) => (await agentCall(agent, 'GET', '/status')).body;
  const qr = (agent: AgentProcess, reentry: Reentry, guest: Guest) =>
    agentCall(agent, 'POST', `/events/${events[reentry].publicToken}/qr`, { code: guest.checkinUrl });
  const hookOf = (checkInId: string) => receiver.waitForBody((b) => b.data?.checkInId === checkInId, 15_000);
  const drained = (agent: AgentProcess) =>
    until(async () => (await status(agent)).queueLength === 0, 20_000, 'queue drained');

  /** An agent serving the three events, once its replicas hold their guests and it is online. */
  async function startGate(name: string) {
    const token = await deviceToken(cloud.app, admin.headers, name);
    const tokens = Object.values(events).map((e) => e.publicToken);
    const agent = await startAgentProcess(await agentEnv(cloud.url, token, tokens));
    agents.push(agent);
    await until(
      async () => {
        const s = await status(agent);
        return s.online && s.events.length === 3 && s.events.every((e: { guests: number }) => e.guests === 2);
      },
      20_000,
      'replicas',
    );
    return agent;
  }

  beforeAll(async () => {
    cloud = await startCloud();
    receiver = await startWebhookReceiver();
    admin = await adminOf(cloud.app);
    await cloud.app.request('PATCH', `/v1/tenants/${admin.tenant.tenantId}/settings`, {
      headers: admin.headers,
      body: { webhookUrl: receiver.url },
    });
    for (const reentry of ['allow', 'refuse', 'flag'] as const) {
      const event = await openEvent(cloud.app, admin.headers, { name: `Fair (${reentry})`, reentry });
      const ana = await confirmedGuest(cloud.app, admin.headers, event.id, { name: 'Ana Lima' });
      const bruno = await confirmedGuest(cloud.app, admin.headers, event.id, { name: 'Bruno Reis' });
      events[reentry] = { ...event, ana, bruno };
    }
  });
  afterAll(async () => {
    for (const agent of agents) await agent.kill('SIGKILL');
    await receiver?.close();
    await cloud?.close();
  });

  it('decides a returning guest by the event’s rule, with the cloud up, and uploads it as decided online', async () => {
    const gate = await startGate('Gate 1');
    const answers = {} as Record<Reentry, { first: any; again: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- agent answers
    for (const reentry of ['allow', 'refuse', 'flag'] as const) {
      const first = await qr(gate, reentry, events[reentry].ana);
      expect(first.body, reentry).toMatchObject({ outcome: 'success', guest: { displayName: 'Ana' } });
      answers[reentry] = { first: first.body, again: (await qr(gate, reentry, events[reentry].ana)).body };
    }
    expect(answers.allow.again).toMatchObject({ outcome: 'success', reason: null });
    expect(answers.refuse.again).toMatchObject({
      outcome: 'denied',
      reason: 'already_checked_in',
      // The one denial that names the guest: the kiosk says "Ana, you are already checked in".
      guest: { displayName: 'Ana' },
    });
    expect(answers.flag.again).toMatchObject({ outcome: 'success', reason: null });
    await drained(gate);

    for (const reentry of ['allow', 'refuse', 'flag'] as const) {
      const { first, again } = answers[reentry];
      const firstHook = await hookOf(first.checkInId);
      expect(firstHook, reentry).toMatchObject({
        event: 'checkin.success',
        data: {
          guestId: events[reentry].ana.id,
          source: 'sync',
          offline: false,
          late_upload: false,
          recordedAt: first.recordedAt,
          flags: [],
        },
      });
      const againHook = await hookOf(again.checkInId);
      expect(againHook.event, reentry).toBe(reentry === 'refuse' ? 'checkin.denied' : 'checkin.success');
      expect(againHook.data, reentry).toMatchObject({
        source: 'sync',
        offline: false,
        recordedAt: again.recordedAt,
      });
      // Only `flag` flags a return; a refusal at the kiosk is what the cloud would have decided.
      expect(againHook.data.flags, reentry).toEqual(reentry === 'flag' ? ['already_checked_in'] : []);
    }
  });

  it('under refuse, two kiosks that admitted the same guest while apart are flagged already_checked_in, marked offline', async () => {
    const [one, two] = [await startGate('Gate 2'), await startGate('Gate 3')];
    await cloud.down();
    for (const gate of [one, two]) await until(async () => !(await status(gate)).online, 10_000, 'offline');
    const admitted = [];
    for (const gate of [one, two]) {
      const res = await qr(gate, 'refuse', events.refuse.bruno);
      expect(res.body).toMatchObject({ outcome: 'success', guest: { displayName: 'Bruno' } });
      admitted.push(res.body);
    }
    // Each kiosk knows its own admission: Bruno coming back to the same kiosk is refused there.
    expect((await qr(one, 'refuse', events.refuse.bruno)).body).toMatchObject({
      outcome: 'denied',
      reason: 'already_checked_in',
    });
    await cloud.up();
    await drained(one);
    await drained(two);

    const hooks = await Promise.all(admitted.map((a) => hookOf(a.checkInId)));
    for (const [i, hook] of hooks.entries()) {
      expect(hook).toMatchObject({
        event: 'checkin.success',
        data: { source: 'sync', offline: true, late_upload: false, recordedAt: admitted[i].recordedAt },
      });
    }
    // Whichever arrived second disagrees with the first: one flag, on one of the two.
    expect(hooks.map((h) => h.data.flags).sort()).toEqual([[], ['already_checked_in']]);
  });

  it('under allow, a guest admitted by a second kiosk while apart is recorded again without a flag', async () => {
    const gate = await startGate('Gate 4');
    await cloud.down();
    await until(async () => !(await status(gate)).online, 10_000, 'offline');
    // Ana was admitted by Gate 1 before; this kiosk's replica knows it and lets her back in.
    const again = await qr(gate, 'allow', events.allow.ana);
    expect(again.body).toMatchObject({ outcome: 'success', guest: { displayName: 'Ana' } });
    await cloud.up();
    await drained(gate);
    expect((await hookOf(again.body.checkInId)).data).toMatchObject({
      source: 'sync',
      offline: true,
      flags: [],
    });
  });
});
