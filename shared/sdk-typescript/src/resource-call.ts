// What the generated resource calls (generated/resources.ts) run on: one call through the typed
// openapi-fetch client, its answer or a thrown PorticoError, and the auto-paginating iterator of list
// calls. Python's portico/_call.py is its twin.
import type { Client } from 'openapi-fetch';
import { ok } from './errors.js';
import type { paths } from './generated/openapi.js';

/** Per-call options of every resource call. */
export interface RequestOptions {
  /** Sent with this call only (after the client's own `headers`). */
  headers?: Record<string, string>;
  /** This POST's `Idempotency-Key` (default: a new UUID, the same on each retry). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A CSV or XLSX file for the import calls (`multipart/form-data`). */
export interface Upload {
  file: Blob | Uint8Array<ArrayBuffer>;
  /** Its name; the extension tells CSV from XLSX (default `import.csv`). */
  filename?: string;
}

interface Init {
  path?: Record<string, string>;
  query?: object | undefined;
  body?: unknown;
}

/** One page of a list: `{ items, nextCursor }` (and `total` where the API counts). */
export interface PageShape {
  items: unknown[];
  nextCursor: string | null;
}

/**
 * A list call: `for await (const person of portico.persons.list({ limit: 50 }))` walks every page,
 * following `nextCursor` and asking for the next page only when the loop gets there;
 * `await portico.persons.list().page()` is the first page (with `total` where the API counts).
 */
export interface PageIterator<P extends PageShape> extends AsyncIterable<P['items'][number]> {
  /** One page: the first, or the one `cursor` names. */
  page(cursor?: string): Promise<P>;
  /** Every page, in order. */
  pages(): AsyncIterable<P>;
}

export interface Caller {
  one<T>(method: string, path: string, init: Init, options: RequestOptions | undefined): Promise<T>;
  list<P extends PageShape>(
    method: string,
    path: string,
    init: Init,
    options: RequestOptions | undefined,
  ): PageIterator<P>;
}

type Send = (url: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function createCaller(api: Client<paths>): Caller {
  const send = (method: string, path: string, init: Init, options: RequestOptions | undefined) => {
    const headers: Record<string, string> = { ...options?.headers };
    if (options?.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const request = (
      api as unknown as { request: (m: string, ...rest: Parameters<Send>) => ReturnType<Send> }
    ).request;
    return request(method, path, {
      params: { path: init.path, query: init.query },
      body: isUpload(init.body) ? formData(init.body) : init.body,
      headers,
      ...(options?.signal ? { signal: options.signal } : {}),
    }).then(ok);
  };

  return {
    one: <T>(method: string, path: string, init: Init, options: RequestOptions | undefined) =>
      send(method, path, init, options) as Promise<T>,
    list<P extends PageShape>(method: string, path: string, init: Init, options: RequestOptions | undefined) {
      const page = (cursor?: string) =>
        send(
          method,
          path,
          { ...init, query: cursor === undefined ? init.query : { ...init.query, cursor } },
          options,
        ) as Promise<P>;
      async function* pages(): AsyncGenerator<P> {
        let cursor = (init.query as { cursor?: string } | undefined)?.cursor;
        do {
          const next = await page(cursor);
          yield next;
          cursor = next.nextCursor ?? undefined;
        } while (cursor);
      }
      return {
        page,
        pages,
        async *[Symbol.asyncIterator]() {
          for await (const p of pages()) yield* p.items as P['items'];
        },
      };
    },
  };
}

function isUpload(body: unknown): body is Upload {
  return typeof body === 'object' && body !== null && 'file' in body;
}

function formData(upload: Upload): FormData {
  const form = new FormData();
  const filename = upload.filename ?? 'import.csv';
  const blob =
    upload.file instanceof Blob
      ? upload.file
      : new Blob([upload.file], {
          type: filename.endsWith('.xlsx')
            ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
            : 'text/csv',
        });
  form.append('file', blob, filename);
  return form;
}
