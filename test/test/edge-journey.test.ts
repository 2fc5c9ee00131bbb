// The edge journey with real photos: the cloud enrolls guests' faces, the agent replicates the event
// with their templates, the cloud goes away, the agent keeps recognising enrolled guests from other
// photos and refusing strangers, is SIGKILLed with its decisions queued, restarts, and when the cloud
// returns every decision arrives once with its webhook marked offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceEngine } from '@portico/face-engine';
import { integratorOf } from '../../cloud/test/persons/support.js';
import {
  base64,
  HAS_LABELLED,
  HAS_MODELS,
  LABELLED_DIR,
  sharedFaceEngine,
} from '@portico/test-support/faces';
import { startWebhookReceiver, type WebhookReceiver } from '@portico/test-support/webhook-receiver';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import {
  agentCall,
  agentEnv,
  confirmedGuest,
  deviceToken,
  openEvent,
  replicaCaughtUp,
  startAgentProcess,
  startCloud,
  until,
  type AgentProcess,
  type Cloud,
} from '../support/edge.js';

const photosOf = async (rel: string) => {
  const dir = path.join(LABELLED_DIR, rel);
  const files = (await readdir(dir)).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort();
  return Promise.all(files.map((f) => readFile(path.join(dir, f))));
};

describe.skipIf(!HAS_MODELS || !HAS_LABELLED)('edge journey with real photos', () => {
  let cloud: Cloud;
  let engine: FaceEngine;
  let receiver: WebhookReceiver;
  let agent: AgentProcess | undefined;

  beforeAll(async () => {
    const shared = await sharedFaceEngine(1);
    engine = shared.engine;
    cloud = await startCloud({}, shared.face);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await agent?.kill('SIGKILL');
    await receiver?.close();
    await cloud?.close();
    await engine?.close();
  });

  // Two agent starts, a replica load, a sync and a liveness round: over 30 s on a loaded 2-core machine.
  it('recognises enrolled guests and refuses strangers offline, survives a SIGKILL, syncs every decision once, and fails still photos on the liveness challenge', async () => {
    const org = await integratorOf(cloud.app);
    // Still photos cannot blink: this journey is about matching and the queue, not the active challenge.
    const settings = await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { webhookUrl: receiver.url, requireLiveness: false },
    });
    expect(settings.status, settings.text).toBe(200);
    const event = await openEvent(cloud.app, org.headers, { name: 'Premiere' });

    const people = { leonard: await photosOf('bbt/leonard'), sheldon: await photosOf('bbt/sheldon') };
    const stranger = (await photosOf('bbt/raj'))[0]!;
    for (const [name, photos] of Object.entries(people)) {
      const person = await cloud.app.request('POST', '/v1/persons', {
        headers: org.keyHeaders,
        body: { name, document: `DOC-${name}` },
      });
      const enrolled = await cloud.app.request('POST', '/v1/public/onboarding/enroll', {
        headers: org.keyHeaders,
        body: { personId: person.body.id, frame: base64(photos[0]!) },
      });
      expect(enrolled.status, enrolled.text).toBe(200);
      await confirmedGuest(cloud.app, org.headers, event.id, { name, personId: person.body.id });
    }
    const token = await deviceToken(cloud.app, org.headers, 'Lobby');
    const env = await agentEnv(cloud.url, token, [event.publicToken], {
      AGENT_FACE: 'on',
      FRAME_SOURCE: path.join(LABELLED_DIR, 'bbt/leonard'),
    });

    agent = await startAgentProcess(env);
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.events[0].templates === 2,
      60_000,
      'replica with templates',
    );
    await cloud.down();
    await until(async () => !(await agentCall(agent!, 'GET', '/status')).body.online, 10_000, 'offline');

    const identify = (photo: Buffer) =>
      agentCall(agent!, 'POST', `/events/${event.publicToken}/identify`, { frames: [base64(photo)] });
    const answers = [];
    for (const [name, photos] of Object.entries(people)) {
      const res = await identify(photos[1]!);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body, `${name} from another photo`).toMatchObject({
        outcome: 'success',
        guest: { displayName: name },
      });
      answers.push(res.body);
    }
    const refused = await identify(stranger);
    expect(refused.body).toMatchObject({ outcome: 'denied', reason: 'not_recognised', guest: null });
    answers.push(refused.body);
    console.log(
      `[edge] offline decisions: ${answers.map((a) => `${a.outcome} score ${a.score} (threshold ${a.threshold})`).join('; ')}`,
    );
    await agent.kill('SIGKILL');

    agent = await startAgentProcess(env);
    expect((await agentCall(agent, 'GET', '/status')).body).toMatchObject({ online: false, queueLength: 3 });
    // Still offline after the restart: the replica on disk keeps recognising.
    const afterRestart = await identify(people.leonard[1]!);
    expect(afterRestart.body).toMatchObject({ outcome: 'success', guest: { displayName: 'leonard' } });
    answers.push(afterRestart.body);

    await cloud.up();
    await until(
      async () => (await agentCall(agent!, 'GET', '/status')).body.queueLength === 0,
      30_000,
      'drained',
    );
    const rows = await cloud.app.deps.db.prisma.checkIn.findMany({ where: { eventId: event.id } });
    expect(rows.map((r) => r.id).sort()).toEqual(answers.map((a) => a.checkInId).sort());
    expect(rows.every((r) => r.source === 'sync' && r.method === 'facial')).toBe(true);
    for (const answer of answers) {
      const hook = await receiver.waitForBody((b) => b.data?.checkInId === answer.checkInId, 10_000);
      expect(hook).toMatchObject({
        event: `checkin.${answer.outcome}`,
        data: { offline: true, recordedAt: answer.recordedAt },
      });
    }

    // A unit without a browser: frames from its frame source (a folder of Leonard's photos).
    const camera = await agentCall(agent, 'POST', `/events/${event.publicToken}/identify-camera`);
    expect(camera.body).toMatchObject({ outcome: 'success', guest: { displayName: 'leonard' } });

    // The tenant now requires liveness: a challenge per attempt, and still photos cannot show its action.
    await cloud.app.request('PATCH', `/v1/tenants/${org.tenantId}/settings`, {
      headers: org.headers,
      body: { requireLiveness: true },
    });
    await replicaCaughtUp(agent);
    const noNonce = await identify(people.leonard[1]!);
    expect(noNonce).toMatchObject({ status: 400, body: { code: 'invalid_nonce' } });
    const challenge = (await agentCall(agent, 'GET', '/challenge')).body;
    expect(challenge).toMatchObject({
      nonce: expect.any(String),
      action: expect.stringMatching(/^(blink|turn_head)$/),
    });
    const still = await agentCall(agent, 'POST', `/events/${event.publicToken}/identify`, {
      nonce: challenge.nonce,
      frames: [base64(people.leonard[1]!), base64(people.leonard[1]!), base64(people.leonard[1]!)],
    });
    expect(still.body).toMatchObject({ outcome: 'liveness_failed', guest: null });
    const reused = await agentCall(agent, 'POST', `/events/${event.publicToken}/identify`, {
      nonce: challenge.nonce,
      frames: [base64(people.leonard[1]!)],
    });
    expect(reused.body.code).toBe('invalid_nonce');
  }, 180_000);
});
