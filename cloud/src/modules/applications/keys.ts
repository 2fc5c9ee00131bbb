// Integrator API keys: `pk_live_` / `pk_test_` + 32 random bytes (base64url). High entropy, so a
// SHA-256 is enough to store them (no slow hash); the clear key is shown once.
import {
  API_SCOPES,
  type ApiScope,
  type TenantSettings,
  type Application as ApplicationWire,
  type ApiKey as ApiKeyWire,
} from '@portico/contract';
import type { ActorOf } from '../../http/actor.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Database, type Tx } from '../../infra/db/index.js';
import { tenantSettingsOf } from '../tenants/settings.js';
import { Prisma, type ApiKey, type Application } from '../../generated/prisma/client.js';

export type Environment = 'sandbox' | 'live';

const KEY_SHAPE = /^pk_(live|test)_[A-Za-z0-9_-]{43}$/;
/** `lastUsedAt` is written at most this often per key, whichever process serves the call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const keyPrefixFor = (environment: Environment) => (environment === 'live' ? 'pk_live_' : 'pk_test_');

/** Issues a key for an application inside the caller's transaction; returns the row and the clear key. */
export async function issueApiKey(
  tx: Pick<Tx, 'apiKey'>,
  app: Pick<Application, 'id' | 'tenantId' | 'environment'>,
  scopes: readonly ApiScope[] = API_SCOPES,
  rotatedFromId: string | null = null,
): Promise<{ row: ApiKey; key: string }> {
  const key = randomToken(keyPrefixFor(app.environment as Environment));
  const row = await tx.apiKey.create({
    data: {
      id: newId(),
      tenantId: app.tenantId,
      applicationId: app.id,
      prefix: key.slice(0, 12),
      lastFour: key.slice(-4),
      keyHash: hashToken(key),
      scopes: [...scopes],
      rotatedFromId,
    },
  });
  return { row, key };
}

const invalidKey = () => new AppError(401, 'invalid_api_key', 'The API key is unknown, revoked or rotated');

interface KeyRow {
  id: string;
  tenant_id: string;
  application_id: string;
  status: string;
  scopes: string[];
  last_used_at: Date | null;
  environment: string;
  application_deleted: boolean;
  tenant_status: string;
  settings: unknown;
  face_model_id: string | null;
  public_slug: string;
}

/**
 * Resolves an integrator key into its actor, with its tenant's settings (one statement: a check-in by
 * key reads nothing else about its tenant); unknown, revoked and rotated keys are 401 `invalid_api_key`.
 */
export async function authenticateApiKey(
  deps: { db: Database; clock: Clock },
  key: string,
): Promise<ActorOf<'apiKey'>> {
  if (!KEY_SHAPE.test(key)) throw invalidKey();
  // A sandbox's public paths use its live tenant's slug (tenants/service.ts `tenantBySlug`).
  const [row] = await deps.db.sql.query<KeyRow>(Prisma.sql`
    SELECT k.id, k.tenant_id, k.application_id, k.status, k.scopes, k.last_used_at,
           a.environment, a.deleted_at IS NOT NULL AS application_deleted,
           t.status AS tenant_status, t.settings, t.face_model_id,
           COALESCE(live.slug, t.slug) AS public_slug
      FROM api_keys k
      JOIN applications a ON a.id = k.application_id
      JOIN tenants t ON t.id = k.tenant_id
      LEFT JOIN tenants live ON live.id = t.sandbox_of_id
     WHERE k.key_hash = ${hashToken(key)}`);
  if (!row || row.status !== 'active' || row.application_deleted || row.tenant_status !== 'active') {
    throw invalidKey();
  }
  let settings: TenantSettings | undefined;
  const now = deps.clock.now();
  const lastUsed = row.last_used_at ? new Date(row.last_used_at).getTime() : null;
  if (lastUsed === null || now.getTime() - lastUsed >= LAST_USED_RESOLUTION_MS) {
    // Conditional so concurrent processes write once; an optimisation, never a reason to fail the call.
    await deps.db.prisma.apiKey
      .updateMany({
        where: {
          id: row.id,
          OR: [
            { lastUsedAt: null },
            { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } },
          ],
        },
        data: { lastUsedAt: now },
      })
      .catch(() => undefined);
  }
  return {
    kind: 'apiKey',
    tenantId: row.tenant_id,
    liveTenantId: row.tenant_id,
    applicationId: row.application_id,
    keyId: row.id,
    environment: row.environment as Environment,
    scopes: scopesOf(row),
    tenant: {
      publicSlug: row.public_slug,
      faceModelId: row.face_model_id,
      // Validated against the defaults only by the routes that read them (check-ins), once.
      get settings() {
        return (settings ??= tenantSettingsOf(row.settings));
      },
    },
  };
}

/** The key's scopes the service knows (a scope dropped from the contract grants nothing). */
export function scopesOf(row: Pick<ApiKey, 'scopes'>): ApiScope[] {
  return API_SCOPES.filter((scope) => row.scopes.includes(scope));
}

export function toApiKeyWire(row: ApiKey, environment: string): ApiKeyWire {
  return {
    id: row.id,
    applicationId: row.applicationId,
    environment: environment as Environment,
    prefix: row.prefix,
    lastFour: row.lastFour,
    status: row.status as ApiKeyWire['status'],
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    rotatedFromId: row.rotatedFromId,
    scopes: scopesOf(row),
  };
}

export function toApplicationWire(row: Application): ApplicationWire {
  return {
    id: row.id,
    name: row.name,
    environment: row.environment as Environment,
    createdAt: row.createdAt.toISOString(),
  };
}
