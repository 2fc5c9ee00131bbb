// Verifying Portico's webhooks: `X-Service-Signature-V2` is the hex HMAC-SHA256 of
// `${X-Service-Timestamp}.${raw body}` with the tenant's webhook secret (during a secret rotation two,
// comma-separated), and the timestamp (Unix seconds, when the attempt was sent) must be within a
// tolerance of now, so a captured delivery cannot be replayed later. WebCrypto so the same code runs in
// Node 20+, browsers and edge runtimes; `subtle.verify` compares in constant time.
import type { Environment, EventData, EventName } from './generated/events.js';

/** The body-only signature (contract 6.1); the SDK checks the timestamped one instead. */
export const SIGNATURE_HEADER = 'x-service-signature';
export const TIMESTAMP_HEADER = 'x-service-timestamp';
export const SIGNATURE_V2_HEADER = 'x-service-signature-v2';
/** How far the timestamp may be from now, either way (default 5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

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

/** Fetch's `Headers`, Node's `req.headers`, or a plain object (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

export interface WebhookInput {
  /** The body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** The request's headers: `X-Service-Timestamp` and `X-Service-Signature-V2` are read from them. */
  headers: WebhookHeaders;
  /** The tenant's webhook secret, or `[newSecret, previousSecret]` while you switch over. */
  secret: string | readonly string[];
  /** Largest accepted distance between the timestamp and now (default 300 s). */
  toleranceSeconds?: number;
  /** Now in milliseconds (default `Date.now`). */
  now?: () => number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.[0];
  }
  return undefined;
}

/** Why a delivery is refused, or undefined when it is genuine and fresh. */
async function refusal(input: WebhookInput): Promise<string | undefined> {
  const timestamp = header(input.headers, TIMESTAMP_HEADER);
  const signatureHeader = header(input.headers, SIGNATURE_V2_HEADER);
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signatureHeader) {
    return `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_V2_HEADER}`;
  }
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = (input.now ?? Date.now)() / 1000 - Number(timestamp);
  if (Math.abs(age) > tolerance)
    return `the timestamp is ${Math.round(age)} s from now (tolerance ${tolerance} s)`;
  const body = typeof input.rawBody === 'string' ? encoder.encode(input.rawBody) : input.rawBody;
  const signed = new Uint8Array(timestamp.length + 1 + body.length);
  signed.set(encoder.encode(`${timestamp}.`));
  signed.set(body, timestamp.length + 1);
  const signatures = signatureHeader
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
      if (await crypto.subtle.verify('HMAC', key, signature, signed)) matched = true;
    }
  }
  return matched ? undefined : 'the signature does not match the body and timestamp';
}

/**
 * True when one of the `X-Service-Signature-V2` signatures is the HMAC of `timestamp.rawBody` under one
 * of `secrets` and the timestamp is within the tolerance of now.
 */
export async function verifyWebhookSignature(input: WebhookInput): Promise<boolean> {
  return (await refusal(input)) === undefined;
}

/** Verifies, then parses: the event, or a `WebhookSignatureError` saying why (answer 401 to it). */
export async function constructWebhookEvent(input: WebhookInput): Promise<PorticoEvent> {
  const why = await refusal(input);
  if (why) throw new WebhookSignatureError(`Webhook refused: ${why}`);
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

/** `portico.webhooks.verify(…)` and `portico.webhooks.constructEvent(…)`: the same functions on the client. */
export const webhookHelpers = {
  /** Is this delivery genuine and fresh? (`verifyWebhookSignature`) */
  verify: verifyWebhookSignature,
  /** The verified event, or a `WebhookSignatureError` (`constructWebhookEvent`). */
  constructEvent: constructWebhookEvent,
};
