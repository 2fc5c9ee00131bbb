// The OpenAPI 3.1 document, generated from the routes' contract schemas at start-up.
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

export function registerSecuritySchemes(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'adminSession', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'Access token of a tenant user, from `POST /v1/auth/login`. Sandbox switch: with the header ' +
      '`x-portico-environment: sandbox` the call acts on the tenant’s sandbox (the same paths; applications ' +
      'and API keys stay the live tenant’s); `live` or no header acts on live; any other value is 400 ' +
      '`validation_failed`.',
  });
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      'Integrator API key, issued with an application: `pk_live_…` acts on the live tenant, `pk_test_…` on ' +
      'its sandbox (a tenant of its own, same paths). An `x-portico-environment` header naming the other ' +
      'environment is 400 `validation_failed`.',
  });
  registry.registerComponent('securitySchemes', 'portalJwt', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Person portal token (`type: person_portal`), from the magic-link flow.',
  });
  registry.registerComponent('securitySchemes', 'internalSecret', {
    type: 'apiKey',
    in: 'header',
    name: 'x-internal-secret',
    description:
      'Platform secret of edge devices (`INTERNAL_SECRET`; during a rotation `current,previous` are both ' +
      'accepted). Missing: 401; wrong: 403. Sent together with `x-device-token`.',
  });
  registry.registerComponent('securitySchemes', 'deviceToken', {
    type: 'apiKey',
    in: 'header',
    name: 'x-device-token',
    description:
      'Token of one registered device (`POST /v1/devices`, shown once): binds the call to the device’s ' +
      'tenant. Missing, unknown or revoked: 401.',
  });
}

export function generateOpenApi(registry: OpenAPIRegistry, serverUrl: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Portico API',
      version: '1.0.0',
      description:
        'Multi-tenant identity registration and facial check-in. Every error is `application/problem+json` ' +
        'with a stable `code`; every timestamp is ISO 8601 UTC with milliseconds.\n\n' +
        '**Sandbox**: every tenant has a sandbox with the same paths, served by this same base URL. ' +
        '`pk_test_` keys act on it, and so do admin sessions that send `x-portico-environment: sandbox`. Its ' +
        'data is apart from live (either way), its webhooks and bus messages say `environment: "sandbox"` and ' +
        'carry its own tenant id; `GET /v1/tenants/{id}/sandbox` and `POST /v1/tenants/{id}/sandbox/reset` ' +
        'show and erase it.',
    },
    servers: [{ url: serverUrl }],
    tags: [
      {
        name: 'admin',
        description:
          'Admin-only additions, not in the service contract: the read routes and actions behind the tenant ' +
          'admin console (`/console`). Session JWT of a tenant user only; API keys are refused.',
      },
    ],
  });
}
