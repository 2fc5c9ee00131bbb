// The OpenAPI 3.1 document, generated from the routes' contract schemas at start-up.
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

export function registerSecuritySchemes(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'adminSession', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token of a tenant user, from `POST /v1/auth/login`.',
  });
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'Integrator API key (`pk_live_…` or `pk_test_…`), issued with an application.',
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
        'with a stable `code`; every timestamp is ISO 8601 UTC with milliseconds.',
    },
    servers: [{ url: serverUrl }],
  });
}
