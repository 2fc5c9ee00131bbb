// The person-facing pages every e-mailed link opens, served under PUBLIC_URL: self-enrollment
// (`/enroll?token=`), the guest invitation (`/e/{eventToken}/g/{guestToken}`), the landing of its
// check-in link (`/c/{linkToken}`) and the person portal
// (`/portal`, `/portal/login?token=`, `/portal/delete?token=`). Plain HTML and ES modules that call the
// public API; English and Brazilian Portuguese, the shell already in the person's language. Not part of
// the API, so not in the OpenAPI document.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type Response } from 'express';
import type { AppDeps } from '../../deps.js';
import { PAGE_CSP } from '../../http/page-csp.js';
import { pageDocument } from './document.js';
import { createPageHeads, type PageHead } from './heads.js';

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));

const PAGES = {
  portal: 'portal.js',
  enroll: 'enroll.js',
  invitation: 'invitation.js',
  checkin: 'checkin-link.js',
} as const;

/** A page's shell, in the language and with the title the service chose (heads.ts); its script fills it. */
function sendPage(res: Response, page: keyof typeof PAGES, head: PageHead): void {
  res.setHeader('content-security-policy', PAGE_CSP);
  res.setHeader('cache-control', 'no-store');
  res.type('html').send(pageDocument({ ...head, script: PAGES[page] }));
}

export function pagesRouter(deps: Pick<AppDeps, 'db' | 'clock'>): Router {
  const router = Router();
  const heads = createPageHeads(deps);
  router.use(
    '/pages/assets',
    express.static(path.resolve(ASSETS), { index: false, fallthrough: true, maxAge: '1h' }),
  );
  for (const p of ['/portal', '/portal/login']) {
    router.get(p, (req, res) => sendPage(res, 'portal', heads.portal(req, 'portalTitle')));
  }
  router.get('/portal/delete', (req, res) =>
    sendPage(res, 'portal', heads.portal(req, 'confirmDeleteTitle')),
  );
  router.get('/enroll', async (req, res) =>
    sendPage(res, 'enroll', await heads.enroll(req, req.query.token)),
  );
  router.get('/e/:eventToken/g/:guestToken', async (req, res) =>
    sendPage(res, 'invitation', await heads.invitation(req, req.params.eventToken, req.params.guestToken)),
  );
  router.get('/c/:linkToken', async (req, res) =>
    sendPage(res, 'checkin', await heads.checkinLink(req, req.params.linkToken)),
  );
  return router;
}
