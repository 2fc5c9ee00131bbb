// The person-facing pages every e-mailed link opens, served under PUBLIC_URL: self-enrollment
// (`/enroll?token=`), the guest invitation (`/e/{eventToken}/g/{guestToken}`), the landing of its
// check-in link (`/c/{linkToken}`) and the person portal
// (`/portal`, `/portal/login?token=`, `/portal/delete?token=`). Plain HTML and ES modules that call the
// public API; English and Brazilian Portuguese. Not part of the API, so not in the OpenAPI document.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type Response } from 'express';
import { PAGE_CSP } from '../../http/page-csp.js';

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));

const PAGES = {
  portal: 'portal.js',
  enroll: 'enroll.js',
  invitation: 'invitation.js',
  checkin: 'checkin-link.js',
} as const;

function sendPage(res: Response, page: keyof typeof PAGES): void {
  res.setHeader('content-security-policy', PAGE_CSP);
  res.setHeader('cache-control', 'no-store');
  res.type('html').send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Portico</title>
<link rel="stylesheet" href="/pages/assets/style.css">
<script type="module" src="/pages/assets/${PAGES[page]}"></script>
</head>
<body><main id="app" aria-live="polite"></main></body>
</html>`);
}

export function pagesRouter(): Router {
  const router = Router();
  router.use(
    '/pages/assets',
    express.static(path.resolve(ASSETS), { index: false, fallthrough: true, maxAge: '1h' }),
  );
  for (const p of ['/portal', '/portal/login', '/portal/delete']) {
    router.get(p, (_req, res) => sendPage(res, 'portal'));
  }
  router.get('/enroll', (_req, res) => sendPage(res, 'enroll'));
  router.get('/e/:eventToken/g/:guestToken', (_req, res) => sendPage(res, 'invitation'));
  router.get('/c/:linkToken', (_req, res) => sendPage(res, 'checkin'));
  return router;
}
