// Operator rotation of a tenant's webhook signing secret (contract 5, rule 4: "rotation is requested from
// the operator"). The new secret signs at once; the previous one keeps signing beside it until the end of
// an overlap window, so a receiver can switch secrets without refusing a single delivery.
import type { Clock } from '../../infra/clock.js';
import { randomToken, type Cipher } from '../../infra/crypto.js';
import type { Database } from '../../infra/db/index.js';
import { recordAudit } from '../audit/record.js';
import { webhookSecretContext } from '../tenants/provision.js';

export const DEFAULT_OVERLAP = '24h';
const MAX_OVERLAP_MS = 30 * 24 * 3_600_000;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 24 * 3_600_000 } as const;

export class RotationError extends Error {}

/** `90m`, `24h`, `7d`, `3600s`, or `0` (no overlap: the old secret stops at once); at most 30 days. */
export function parseOverlap(text: string): number {
  const m = /^(\d{1,7})([smhd])?$/.exec(text.trim());
  if (!m || (m[2] === undefined && m[1] !== '0')) {
    throw new RotationError(`--overlap: "${text}" is not a duration such as 90m, 24h or 7d (or 0)`);
  }
  const ms = Number(m[1]) * (m[2] ? UNIT_MS[m[2] as keyof typeof UNIT_MS] : 0);
  if (ms > MAX_OVERLAP_MS) throw new RotationError('--overlap: at most 30d');
  return ms;
}

export interface RotatedSecret {
  tenantId: string;
  slug: string;
  /** The new secret, shown once. */
  webhookSecret: string;
  /** Until when the previous secret also signs (ISO 8601), or null without an overlap. */
  previousSecretValidUntil: string | null;
}

export async function rotateWebhookSecret(
  deps: { db: Database; cipher: Cipher; clock: Clock },
  input: { slug: string; overlapMs: number },
): Promise<RotatedSecret> {
  const now = deps.clock.now();
  const webhookSecret = randomToken('whsec_');
  const until = input.overlapMs > 0 ? new Date(now.getTime() + input.overlapMs) : null;
  return deps.db.prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string; secret: string }[]>`
      SELECT id, encode(webhook_secret_enc, 'base64') AS secret FROM tenants WHERE slug = ${input.slug} FOR UPDATE`;
    const tenant = rows[0];
    if (!tenant) throw new RotationError(`No tenant with slug "${input.slug}"`);
    // A second rotation inside a window keeps only the secret it replaces: at most two ever sign.
    await tx.tenant.update({
      where: { id: tenant.id },
      data: {
        webhookSecretEnc: deps.cipher.encryptString(webhookSecret, webhookSecretContext(tenant.id)),
        webhookSecretPrevEnc: until ? Buffer.from(tenant.secret, 'base64') : null,
        webhookSecretPrevUntil: until,
      },
    });
    await recordAudit(tx, {
      tenantId: tenant.id,
      actorType: 'operator',
      action: 'tenant.webhook_secret.rotated',
      targetType: 'tenant',
      targetId: tenant.id,
      metadata: { previousSecretValidUntil: until?.toISOString() ?? null },
    });
    return {
      tenantId: tenant.id,
      slug: input.slug,
      webhookSecret,
      previousSecretValidUntil: until?.toISOString() ?? null,
    };
  });
}
