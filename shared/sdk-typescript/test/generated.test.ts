// CI fails here when the committed generated client no longer matches what the service documents:
// a route, a field or an error code changed without `pnpm --filter @portico/sdk generate`.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { createTestApp } from '@portico/test-support/app';
import { EVENTS_FILE, eventTypes } from '../scripts/event-types.js';
import { GENERATED_FILE, typesFromDocument } from '../scripts/openapi-types.js';
import { RESOURCES_PY_FILE, RESOURCES_TS_FILE, resourcesPy, resourcesTs } from '../scripts/resources.js';

it("keeps src/generated/openapi.ts and both SDKs' resource calls identical to what /docs-json generates today", async () => {
  const app = await createTestApp();
  try {
    const document = (await app.request('GET', '/docs-json')).body;
    const fresh = await typesFromDocument(document);
    const committed = await readFile(GENERATED_FILE, 'utf8');
    expect(
      committed === fresh,
      'src/generated/openapi.ts is stale: run `pnpm --filter @portico/sdk generate` and commit it',
    ).toBe(true);
    // Both SDKs' resource calls, written from the same table and document.
    expect(
      (await readFile(RESOURCES_TS_FILE, 'utf8')) === (await resourcesTs(document)),
      'src/generated/resources.ts is stale: run `pnpm --filter @portico/sdk generate` and commit it',
    ).toBe(true);
    expect(
      (await readFile(RESOURCES_PY_FILE, 'utf8')) === resourcesPy(document),
      'shared/sdk-python/src/portico/_generated.py is stale: run `pnpm --filter @portico/sdk generate` and commit it',
    ).toBe(true);
    // The generated client knows every documented operation.
    for (const [path, item] of Object.entries(document.paths as Record<string, object>)) {
      for (const method of Object.keys(item)) {
        expect(fresh, `${method.toUpperCase()} ${path}`).toContain(`'${path}': {`);
      }
    }
  } finally {
    await app.close();
  }
});

it('keeps src/generated/events.ts identical to what the contract generates today', async () => {
  const committed = await readFile(EVENTS_FILE, 'utf8');
  expect(
    committed === (await eventTypes()),
    'src/generated/events.ts is stale: run `pnpm --filter @portico/sdk generate` and commit it',
  ).toBe(true);
});
