// The tenant admin console at `/console`: a Preact app (cloud/console/) bundled by esbuild in memory on
// its first request and kept for the life of the process, so there is no build step at install and no
// stale bundle. One HTML shell, one script, one stylesheet, all from this origin under a strict CSP.
// Not part of the API, so not in the OpenAPI document.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Router, type Response } from 'express';
import { PAGE_CSP } from '../../http/page-csp.js';

const CONSOLE = fileURLToPath(new URL('../../../console/', import.meta.url));
const SDK = fileURLToPath(new URL('../../../../shared/sdk-typescript/src/index.ts', import.meta.url));

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Portico console</title>
<link rel="stylesheet" href="/console/assets/app.css">
<script type="module" src="/console/assets/app.js"></script>
</head>
<body><div id="app"></div></body>
</html>`;

interface Bundle {
  js: string;
  css: string;
}

/** Bundles the console: one ES module for current browsers and its CSS (Pico CSS and the app's own). */
export async function bundleConsole(): Promise<Bundle> {
  const out = await build({
    entryPoints: { app: `${CONSOLE}src/main.tsx`, style: `${CONSOLE}style.css` },
    outdir: '/console-bundle',
    bundle: true,
    format: 'esm',
    target: ['chrome120', 'firefox120', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    alias: { '@portico/sdk': SDK },
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  const file = (ext: string) => out.outputFiles.find((f) => f.path.endsWith(ext))!.text;
  return { js: file('.js'), css: file('.css') };
}

export function consoleRouter(): Router {
  const router = Router();
  let bundle: Promise<Bundle> | undefined;
  const assets = () => {
    // A failed build is not kept: the next request tries again.
    bundle ??= bundleConsole().catch((err: unknown) => {
      bundle = undefined;
      throw err;
    });
    return bundle;
  };
  const asset = (kind: keyof Bundle, type: string) => async (_req: unknown, res: Response) => {
    const body = (await assets())[kind];
    res.setHeader('cache-control', 'no-cache');
    res.type(type).send(body);
  };
  router.get('/console/assets/app.js', asset('js', 'text/javascript'));
  router.get('/console/assets/app.css', asset('css', 'text/css'));
  router.get(['/console', '/console/'], (_req, res) => {
    res.setHeader('content-security-policy', PAGE_CSP);
    res.setHeader('cache-control', 'no-store');
    res.type('html').send(SHELL);
  });
  return router;
}
