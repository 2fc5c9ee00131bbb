// The kiosk's own little server: the UI bundled by esbuild at start, `/agent/*` relayed to the device
// agent on this machine (the status stream included), and `/branding/{token}` fetched from the cloud.
// One origin for the page, so the browser needs no CORS from the agent or the cloud; an Electron shell
// loads this same URL. Only that page may drive it: the agent's request guard (Host allow-list, Origin,
// JSON bodies) runs first, the staff PIN is relayed only from the page itself, and every answer carries
// the security headers (CSP, no framing, nosniff, no referrer). `/vision/` serves the in-page face
// detector's model and WebAssembly, from this machine like everything else.
import { createReadStream, existsSync } from 'node:fs';
import http from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createPortico } from '@portico/sdk';
// The agent's own rules, one implementation (bundled into the shell by scripts/build.ts).
import { refuse, requestGuard, type RequestGuard } from '../../device-agent/src/request-guard.js';

// Beside the sources, src/ui/ (bundled when the server starts); beside a build (dist/shell/main.mjs),
// dist/shell/ui/ with app.js already bundled, so a packaged kiosk needs no esbuild.
const UI = fileURLToPath(new URL('./ui/', import.meta.url));
const BRANDING_TIMEOUT_MS = 2000;
/**
 * Routes that count wrong staff PINs toward the lock-out (a step-up may carry a PIN): relayed only
 * with the Origin of the kiosk's page, which Chromium sends on every POST.
 */
const PIN_ROUTES = /^\/agent\/(staff\/session|step-up\/[^/]+)$/;

/**
 * The page's rules: its own scripts, styles and connections only; camera pictures and the logo.
 * WebAssembly may be compiled (`'wasm-unsafe-eval'`: the face detector's), JavaScript eval stays off.
 */
