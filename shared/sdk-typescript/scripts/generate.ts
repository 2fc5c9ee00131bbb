// Regenerates src/generated/openapi.ts, the resource calls of both SDKs (src/generated/resources.ts and
// ../sdk-python/src/portico/_generated.py, by scripts/resources.ts) and src/generated/events.ts (from the contract). With a URL (`pnpm --filter @portico/sdk generate
// http://localhost:8080`) it reads that service's /docs-json; without one it starts the service in
// process on an in-memory database and reads its own.
import { writeFile } from 'node:fs/promises';
import { createTestApp } from '@portico/test-support/app';
import { EVENTS_FILE, eventTypes } from './event-types.js';
import { GENERATED_FILE, typesFromDocument } from './openapi-types.js';
import { RESOURCES_PY_FILE, RESOURCES_TS_FILE, resourcesPy, resourcesTs } from './resources.js';

async function documentFrom(url: string | undefined): Promise<unknown> {
  if (url) {
    const res = await fetch(new URL('/docs-json', url));
    if (!res.ok) throw new Error(`${url}/docs-json answered ${res.status}`);
    return res.json();
  }
  const app = await createTestApp();
  try {
    return (await app.request('GET', '/docs-json')).body;
  } finally {
    await app.close();
  }
}

const document = await documentFrom(process.argv[2]);
await writeFile(GENERATED_FILE, await typesFromDocument(document));
console.log(`wrote ${GENERATED_FILE}`);
const resources = document as Parameters<typeof resourcesPy>[0];
await writeFile(RESOURCES_TS_FILE, await resourcesTs(resources));
console.log(`wrote ${RESOURCES_TS_FILE}`);
await writeFile(RESOURCES_PY_FILE, resourcesPy(resources));
console.log(`wrote ${RESOURCES_PY_FILE}`);
await writeFile(EVENTS_FILE, await eventTypes());
console.log(`wrote ${EVENTS_FILE}`);
