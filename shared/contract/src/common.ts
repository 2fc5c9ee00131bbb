import { z } from './zod.js';

// UTF-16 code units that pair with nothing: JSON can carry them, UTF-8 (and so PostgreSQL) cannot.
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Every string a caller sends. PostgreSQL refuses U+0000 (and would silently replace an unpaired
 * surrogate), so both are refused here, at the edge, with 400 `validation_failed` on the field.
 */
export const Text = z.string().refine((s) => !s.includes('\u0000') && !UNPAIRED_SURROGATE.test(s), {
  message: 'must be Unicode text without NUL (U+0000) or unpaired surrogates',
});

/** Ids are opaque: a well-formed id that names nothing (or another tenant's row) is 404 `not_found`. */
export const Id = Text.min(1).max(64).openapi({ example: '0190f1c2-7d4e-7a31-9c55-2b1f4e0a9d11' });

/** ISO 8601 UTC with milliseconds, as every timestamp on the wire. */
export const Timestamp = z.iso.datetime().openapi({ example: '2026-11-21T10:15:30.123Z' });

export const IdParams = z.object({ id: Id });

/**
 * A number in a query string, written in decimal and nothing else: `0x10`, `1e1`, ` 5` or an empty
 * value are refused rather than read as 16, 10, 5 or 0 (what `Number()` would make of them).
 */
export function queryNumber<T extends z.ZodNumber>(schema: T) {
  return z.preprocess((v, ctx) => {
    if (typeof v !== 'string') return v;
    if (/^-?(0|[1-9][0-9]{0,15})(\.[0-9]{1,15})?$/.test(v)) return Number(v);
    ctx.addIssue({ code: 'custom', message: 'must be a number in decimal digits' });
    return v;
  }, schema);
}

/** Cursor pagination shared by every list endpoint. */
export const PageQuery = z.object({
  limit: queryNumber(z.number().int().min(1).max(200))
    .default(50)
    .openapi({ description: 'Page size, 1 to 200 (default 50).' }),
  cursor: Text.max(512).optional().openapi({ description: 'Opaque `nextCursor` of the previous page.' }),
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
