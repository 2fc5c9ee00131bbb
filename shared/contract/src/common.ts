import { z } from './zod.js';

export const Id = z.string().min(1).max(64).openapi({ example: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11' });

/** ISO 8601 UTC with milliseconds, as every timestamp on the wire. */
export const Timestamp = z.iso.datetime().openapi({ example: '2026-11-21T10:15:30.123Z' });

export const IdParams = z.object({ id: Id });

/** Cursor pagination shared by every list endpoint. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ description: 'Page size, 1 to 200 (default 50).' }),
  cursor: z
    .string()
    .max(512)
    .optional()
    .openapi({ description: 'Opaque `nextCursor` of the previous page.' }),
});

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `cursor` to get the next page; null on the last page.' }),
  });
}
