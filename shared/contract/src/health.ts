import { z } from './zod.js';

export const HealthLive = z.object({ status: z.literal('ok') }).openapi('HealthLive');

export const HealthReady = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({
      database: z.object({
        ok: z.boolean(),
        latencyMs: z.number().optional(),
        reason: z.string().optional(),
      }),
      /** Face galleries loaded from their snapshots at start (the first check-in does not wait for them). */
      gallery: z.object({ ok: z.boolean() }).optional(),
    }),
  })
  .openapi('HealthReady');
