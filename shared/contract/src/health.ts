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
    }),
  })
  .openapi('HealthReady');