function securityHeaders(cloudUrl: string): Record<string, string> {
  const cloud = URL.canParse(cloudUrl) ? ` ${new URL(cloudUrl).origin}` : '';
  return {
    'content-security-policy': [
      "default-src 'self'",
      "script-src 'self' 'wasm-unsafe-eval'",
      "style-src 'self'",
      `img-src 'self' data: blob: https:${cloud}`,
      "media-src 'self' blob: mediastream:",
      "connect-src 'self'",
      "worker-src 'self' blob:",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

const VISION_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.tflite': 'application/octet-stream',
};

/**
 * The files under `/vision/` by name: copied beside a build (dist/shell/ui/vision/), else made by the
 * build step from the npm packages (the model is cached after the first start).
 */
async function visionFiles(): Promise<Map<string, { type: string; path: string }>> {
  let paths: Record<string, string>;
  if (existsSync(`${UI}vision/`)) {
    const names = await readdir(`${UI}vision/`);
    paths = Object.fromEntries(names.map((name) => [name, `${UI}vision/${name}`]));
  } else {
    const { visionAssets } = await import('../scripts/face-detector-model.js');
    paths = await visionAssets();
  }
  const files = new Map<string, { type: string; path: string }>();
  for (const [name, path] of Object.entries(paths)) {
    const type = VISION_TYPES[name.slice(name.lastIndexOf('.'))];
    if (type) files.set(`/vision/${name}`, { type, path });
  }
  return files;
}

export interface KioskServer {
  url: string;
  close(): Promise<void>;
}

/** Bundles the UI (one ES module for Chromium; the contract is imported for its types only). */
export async function bundleUi(entry = `${UI}app.ts`): Promise<string> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
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
  /** Host names served besides 127.0.0.1, localhost and [::1] (`name` or `name:port`): `KIOSK_ALLOWED_HOSTS`. */
  allowedHosts?: string[];
}): Promise<KioskServer> {
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: await readFile(`${UI}index.html`, 'utf8') },
    '/style.css': { type: 'text/css; charset=utf-8', body: await readFile(`${UI}style.css`, 'utf8') },
    '/app.js': {
      type: 'text/javascript; charset=utf-8',
      body: existsSync(`${UI}app.js`) ? await readFile(`${UI}app.js`, 'utf8') : await bundleUi(),
    },
  };
  const vision = await visionFiles();
  const agent = new URL(options.agentUrl);
  const headers = securityHeaders(options.cloudUrl);
  // Built at the first request: the port is known once listening (0 in tests).
  let guard: RequestGuard | undefined;
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
      return problem(res, 404, 'not_found', 'No such event', headers);
    }
    try {
      const { data, error, response } = await cloud.api.GET('/v1/events/{token}/branding', {
        params: { path: { token } },
      });
      res.writeHead(response.status, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        ...headers,
      });
      res.end(JSON.stringify(data ?? error));
    } catch {
      problem(res, 502, 'cloud_unreachable', 'The cloud does not answer', headers);
    }
  }

  const server = http.createServer((req, res) => {
    guard ??= requestGuard({
      port: (server.address() as AddressInfo).port,
      listenHost: options.host,
      extraHosts: options.allowedHosts,
    });
    const refusal = refuse(req, guard);
    if (refusal) {
      req.resume();
      return problem(res, refusal.status, refusal.code, refusal.detail, headers);
    }
    const url = new URL(req.url ?? '/', 'http://kiosk');
    if (req.method !== 'GET' && PIN_ROUTES.test(url.pathname) && req.headers.origin === undefined) {
      req.resume();
      return problem(
        res,
        403,
        'origin_not_allowed',
        "Staff PINs are taken from the kiosk's own page only",
        headers,
      );
    }
    if (url.pathname.startsWith('/agent/')) {
      // Piped both ways, so the agent's server-sent events flow through as they come.
      const upstream = http.request(
        {
          host: agent.hostname,
          port: agent.port,
          method: req.method,
          path: url.pathname.slice('/agent'.length) + url.search,
          // No Origin: the agent takes the kiosk server for the local program it is.
          headers: {
            ...(req.headers['content-type'] && { 'content-type': req.headers['content-type'] }),
            ...(req.headers['x-staff-session'] && { 'x-staff-session': req.headers['x-staff-session'] }),
          },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...headers });
          answer.pipe(res);
        },
      );
      upstream.on('error', () =>
        problem(res, 502, 'agent_unreachable', 'The device agent does not answer', headers),
      );
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
      return;
    }
    const branding = /^\/branding\/([^/]+)$/.exec(url.pathname);
    if (branding && req.method === 'GET') {
      void relayBranding(res, branding[1]!);
      return;
    }
    const asset = req.method === 'GET' ? vision.get(url.pathname) : undefined;
    if (asset) {
      void sendFile(req, res, asset, headers);
      return;
    }
    const file = req.method === 'GET' ? files[url.pathname] : undefined;
    if (!file) return problem(res, 404, 'not_found', 'No such page', headers);
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store', ...headers });
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

/**
 * A file from disk, streamed (the WebAssembly is 13 MB: not kept in memory). Cached by the browser and
 * revalidated at every load (`no-cache` with an ETag of its size and time): a kiosk's profile then keeps
 * the detector's compiled WebAssembly (Chromium's code cache rides on the HTTP cache's entry) and a
 * reload in it (Electron's profile, or the Linux box's Chromium profile) skips compiling it again,
 * about a second of CPU on a 2-core box (the README's "Cached by the kiosk's profile"); a file
 * replaced by an update has another ETag.
 */
async function sendFile(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  file: { type: string; path: string },
  headers: Record<string, string>,
) {
  let size: number;
  let etag: string;
  try {
    const info = await stat(file.path);
    size = info.size;
    etag = `"${size.toString(36)}-${Math.trunc(info.mtimeMs).toString(36)}"`;
  } catch {
    return problem(res, 404, 'not_found', 'No such file', headers);
  }
  const cache = { etag, 'cache-control': 'no-cache' };
  if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) {
    res.writeHead(304, { ...cache, ...headers });
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': file.type, 'content-length': size, ...cache, ...headers });
  const stream = createReadStream(file.path);
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

function problem(
  res: http.ServerResponse,
  status: number,
  code: string,
  detail: string,
  headers: Record<string, string>,
) {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ status, code, detail }));
}
