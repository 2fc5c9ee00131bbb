// Set-up shared by the admin API tests: events and persons of a tenant, manual check-ins through the
// API, an edge device that uploads offline check-ins (with frames) through /v1/sync/batch.
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { newId } from '../../src/infra/db/index.js';
import type { TestApp } from '../support/app.js';
import { LABELLED_DIR } from '../support/faces.js';

export const INTERNAL_SECRET = 'admin-tests-internal-secret-0123456789';

export type Headers = Record<string, string>;

export async function openEvent(t: TestApp, tenantId: string, name: string, status = 'open') {
  const id = newId();
  await t.deps.db.prisma.event.create({ data: { id, tenantId, name, status, publicToken: `ev_${id}` } });
  return id;
}

export async function person(t: TestApp, tenantId: string, name: string) {
  const id = newId();
  await t.deps.db.prisma.person.create({ data: { id, tenantId, name, document: `DOC-${id.slice(-8)}` } });
  return id;
}

/** A manual check-in through the API (what an operator at the door does). */
export async function manualCheckin(t: TestApp, headers: Headers, personId: string, eventId?: string) {
  const res = await t.request('POST', '/v1/checkin/manual', {
    headers,
    body: { personId, ...(eventId && { eventId }) },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.checkInId as string;
}

export async function registerDevice(t: TestApp, headers: Headers, name: string) {
  const res = await t.request('POST', '/v1/devices', { headers, body: { name } });
  expect(res.status, res.text).toBe(201);
  const device = res.body as { id: string; token: string };
  return {
    ...device,
    headers: { 'x-internal-secret': INTERNAL_SECRET, 'x-device-token': device.token },
  };
}

/** A small real face photo from ../shared/faces (callers skip when the folder is absent). */
export async function facePhoto(identity = 'johns/John_Simm'): Promise<Buffer> {
  const dir = path.join(LABELLED_DIR, identity);
  const file = readdirSync(dir)
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()[0]!;
  return readFile(path.join(dir, file));
}
