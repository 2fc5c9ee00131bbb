// Small pieces every page uses: loading data with its error, a labelled field, a confirmation dialog.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { shownError, type ShownError } from './errors.js';
import { t, term } from './i18n.js';

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

/** "Nothing yet" under an empty list, and the button that reads the next page while there is one. */
export function PagesFooter(props: { pages: ReturnType<typeof usePages<unknown>> }) {
  const { pages } = props;
  return (
    <>
      {!pages.loading && pages.items.length === 0 ? <p class="muted">{t('none')}</p> : null}
      {pages.hasMore ? (
        <button
          type="button"
          class="outline"
          onClick={() => void pages.loadMore()}
          aria-busy={pages.more.busy}
        >
          {t('loadMore')}
        </button>
      ) : null}
    </>
  );
}

/** The named fields of a submitted form, as strings (trimmed). */
export function formFields<K extends string>(e: Event, names: readonly K[]): Record<K, string> {
  const form = new FormData(e.currentTarget as HTMLFormElement);
  return Object.fromEntries(names.map((k) => [k, String(form.get(k) ?? '').trim()])) as Record<K, string>;
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

/**
 * A failure in the console's language. The error's code and request id stay at hand for support in a
 * closed "details" line (and the title), never in the sentence itself.
 */
export function ErrorNote({ error }: { error: ShownError | string | null | undefined }) {
  if (!error) return null;
  const shown = typeof error === 'string' ? { message: error } : error;
  const support = [shown.code, shown.requestId].filter(Boolean).join(' · ');
  return (
    <div class="error" role="alert" data-code={shown.code} title={support || undefined}>
      <p class="error-message">{shown.message}</p>
      {support ? (
        <details class="error-support">
          <summary>{t('errorSupport')}</summary>
          <code>{support}</code>
        </details>
      ) : null}
    </div>
  );
}

/** A short confirmation (saved, queued), read out by screen readers; nothing without a message. */
export function Notice({ message }: { message: string | null | undefined }) {
  return message ? (
    <p class="notice" role="status">
      {message}
    </p>
  ) : null;
}

/**
 * A table in its scrolling wrapper: `head` the column titles, the children its rows. `stacked`: on a
 * phone each row becomes a card whose cells are labelled by their `data-label` (nothing scrolls sideways).
 */
export function Table(props: {
  id: string;
  head: readonly string[];
  stacked?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class={props.stacked ? 'table-wrap stacked' : 'table-wrap'}>
      <table id={props.id}>
        <thead>
          <tr>
            {props.head.map((title) => (
              <th key={title}>{title}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

export function Field(props: { label: string; help?: string; children: ComponentChildren }) {
  return (
    <label>
      {props.label}
      {props.children}
      {props.help ? <small>{props.help}</small> : null}
    </label>
  );
}

/** The 6-digit TOTP code of an authenticator app, in a form's field `code`. */
export function CodeInput(props: { id: string; autoFocus?: boolean }) {
  return (
    <input
      name="code"
      id={props.id}
      inputMode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      required
      autoFocus={props.autoFocus}
    />
  );
}

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page">
      <h1>{props.title}</h1>
      {props.children ? <div class="actions">{props.children}</div> : null}
    </header>
  );
}

/**
 * A modal dialog (native `<dialog>`, so focus stays inside and Escape closes it). When it goes, focus
 * returns to what opened it, or to `fallbackFocus` (a selector) when that is gone (e.g. a row's button
 * after the row changed).
 */
export function Modal(props: {
  labelledBy: string;
  describedBy?: string;
  id?: string;
  fallbackFocus?: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    ref.current?.showModal();
    const fallback = props.fallbackFocus;
    return () => {
      const target = opener?.isConnected
        ? opener
        : fallback
          ? document.querySelector<HTMLElement>(fallback)
          : null;
      target?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      id={props.id}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      aria-labelledby={props.labelledBy}
      aria-describedby={props.describedBy}
    >
      {props.children}
    </dialog>
  );
}

/**
 * A modal that asks before something irreversible; the text says what will be erased or stop working,
 * `confirmLabel` what the confirming button does (default "Yes, erase").
 */
export function ConfirmDialog(props: {
  title: string;
  text: string;
  confirmLabel?: string;
  fallbackFocus?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal
      labelledBy="confirm-title"
      describedBy="confirm-text"
      onClose={props.onCancel}
      fallbackFocus={props.fallbackFocus}
    >
      <article>
        <h2 id="confirm-title">{props.title}</h2>
        <p id="confirm-text">{props.text}</p>
        <footer>
          <button type="button" class="secondary" onClick={props.onCancel}>
            {t('cancel')}
          </button>
          <button type="button" class="contrast" onClick={props.onConfirm}>
            {props.confirmLabel ?? t('confirm')}
          </button>
        </footer>
      </article>
    </Modal>
  );
}

/** Hands a downloaded body to the browser as a file. */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `datetime-local` input value -> ISO instant (empty stays undefined). */
export function isoOf(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}

export function Badge(props: { tone?: 'ok' | 'bad' | 'warn'; children: ComponentChildren }) {
  return <span class={`badge ${props.tone ?? ''}`}>{props.children}</span>;
}

/**
 * Every value of a union from the contract, in display order: written as a record so that the compiler
 * refuses a list that misses a value or has one too many (the bundle takes no runtime code from the contract).
 */
export const valuesOf = <T extends string>(all: Record<T, true>) => Object.keys(all) as T[];

/** A row's problem from an import report: the field (without the `rows.N.` the row number says) and why. */
export function rowProblem(e: { path: string; message: string }): string {
  const field = e.path.replace(/^rows\.\d+\.?/, '');
  const why = /received undefined/.test(e.message) ? t('missing') : e.message;
  return field ? `${field}: ${why}` : why;
}

/** A check-in outcome as a coloured badge. */
export function OutcomeBadge({ outcome }: { outcome: string }) {
  const tone = outcome === 'success' ? 'ok' : outcome === 'geofence_alert' ? 'warn' : 'bad';
  return <Badge tone={tone}>{term(outcome)}</Badge>;
}
