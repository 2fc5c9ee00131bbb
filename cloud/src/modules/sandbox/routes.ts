import { IdParams, Sandbox, SandboxReset } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import type { ActorOf } from '../../http/actor.js';
import { notFound } from '../../http/errors.js';
import { requestMeta } from '../../http/request-context.js';
import { defineRoute } from '../../http/route.js';
import { createSandboxService } from './service.js';

const TAG = 'Tenant';

/** What the sandbox is, for the descriptions of the routes it changes. */
export const SANDBOX_DOC =
  'A tenant’s sandbox is a tenant of its own, linked to its live tenant and made on first use: `pk_test_` ' +
  'keys act on it, and so does an admin session that sends `x-portico-environment: sandbox`, on the same ' +
  'paths (a path naming the live tenant’s id or slug reaches the sandbox). It starts with a copy of the live ' +
  'tenant’s settings (`webhookUrl` included; change them with a sandbox credential) and none of its data; ' +
  'its webhooks are signed with a secret of its own and say `environment: "sandbox"`.';

const notOwn = {
  status: 404,
  code: 'not_found',
  description: 'no such tenant, or not the caller’s own tenant (or its sandbox)',
} as const;

/** The caller's live tenant, named by its own id or its sandbox's; any other id is 404. */
function liveTenantOf(actor: ActorOf<'adminSession'>, id: string): string {
  if (id !== actor.liveTenantId && !(actor.environment === 'sandbox' && id === actor.tenantId)) {
    throw notFound('Tenant');
  }
  return actor.liveTenantId;
}

export function sandboxRoutes(deps: AppDeps) {
  const sandboxes = createSandboxService(deps);
  return [
    defineRoute({
      method: 'get',
      path: '/v1/tenants/{id}/sandbox',
      operationId: 'getSandbox',
      summary: 'The tenant’s sandbox and its webhook secret',
      description:
        `${SANDBOX_DOC}\n\nAnswers the sandbox’s own tenant id (its webhooks’ \`tenantId\` and its bus ` +
        'topics `portico/v1/tenants/{sandboxTenantId}/…`) and the secret that signs its webhooks; makes the ' +
        'sandbox if it does not exist yet. `id` is the live tenant’s id (or the sandbox’s). An owner or admin ' +
        'session (the secret is shown to them only; each reading is audited as `sandbox.webhook_secret.read`).',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:write',
      params: IdParams,
      responses: { 200: { description: 'The sandbox', schema: Sandbox } },
      errors: [notOwn],
      handler: async ({ actor, params, req, res }) => ({
        status: 200,
        body: await sandboxes.describe(
          { liveTenantId: liveTenantOf(actor, params.id), kind: 'adminSession', userId: actor.userId },
          requestMeta(req, res),
        ),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/tenants/{id}/sandbox/reset',
      operationId: 'resetSandbox',
      summary: 'Erase the sandbox’s data',
      description:
        'Erases everything made in the tenant’s sandbox: persons with their face templates and images (the ' +
        'encrypted files too), events, guests, check-ins, QR and enrollment tokens, devices, pending webhooks ' +
        'and bus messages, the sandbox’s audit trail. Its tenant id, settings and webhook secret stay, so ' +
        'integrations keep working; applications and keys are the live tenant’s and are not touched. Live ' +
        'data is never touched. A call in flight in the sandbox while it is reset may answer 409 `conflict` (retry it). Audited in the ' +
        'live tenant as `sandbox.reset`. `id` is the live tenant’s id (or the sandbox’s). An owner or admin ' +
        'session.',
      tag: TAG,
      auth: ['adminSession'],
      scope: 'tenant:write',
      params: IdParams,
      responses: { 200: { description: 'What was erased', schema: SandboxReset } },
      errors: [notOwn],
      handler: async ({ actor, params, req, res }) => {
        const liveTenantId = liveTenantOf(actor, params.id);
        return {
          status: 200,
          body: await sandboxes.reset(
            { liveTenantId, kind: 'adminSession', userId: actor.userId },
            requestMeta(req, res),
          ),
        };
      },
    }),
  ];
}
