// What the delivery log keeps of a receiver's answer: its start as text, bounded, and never a secret
// (a receiver that echoes the request would otherwise put the signatures, or a misconfigured one the
// tenant's secret, into a log every console user can read).
import { WEBHOOK_RESPONSE_EXCERPT_CHARS } from '@portico/contract';

/** Bytes of the answer read for the excerpt: enough for its characters, whatever their encoding. */
export const RESPONSE_READ_BYTES = 8 * WEBHOOK_RESPONSE_EXCERPT_CHARS;

const REDACTED = '[redacted]';

/**
 * The answer body as the log shows it: decoded as UTF-8, `secrets` replaced (before it is cut, so no
 * part of one is left at the end), control characters other than line breaks and tabs dropped, cut to
 * WEBHOOK_RESPONSE_EXCERPT_CHARS with `…`. Null for an empty body.
 */
export function responseExcerpt(body: Buffer, truncated: boolean, secrets: readonly string[]): string | null {
  let text = body.toString('utf8');
  for (const secret of secrets) if (secret.length >= 8) text = text.split(secret).join(REDACTED);
  // eslint-disable-next-line no-control-regex
  text = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
  if (text.trim() === '') return null;
  const chars = [...text];
  if (chars.length > WEBHOOK_RESPONSE_EXCERPT_CHARS || truncated) {
    return `${chars.slice(0, WEBHOOK_RESPONSE_EXCERPT_CHARS).join('')}…`;
  }
  return text;
}
