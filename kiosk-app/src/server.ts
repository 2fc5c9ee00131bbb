// The kiosk's own little server: the UI bundled by esbuild at start, `/agent/*` relayed to the device
// agent on this machine (the status stream included), and `/branding/{token}` fetched from the cloud.
// One origin for the page, so the browser needs no CORS from the agent or the cloud; an Electron shell
// loads this same URL.
import { existsSync } from 'node:fs';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createPortico } from '@portico/sdk';

// Beside the sources, src/ui/ (bundled when the server starts); beside a build (dist/shell/main.mjs),
// dist/shell/ui/ with app.js already bundled, so a packaged kiosk needs no esbuild.
const UI = fileURLToPath(new URL('./ui/', import.meta.url));
const BRANDING_TIMEOUT_MS = 2000;

export interface KioskServer {
  url: string;
  close(): Promise<void>;
}

/** Bundles the UI (one ES module for Chromium; the contract is imported for its types only). */
export async function bundleUi(): Promise<string> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [`${UI}app.ts`],
    bundle: true,
    format: 'esm',
    target: 'chrome120',
    minify: true,
    write: false,
  });
  return out.outputFiles[0]!.text;
}

export async function startKioskServer(options: {
  agentUrl: string;
  cloudUrl: string;
  host?: string;
  port?: number;
}): Promise<KioskServer> {
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: await readFile(`${UI}index.html`, 'utf8') },
    '/style.css': { type: 'text/css; charset=utf-8', body: await readFile(`${UI}style.css`, 'utf8') },
    '/app.js': {
      type: 'text/javascript; charset=utf-8',
      body: existsSync(`${UI}app.js`) ? await readFile(`${UI}app.js`, 'utf8') : await bundleUi(),
    },
  };
  const agent = new URL(options.agentUrl);
  // The page shows its cached branding meanwhile: one short attempt, no retries.
  const cloud = createPortico({
    baseUrl: options.cloudUrl,
    retry: { maxRetries: 0, timeoutMs: BRANDING_TIMEOUT_MS },
  });

  /** The cloud's answer as it came (status and JSON body), or 502 when it does not answer. */
  async function relayBranding(res: http.ServerResponse, segment: string) {
    let token: string;
    try {
      token = decodeURIComponent(segment);
    } catch {
      return problem(res, 404, 'not_found', 'No such event');
    }
    try {
      const { data, error, response } = await cloud.api.GET('/v1/events/{token}/branding', {
        params: { path: { token } },
      });
      res.writeHead(response.status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(data ?? error));
    } catch {
      problem(res, 502, 'cloud_unreachable', 'The cloud does not answer');
    }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://kiosk');
    if (url.pathname.startsWith('/agent/')) {
      // Piped both ways, so the agent's server-sent events flow through as they come.
      const upstream = http.request(
        {
          host: agent.hostname,
          port: agent.port,
          method: req.method,
          path: url.pathname.slice('/agent'.length) + url.search,
          headers: {
            'content-type': req.headers['content-type'] ?? 'application/json',
            ...(req.headers['x-staff-session'] && { 'x-staff-session': req.headers['x-staff-session'] }),
          },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => problem(res, 502, 'agent_unreachable', 'The device agent does not answer'));
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
      return;
    }
    const branding = /^\/branding\/([^/]+)$/.exec(url.pathname);
    if (branding && req.method === 'GET') {
      void relayBranding(res, branding[1]!);
      return;
    }
    const file = req.method === 'GET' ? files[url.pathname] : undefined;
    if (!file) return problem(res, 404, 'not_found', 'No such page');
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' });
    res.end(file.body);
  });
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function problem(res: http.ServerResponse, status: number, code: string, detail: string) {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ status, code, detail }));
}
