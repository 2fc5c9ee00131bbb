// Composition root of the HTTP application: middleware in a fixed order, every module's routes,
// the OpenAPI document generated from the same route declarations.
import express from 'express';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { AppDeps } from './deps.js';
import { authenticate } from './http/authenticate.js';
import { errorHandler, notFoundHandler } from './http/errors.js';
import { idempotency } from './http/idempotency.js';
import { requestContext } from './http/request-context.js';
import { mountRoute } from './http/route.js';
import { docsRouter } from './modules/docs/routes.js';
import { generateOpenApi, registerSecuritySchemes } from './modules/docs/openapi.js';
import { moduleRoutes } from './modules/index.js';
import { createCredentialVerifier } from './modules/auth/verifier.js';
import { createDeviceService } from './modules/devices/service.js';
import { pagesRouter } from './modules/pages/routes.js';
import { consoleRouter } from './modules/console/routes.js';
import { createSandboxService } from './modules/sandbox/service.js';

export function createApp(deps: AppDeps) {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.use(requestContext(deps.logger));
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });

  const registry = new OpenAPIRegistry();
  registerSecuritySchemes(registry);
  const api = express.Router();
  api.use('/v1', (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  // Authentication and body parsing run only once a route has matched: an unknown path is a 404
  // whatever its credentials or body.
  const mount = {
    authenticate: authenticate({
      internalSecret: deps.secrets.internalSecret,
      verifier: createCredentialVerifier(deps),
      verifyDevice: createDeviceService(deps).verify,
      sandboxOf: createSandboxService(deps).tenantIdOf,
    }),
    parseBody: express.json({ limit: deps.config.bodyLimit, strict: true }),
    checkResponses: deps.config.env !== 'production',
    idempotency: idempotency(deps),
  };
  for (const route of moduleRoutes(deps)) mountRoute(api, registry, route, mount);

  app.use(docsRouter(() => generateOpenApi(registry, deps.config.publicUrl)));
  app.use(pagesRouter(deps));
  app.use(consoleRouter());
  app.use(api);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
