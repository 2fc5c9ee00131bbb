// Keeps web pages of other sites away from the local API (issue 23): a Host not on the allow-list is
// refused (a DNS-rebound name reaches 127.0.0.1 but keeps its own Host), a request carrying a foreign
// Origin is refused, and a body must be sent as JSON (a page may post text/plain without a preflight).
// The kiosk server (kiosk-app/src/server.ts) applies the same rules to its own origin.
import type http from 'node:http';

export interface RequestGuard {
  /** Host header values accepted, lower case, with the port. */
  hosts: Set<string>;
  /** Origins a browser page may call from. */
  origins: Set<string>;
}

export interface Refusal {
  status: number;
  code: string;
  detail: string;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The loopback names, the address listened on (unless every interface) and `extraHosts` (names, or
 * `name:port`), each with `port`; the server's own origins are `http://` each of them, plus `extraOrigins`.
 */
export function requestGuard(options: {
  port: number;
  listenHost?: string;
  extraHosts?: string[];
  extraOrigins?: string[];
}): RequestGuard {
  const names = [...LOOPBACK_NAMES];
  const listen = options.listenHost?.toLowerCase();
  if (listen && !WILDCARDS.has(listen))
    names.push(listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen);
  const hosts = new Set<string>();
  for (const raw of [...names, ...(options.extraHosts ?? [])]) {
    const name = raw.trim().toLowerCase();
    if (!name) continue;
    const withPort = /:\d+$/.test(name) && !name.endsWith(']') ? name : `${name}:${options.port}`;
    hosts.add(withPort);
    // A browser leaves the default port out of Host.
    if (withPort.endsWith(':80')) hosts.add(withPort.slice(0, -3));
  }
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  for (const o of options.extraOrigins ?? [])
    if (o.trim()) origins.add(o.trim().toLowerCase().replace(/\/$/, ''));
  return { hosts, origins };
}

/** Splits a comma-separated setting (`AGENT_ALLOWED_HOSTS`, …) into its entries. */
export function listSetting(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Why this request is refused before any route sees it, or null. */
export function refuse(req: http.IncomingMessage, guard: RequestGuard): Refusal | null {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!guard.hosts.has(host)) {
    return {
      status: 421,
      code: 'host_not_allowed',
      detail: `This server does not answer for host ${host || '(none)'}`,
    };
  }
  // Browsers send Origin on every cross-origin request and every POST; a request without one comes
  // from a program on this machine (curl, the kiosk server relaying), which a web page cannot be.
  const origin = req.headers.origin;
  if (origin !== undefined && !guard.origins.has(origin.toLowerCase())) {
    return { status: 403, code: 'origin_not_allowed', detail: `Requests from ${origin} are not accepted` };
  }
  if (STATE_CHANGING.has(req.method ?? 'GET') && hasBody(req) && !isJson(req.headers['content-type'])) {
    return { status: 415, code: 'unsupported_media_type', detail: 'Send the body as application/json' };
  }
  return null;
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (
    (length !== undefined && length !== '0') ||
    req.headers['transfer-encoding'] !== undefined ||
    req.headers['content-type'] !== undefined
  );
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
