// Wire types of `/v1/applications` and their API keys.
import { ApiScope, ApiScopeList } from './access.js';
import { Id, IdParams, Text, Timestamp } from './common.js';
import { Environment } from './tenants.js';
import { z } from './zod.js';

export const ApplicationEnvironment = Environment.openapi({
  description: 'Sandbox keys start with `pk_test_`, live keys with `pk_live_`.',
});
export type ApplicationEnvironment = z.infer<typeof ApplicationEnvironment>;

export const CreateApplicationRequest = z
  .strictObject({
    name: Text.trim().min(1).max(200).openapi({ example: 'Front desk integration' }),
    environment: ApplicationEnvironment.default('live'),
    scopes: ApiScopeList.optional().openapi({
      description: 'Scopes of the first key; omit for every scope.',
    }),
  })
  .openapi('CreateApplicationRequest');
export type CreateApplicationRequest = z.infer<typeof CreateApplicationRequest>;

export const Application = z
  .object({
    id: Id,
    name: z.string(),
    environment: ApplicationEnvironment,
    createdAt: Timestamp,
  })
  .openapi('Application');
export type Application = z.infer<typeof Application>;

export const ApiKeyStatus = z
  .enum(['active', 'rotated', 'revoked'])
  .openapi({ description: 'Only `active` keys authenticate; `rotated` and `revoked` are refused at once.' });

export const ApiKey = z
  .object({
    id: Id,
    applicationId: Id,
    environment: ApplicationEnvironment,
    prefix: z.string().openapi({ description: 'First 12 characters of the key.', example: 'pk_live_Q3vX' }),
    lastFour: z.string().openapi({ example: 'a9Zk' }),
    status: ApiKeyStatus,
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable().openapi({ description: 'Updated at most once a minute.' }),
    revokedAt: Timestamp.nullable(),
    rotatedFromId: Id.nullable().openapi({ description: 'The key this one replaced on rotation.' }),
    scopes: z.array(ApiScope).openapi({ description: 'What the key may do; a rotation keeps them.' }),
  })
  .openapi('ApiKey');
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyWithSecret = ApiKey.extend({
  key: z.string().openapi({
    description: 'The whole key, shown this once and never again (the service keeps only its SHA-256).',
    example: 'pk_live_Q3vXbq0lq3sYt2Hs6xJ7cXkN1o8Ue4Vw5mDz9rGa9Zk',
  }),
}).openapi('ApiKeyWithSecret');
export type ApiKeyWithSecret = z.infer<typeof ApiKeyWithSecret>;

export const CreatedApplication = z
  .object({ application: Application, apiKey: ApiKeyWithSecret })
  .openapi('CreatedApplication');
export type CreatedApplication = z.infer<typeof CreatedApplication>;

export const ApplicationList = z
  .object({
    items: z.array(Application),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .openapi('ApplicationList');

/** The body of `POST /v1/applications/{id}/api-keys` is optional: without it the key holds every scope. */
export const CreateApiKeyRequest = z
  .strictObject({ scopes: ApiScopeList.optional() })
  .openapi('CreateApiKeyRequest')
  .optional();
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

export const ApiKeyList = z.object({ items: z.array(ApiKey) }).openapi('ApiKeyList');

export const ApplicationKeyParams = IdParams.extend({ keyId: Id });
