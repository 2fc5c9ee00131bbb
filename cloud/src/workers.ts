// The background workers of an API process: webhook delivery and bus publishing from the outbox, the
// switch of tenants to the configured face model, and the hourly clean-up of short-lived rows.
import type { AppDeps } from './deps.js';
import { createRateLimiter } from './http/rate-limit.js';
import { startWorkerLoop } from './infra/worker-loop.js';
import { createStepUp } from './modules/checkin/step-up.js';
import { createModelSwitch } from './modules/faces/model-switch.js';
import { createBusPublisher } from './modules/outbox/bus-publisher.js';
import { createPasswordResetService } from './modules/auth/password-reset.js';
import { createJobRunner } from './modules/privacy/jobs.js';
import { createPortalService } from './modules/portal/service.js';
import { createPrivacyService } from './modules/privacy/service.js';
import { createWebhookDispatcher } from './modules/webhooks/dispatcher.js';

const POLL_MS = 1_000;
const HOUSEKEEPING_MS = 3_600_000;
/** How often a process looks for tenants still served by another face model than its own. */
const MODEL_SWITCH_POLL_MS = 60_000;
/** Used or expired liveness nonces are kept a day for investigations, then deleted. */
const NONCE_RETENTION_MS = 24 * 3_600_000;

export function startWorkers(deps: AppDeps): { stop(): Promise<void> } {
  const dispatcher = createWebhookDispatcher({
    db: deps.db,
    cipher: deps.cipher,
    clock: deps.clock,
    logger: deps.logger,
    allowPrivateUrls: deps.config.allowPrivateWebhookUrls,
  });
  const publisher = createBusPublisher(deps);
  const limiter = createRateLimiter(deps.db, deps.clock);
  const stepUps = createStepUp(deps);
  const housekeeping = async () => {
    const before = new Date(deps.clock.now().getTime() - NONCE_RETENTION_MS);
    const nonces = await deps.db.prisma.livenessNonce.deleteMany({ where: { expiresAt: { lt: before } } });
    const buckets = await limiter.prune();
    // Frames of step-ups never completed are erased (biometric data stays only with a check-in).
    let stepUpBatches = 0;
    while (stepUpBatches < 50 && (await stepUps.purgeExpired())) stepUpBatches += 1;
    deps.logger.info({ nonces: nonces.count, rateLimitBuckets: buckets, stepUpBatches }, 'housekeeping');
    return false;
  };
  const subscribe = deps.outbox.subscribe;
  const privacy = createPrivacyService(deps);
  const portal = createPortalService(deps);
  const passwordResets = createPasswordResetService(deps, limiter);
  const jobs = createJobRunner(deps, {
    'export.build': privacy.buildExport,
    'deletion.complete': privacy.completeDeletion,
    'portal.magic_link': portal.sendMagicLink,
    'auth.password_reset': passwordResets.sendResetLink,
  });
  const loops = [
    startWorkerLoop({
      name: 'webhooks',
      pollMs: POLL_MS,
      runOnce: dispatcher.runOnce,
      // A finished delivery frees a slot of the pool: claim again at once.
      subscribe: (wake) => {
        const fromOutbox = subscribe(wake);
        const fromPool = dispatcher.subscribe(wake);
        return () => {
          fromOutbox();
          fromPool();
        };
      },
      logger: deps.logger,
    }),
    startWorkerLoop({
      name: 'bus',
      pollMs: POLL_MS,
      runOnce: publisher.runOnce,
      subscribe,
      logger: deps.logger,
    }),
    startWorkerLoop({
      // Portal mails, data exports and deletions (the `jobs` table); lapsed export archives are erased.
      name: 'jobs',
      pollMs: POLL_MS,
      runOnce: async () => (await privacy.purgeExpiredExports()) > 0 || (await jobs.runOnce()),
      subscribe: (wake) => subscribe(wake, 'jobs'),
      logger: deps.logger,
    }),
    startWorkerLoop({
      name: 'housekeeping',
      pollMs: HOUSEKEEPING_MS,
      runOnce: housekeeping,
      subscribe: () => () => {},
      logger: deps.logger,
    }),
  ];
  if (deps.config.faceModelSwitch) {
    loops.push(
      startWorkerLoop({
        name: 'face-model-switch',
        pollMs: MODEL_SWITCH_POLL_MS,
        runOnce: createModelSwitch(deps).runOnce,
        subscribe: () => () => {},
        logger: deps.logger,
      }),
    );
  }
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
      await dispatcher.drain();
    },
  };
}
