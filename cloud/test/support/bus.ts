// Logging in to the message bus in tests: as the service (sees every tenant; what a test watching the
// broker needs), or as a tenant through the bus token `GET /v1/admin/bus` hands to a signed-in user.
import type { IClientOptions } from 'mqtt';
import type { TestApp } from './app.js';

/** The service's own credential: accepted by the embedded broker, ignored by an anonymous external one. */
export function serviceLogin(t: Pick<TestApp, 'deps'>): IClientOptions {
  return {
    protocolVersion: 4,
    username: t.deps.config.mqtt.username,
    password: t.deps.secrets.busPassword,
  };
}

/** A tenant's bus credential as the console gets it (null with an external broker). */
export async function tenantLogin(
  t: TestApp,
  headers: Record<string, string>,
): Promise<{ username: string; password: string; expiresAt: string }> {
  const res = await t.request('GET', '/v1/admin/bus', { headers });
  if (res.status !== 200 || !res.body.credentials) throw new Error(`no bus credentials: ${res.text}`);
  return res.body.credentials;
}
