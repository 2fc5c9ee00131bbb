// The console's data hooks: a load with its error and reload, a cursor-paged list, an action's state.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ok } from '@portico/sdk';
import { shownError, type ShownError } from './errors.js';
import type { Session } from './session.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ShownError | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload`); keeps the last data while a new load runs. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ShownError | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load()
      .then((d) => live && (setData(d), setError(null)))
      .catch((err: unknown) => live && setError(shownError(err)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, reload };
}

/**
 * A cursor-paged list: the first page when `deps` change, the next ones appended by `loadMore`.
 * `fetchPage` takes the cursor of the page to read (none for the first); `total` is the list's own
 * total when its pages carry one.
 */
export function usePages<T>(
  fetchPage: (cursor?: string) => Promise<{ items: T[]; nextCursor: string | null; total?: number }>,
  deps: unknown[],
) {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [total, setTotal] = useState<number | null>(null);
  const first = useLoad(async () => {
    const page = await fetchPage();
    setItems(page.items);
    setCursor(page.nextCursor);
    setTotal(page.total ?? null);
  }, deps);
  const more = useAction();
  const loadMore = () =>
    more.run(async () => {
      const page = await fetchPage(cursor ?? undefined);
      setItems((list) => [...list, ...page.items]);
      setCursor(page.nextCursor);
      setTotal(page.total ?? null);
    });
  return {
    items,
    total,
    hasMore: cursor !== null,
    loading: first.loading,
    error: first.error ?? more.error,
    more,
    loadMore,
  };
}

/** An action's state: run it, show its error; `busy` while it runs. */
export function useAction() {
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(shownError(err));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

/** The tenant's events for a filter or a picker (the first 200). */
export function useEvents(session: Session) {
  return useLoad(
    async () => ok(await session.api.GET('/v1/events', { params: { query: { limit: 200 } } })).items,
    [],
  );
}

/**
 * A list's filters kept in the page's address (`#/checkins?method=qr`), so a reload, the back button
 * after leaving the page, or a link sent to a colleague shows the same list; empty ones are left out.
 * A change names only the filters it sets; the others keep the values the address holds.
 */
export function useUrlFilters<K extends string>(
  names: readonly K[],
): [Record<K, string>, (change: Partial<Record<K, string>>) => void] {
  const read = () => {
    const query = new URLSearchParams(location.hash.split('?')[1] ?? '');
    return Object.fromEntries(names.map((k) => [k, query.get(k) ?? ''])) as Record<K, string>;
  };
  const [filters, setFilters] = useState(read);
  const change = (changed: Partial<Record<K, string>>) => {
    const next = { ...read(), ...changed };
    const query = new URLSearchParams();
    for (const k of names) if (next[k]) query.set(k, next[k]);
    const page = location.hash.split('?')[0] ?? '';
    history.replaceState(null, '', query.size ? `${page}?${query}` : page || '#');
    setFilters(next);
  };
  return [filters, change];
}
