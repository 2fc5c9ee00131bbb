// Opaque list cursors: the sort key of a page's last item, as base64url JSON. A cursor the API did not
// issue is the caller's mistake (400 `validation_failed` on `query.cursor`), never a query on garbage.
import type { z } from '@portico/contract';
import { invalidFields } from './errors.js';

export function encodeCursor(key: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Reads a cursor back; `shape` is the zod tuple of its key (e.g. `z.tuple([Timestamp, Id])`). */
export function decodeCursor<T>(cursor: string, shape: z.ZodType<T>): T {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  const parsed = shape.safeParse(key);
  if (!parsed.success)
    throw invalidFields([{ path: 'query.cursor', message: 'not a cursor this API issued' }]);
  return parsed.data;
}
