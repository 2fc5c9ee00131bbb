// `/docs` (Swagger UI, its assets served from the swagger-ui-dist package: works offline) and `/docs-json`.
import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';

export function docsRouter(document: object): Router {
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
