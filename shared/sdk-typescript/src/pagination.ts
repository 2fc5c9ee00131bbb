// Every list of the API pages the same way: `{ items, nextCursor }`, the cursor opaque and null on the
// last page.

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Every item of every page, fetched page by page as the loop asks for them:
 * `for await (const p of paginate((cursor) => portico.api.GET('/v1/persons', { params: { query: { cursor } } }).then(ok)))`.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}
