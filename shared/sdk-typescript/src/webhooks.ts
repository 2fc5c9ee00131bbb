// Verifying Portico's webhooks: `X-Service-Signature` is the hex HMAC-SHA256 of the exact raw body
// with the tenant's webhook secret; during a secret rotation it carries two, comma-separated. WebCrypto
// so the same code runs in Node 20+, browsers and edge runtimes; `subtle.verify` compares in constant
// time.
import type { Environment, EventData, EventName } from './generated/events.js';

export const SIGNATURE_HEADER = 'x-service-signature';

/** A webhook body (and bus message): `data` typed by `event`; `environment` says live or sandbox. */
export type PorticoEvent = {
  [N in EventName]: {
    id: string;
    event: N;
    tenantId: string;
    environment: Environment;
    timestamp: string;
    data: EventData<N>;
  };
}[EventName];

export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
}

const encoder = new TextEncoder();

/**
 * True when one of the signatures in `signatureHeader` is the HMAC of `rawBody` under one of
 * `secrets` (give both the new and the previous secret while you switch over). Pass the body exactly
 * as received, before any JSON parsing.
 */
export async function verifyWebhookSignature(input: {
  rawBody: string | Uint8Array;
  signatureHeader: string | null | undefined;
  secret: string | readonly string[];
}): Promise<boolean> {
  if (!input.signatureHeader) return false;
  const body = typeof input.rawBody === 'string' ? encoder.encode(input.rawBody) : input.rawBody;
  const signatures = input.signatureHeader
    .split(',')
    .map((part) => hexBytes(part.trim()))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== undefined);
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  let matched = false;
  // Every pair is checked (no early return), so the time taken does not say which one matched.
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    for (const signature of signatures) {
      if (await crypto.subtle.verify('HMAC', key, signature, body as Uint8Array<ArrayBuffer>)) matched = true;
    }
  }
  return matched;
}

/** Verifies, then parses: the event, or a `WebhookSignatureError` (answer 401 to it). */
export async function constructWebhookEvent(input: {
  rawBody: string | Uint8Array;
  signatureHeader: string | null | undefined;
  secret: string | readonly string[];
}): Promise<PorticoEvent> {
  if (!(await verifyWebhookSignature(input))) {
    throw new WebhookSignatureError('The webhook signature does not match the body');
  }
  const text = typeof input.rawBody === 'string' ? input.rawBody : new TextDecoder().decode(input.rawBody);
  return JSON.parse(text) as PorticoEvent;
}

/** 32 bytes from 64 hex digits, else undefined (a malformed part never matches). */
function hexBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
