// Who is calling. One middleware resolves every request into exactly one Actor; each route declares
// which kinds it accepts, and services scope every query by the actor's tenant.
import type { ApiScope, Environment, TenantSettings } from '@portico/contract';

/** What an API key's call knows of its tenant without reading it again. */
export interface KeyTenant {
  /** The slug of the tenant's public paths: its own, or its live tenant's for a sandbox. */
  publicSlug: string;
  readonly settings: TenantSettings;
  faceModelId: string | null;
}

// `tenantId` is the tenant whose data the call acts on: for a sandbox call (a `pk_test_` key, an admin
// session with the sandbox switch) the live tenant's sandbox, a tenant of its own (modules/sandbox), so
// every query scoped by it is isolated; `liveTenantId` is the tenant the credential belongs to.
export type Actor =
  | {
      kind: 'adminSession';
      tenantId: string;
      liveTenantId: string;
      environment: Environment;
      userId: string;
      role: string;
      sessionId: string;
      /**
       * An owner or admin without MFA in a tenant that requires it: only routes marked
       * `duringMfaSetup` answer (route.ts); the rest are 403 `mfa_setup_required`.
       */
      mfaSetupRequired?: boolean;
    }
  | {
      kind: 'apiKey';
      tenantId: string;
      liveTenantId: string;
      applicationId: string;
      keyId: string;
      environment: Environment;
      scopes: readonly ApiScope[];
      /** The key's tenant as read with the key: the slug of its public paths and its settings. */
      tenant: KeyTenant;
    }
  | { kind: 'portal'; accountId: string; sessionId: string }
  | { kind: 'device'; tenantId: string; deviceId: string }
  | { kind: 'public' };

export type ActorKind = Actor['kind'];

export type ActorOf<K extends ActorKind> = Extract<Actor, { kind: K }>;

/** Verifies the bearer credentials the identity module issues (implemented in modules/auth/verifier.ts). */
export interface CredentialVerifier {
  /** An admin session access JWT, or a portal JWT (`type: person_portal`). */
  verifyJwt(token: string): Promise<ActorOf<'adminSession'> | ActorOf<'portal'>>;
  /** An integrator API key. */
  verifyApiKey(key: string): Promise<ActorOf<'apiKey'>>;
}
