import { HealthLive, HealthReady } from '@portico/contract';
import type { AppDeps } from '../../deps.js';
import { ANY_CALLER, defineRoute } from '../../http/route.js';

export function healthRoutes({ db, gallery }: Pick<AppDeps, 'db' | 'gallery'>) {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/health/live',
      operationId: 'healthLive',
      summary: 'Liveness probe',
      description: 'Answers 200 while the process serves HTTP. Touches no dependency.',
      tag: 'Health',
      auth: ANY_CALLER,
      responses: { 200: { description: 'The process is up', schema: HealthLive } },
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/health/ready',
      operationId: 'healthReady',
      summary: 'Readiness probe',
      description:
        'Checks the database connection with a round trip, and that the face galleries stored as snapshots are ' +
        'loaded (after a start). 503 with the reason when either is not.',
      tag: 'Health',
      auth: ANY_CALLER,
      responses: {
        200: { description: 'Ready to serve', schema: HealthReady },
        503: {
          description: 'A dependency is down, or the galleries are still loading; `checks` says which',
          schema: HealthReady,
        },
      },
      handler: async () => {
        const started = performance.now();
        try {
          await db.ping();
          const latencyMs = Math.round((performance.now() - started) * 10) / 10;
          const checks = { database: { ok: true, latencyMs }, gallery: { ok: gallery.ready() } };
          return {
            status: checks.gallery.ok ? 200 : 503,
            body: { status: checks.gallery.ok ? 'ok' : 'unavailable', checks },
          };
        } catch (err) {
          const reason = err instanceof Error ? err.message.split('\n')[0] : 'database unreachable';
          return {
            status: 503,
            body: { status: 'unavailable', checks: { database: { ok: false, reason } } },
          };
        }
      },
    }),
  ];
}
