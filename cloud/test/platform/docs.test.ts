import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

describe('OpenAPI documentation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves /docs-json as a valid OpenAPI 3.1 document', async () => {
    const res = await t.request('GET', '/docs-json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents the probes, every error as problem+json, and the security schemes', async () => {
    const doc = (await t.request('GET', '/docs-json')).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/health/live', '/v1/health/ready']));
    expect(doc.paths['/v1/health/ready'].get.responses['503']).toBeDefined();
    expect(doc.components.schemas.Problem).toBeDefined();
    expect(Object.keys(doc.components.securitySchemes)).toEqual(
      expect.arrayContaining(['adminSession', 'apiKey', 'portalJwt', 'internalSecret']),
    );
    for (const [path, methods] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(
      doc.paths,
    )) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.responses['500'], `${method} ${path} documents 500`).toBeDefined();
      }
    }
  });

  it('serves the interactive /docs page with every asset from this server (works offline)', async () => {
    const page = await fetch(`${t.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(2);
    for (const asset of assets) {
      expect(asset, 'no absolute URL to another host').not.toMatch(/^(https?:)?\/\//);
      const res = await fetch(new URL(asset, `${t.url}/docs/`));
      expect(res.status, asset).toBe(200);
    }
    // The initialiser script carries the spec inline, so the page needs nothing from outside.
    const init = await fetch(`${t.url}/docs/swagger-ui-init.js`);
    expect(await init.text()).toContain('/v1/health/ready');
  });
});
