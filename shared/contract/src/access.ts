// What a caller may do. An API key holds scopes; a tenant user's role grants scopes too, so one check
// on each route covers both kinds of caller.
import type { UserRole } from './auth.js';
import { z } from './zod.js';

export const API_SCOPES = [
  'persons:read',
  'persons:write',
  'checkin',
  'tenant:read',
  'tenant:write',
  'events:read',
  'events:write',
  'bus:subscribe',
] as const;

export const ApiScope = z.enum(API_SCOPES).openapi('ApiScope', {
  description:
    '`persons:read` list and read persons; `persons:write` create, change, import, delete and anonymise ' +
    'persons, enroll faces, send enrollment links; `checkin` identify, QR tokens and QR check-in; ' +
    '`tenant:read` read the tenant and its settings; `tenant:write` change them; `events:read` list and read ' +
    'events and their guests; `events:write` create, change, delete events and guests, import and invite; ' +
    '`bus:subscribe` connect to the message bus (username: the tenant id, password: the key) and read the ' +
    'tenant’s topics. A key issued without ' +
    '`scopes` holds every scope. Routes that take API keys and name no scope need a key with every scope.',
});
export type ApiScope = z.infer<typeof ApiScope>;

/** The scopes a tenant user's role grants: the operator runs check-in and may read. */
export const ROLE_SCOPES: Record<UserRole, readonly ApiScope[]> = {
  owner: API_SCOPES,
  admin: API_SCOPES,
  operator: ['persons:read', 'checkin', 'tenant:read', 'events:read'],
};

/** The `scopes` of a key request: at least one, each once; omitted means every scope. */
export const ApiScopeList = z
  .array(ApiScope)
  .min(1)
  .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'Each scope once' })
  .openapi({
    description: 'What the key may do, each scope once; omit for a key with every scope.',
    uniqueItems: true,
    example: ['persons:read', 'checkin'],
  });
