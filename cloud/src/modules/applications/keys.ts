// Integrator API keys: `pk_live_` / `pk_test_` + 32 random bytes (base64url). High entropy, so a
// SHA-256 is enough to store them (no slow hash); the clear key is shown once.
import {
  API_SCOPES,
  type ApiScope,
  type Application as ApplicationWire,
  type ApiKey as ApiKeyWire,
} from '@portico/contract';
import type { ActorOf } from '../../http/actor.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../infra/clock.js';
import { hashToken, randomToken } from '../../infra/crypto.js';
import { newId, type Database, type Tx } from '../../infra/db/index.js';
import type { ApiKey, Application } from '../../generated/prisma/client.js';

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

/** Resolves an integrator key into its actor; unknown, revoked and rotated keys are 401 `invalid_api_key`. */
export async function authenticateApiKey(
  deps: { db: Database; clock: Clock },
  key: string,
): Promise<ActorOf<'apiKey'>> {
  if (!KEY_SHAPE.test(key)) throw invalidKey();
  const row = await deps.db.prisma.apiKey.findUnique({
    where: { keyHash: hashToken(key) },
    include: { application: true, tenant: { select: { status: true } } },
  });
  if (!row || row.status !== 'active' || row.application.deletedAt || row.tenant.status !== 'active') {
    throw invalidKey();
  }
  const now = deps.clock.now();
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
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
    tenantId: row.tenantId,
    liveTenantId: row.tenantId,
    applicationId: row.applicationId,
    keyId: row.id,
    environment: row.application.environment as Environment,
    scopes: scopesOf(row),
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
