// The agent's local API answers its errors in the cloud's problem shape (RFC 9457 problem+json with a
// stable code and a request id), and documents them so at /docs-json. Real cloud (PGlite) and the real
// agent in this process, serving one event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProblem, Problem } from '@portico/contract';
import { adminOf } from '@portico/test-support/identity';
import { agentEnv, deviceToken, openEvent, startCloud, until, type Cloud } from '../../test/support/edge.js';
import { startAgent, type Agent } from '../src/agent.js';
import { loadAgentConfig } from '../src/config.js';

async function call(base: string, method: string, path: string, body?: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body }),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    requestId: res.headers.get('x-request-id'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('the local API’s problems (real cloud, agent in process)', () => {
  let cloud: Cloud;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    cloud = await startCloud();
    const admin = await adminOf(cloud.app);
    const event = await openEvent(cloud.app, admin.headers, { name: 'Problems' });
    token = event.publicToken;
    const env = await agentEnv(cloud.url, await deviceToken(cloud.app, admin.headers, 'Gate P'), [token]);
    agent = await startAgent(loadAgentConfig(env));
    await until(async () => (await call(agent.url, 'GET', '/status')).body.online === true);
  });
  afterAll(async () => {
    await agent?.stop();
    await cloud?.close();
  });

  it('answers an unknown path 404 not_found with the same fields as the cloud’s 404', async () => {
    const local = await call(agent.url, 'GET', '/nope');
    const remote = await call(cloud.url, 'GET', '/v1/nope');
    expect(remote.status).toBe(404);
    expect(local).toMatchObject({ status: 404, type: 'application/problem+json' });
    expect(local.body).toMatchObject({
      type: 'https://portico.dev/problems/not_found',
      title: 'Not Found',
      status: 404,
      code: 'not_found',
      detail: expect.any(String),
      requestId: local.requestId,
    });
    expect(Object.keys(local.body).sort()).toEqual(Object.keys(remote.body).sort());
    expect(Problem.safeParse(local.body).success).toBe(true);
  });

  it('answers a body that breaks the route’s schema 400 validation_failed with the fields in errors', async () => {
    const res = await call(agent.url, 'POST', `/events/${token}/qr`, JSON.stringify({ code: '', extra: 1 }));
    expect(res).toMatchObject({ status: 400, type: 'application/problem+json' });
    expect(res.body).toMatchObject({
      title: 'Bad Request',
      code: 'validation_failed',
      errors: expect.arrayContaining([expect.objectContaining({ path: 'body.code' })]),
    });
    expect(res.body.detail).toMatch(/^body\./);
    expect(AgentProblem.safeParse(res.body).success).toBe(true);
  });

  it('answers an agent code (unknown_event, malformed_json) in the same shape, each with its own request id', async () => {
    const unknown = await call(agent.url, 'POST', '/events/evt_nope/qr', JSON.stringify({ code: 'x' }));
    const malformed = await call(agent.url, 'POST', `/events/${token}/qr`, '{');
    expect(unknown.body).toMatchObject({
      type: 'https://portico.dev/problems/unknown_event',
      title: 'Not Found',
      status: 404,
      code: 'unknown_event',
    });
    expect(malformed.body).toMatchObject({ status: 400, code: 'malformed_json', title: 'Bad Request' });
    expect(unknown.body.requestId).toMatch(/^req_/);
    expect(unknown.body.requestId).not.toBe(malformed.body.requestId);
  });

  it('documents every error of every route as problem+json at /docs-json', async () => {
    const doc = (await call(agent.url, 'GET', '/docs-json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
    };
    const errors = Object.values(doc.paths)
      .flatMap((ops) => Object.values(ops))
      .flatMap((op) => Object.entries(op.responses).filter(([status]) => Number(status) >= 400));
    expect(errors.length).toBeGreaterThan(50);
    for (const [, response] of errors)
      expect(Object.keys(response.content ?? {})).toEqual(['application/problem+json']);
    expect(doc.paths['/events/{token}/qr']?.post?.responses['200']).toBeDefined();
  });
});
