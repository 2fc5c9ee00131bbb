// `/docs` (Swagger UI, its assets served from the swagger-ui-dist package: works offline) and `/docs-json`.
import { Router, type RequestHandler } from 'express';

/**
 * The document and Swagger UI are made ready on the first request for them, not at start: generating
 * the document from the route declarations takes about 170 ms of the event loop and loading Swagger UI
 * about 100 ms (2 vCPU), which a start waiting for readiness need not spend.
 */
export function docsRouter(document: () => object): RequestHandler {
  let router: Promise<Router> | undefined;
  return (req, res, next) => {
    if (!/^\/docs(-json)?(\/|$)/i.test(req.path)) return next();
    router ??= routes(document());
    router.then((handle) => handle(req, res, next), next);
  };
}

async function routes(document: object): Promise<Router> {
  const { default: swaggerUi } = await import('swagger-ui-express');
  const router = Router();
  router.get('/docs-json', (_req, res) => {
    res.json(document);
  });
  router.use(
    '/docs',
    swaggerUi.serveFiles(document),
    swaggerUi.setup(document, { customSiteTitle: 'Portico API' }),
  );
  return router;
}
