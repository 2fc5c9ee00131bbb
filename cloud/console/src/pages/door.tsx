// The door: one event's guest list for the staff at the entrance (laid out for a tablet). Search as you
// type (the API ignores case and accents), check in by hand, undo a check-in with a reason, add a
// walk-in and check them in, act on several guests at once; pages of 50 read as the list scrolls, so a
// list of any length works. Arrived / confirmed / capacity follow every check-in live.
import type { AdminCheckin, Event as EventT, Guest } from '@portico/contract';
import { ok } from '@portico/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { AttendanceMeter } from '../components/attendance.js';
import { UndoDialog } from '../components/undo-dialog.js';
import { lang, t, term } from '../i18n.js';
import { followCheckins } from '../live.js';
import { shownError } from '../errors.js';
import type { Session } from '../session.js';
import { useAction, useLoad, useUrlFilters } from '../hooks.js';
import { Badge, ErrorNote } from '../components/feedback.js';
import { Field, formFields } from '../components/form.js';
import { ConfirmDialog, FormDialogFooter, Modal } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';

const PAGE = 50;
/** Typing settles this long before the list is asked again. */
const TYPING_MS = 150;
/** Check-ins sent at once by a bulk action (each is decided under the event's lock anyway). */
const BULK_PARALLEL = 4;
const ADMITTED = new Set<string>(['success', 'geofence_alert']);
const STATUSES = ['confirmed', 'checked_in', 'invited', 'pending', 'declined'] as const;
const FILTERS = ['q', 'status'] as const;

const eventIdOfHash = () => location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/')[1] ?? '';
const timeOf = (iso: string) => new Date(iso).toLocaleTimeString(lang(), { timeStyle: 'short' });

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, task: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

export function Door({ session }: { session: Session }) {
  const events = useLoad(
    async () => ok(await session.api.GET('/v1/events', { params: { query: { limit: 200 } } })).items,
    [],
  );
  const [eventId, setEventId] = useState(eventIdOfHash());
  useEffect(() => {
    const onHash = () => setEventId(eventIdOfHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const list = events.data ?? [];
  const event = list.find((e) => e.id === eventId);
  // Open events first: those are the ones a door runs.
  const choices = [...list].sort((a, b) => Number(b.status === 'open') - Number(a.status === 'open'));

  const picker = (
    <Field label={t('doorPickEvent')}>
      <select
        id="door-event"
        value={event?.id ?? ''}
        onChange={(e) => (location.hash = `#/door/${(e.currentTarget as HTMLSelectElement).value}`)}
      >
        <option value="" disabled>
          {t('doorChooseEvent')}
        </option>
        {choices.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name} ({term('eventStatus', e.status)})
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <>
      <PageHeader title={event ? `${t('navDoor')}: ${event.name}` : t('navDoor')} />
      <ErrorNote error={events.error} />
      <div class="door-event">{picker}</div>
      {event ? <DoorView key={event.id} session={session} event={event} /> : null}
    </>
  );
}

function DoorView({ session, event }: { session: Session; event: EventT }) {
  const path = { params: { path: { id: event.id } } };
  // The search and the status filter are kept in the address (`#/door/<id>?q=ana`): a reload keeps them.
  const [filters, setFilters] = useUrlFilters(FILTERS);
  const { q, status } = filters;
  const [typed, setTyped] = useState(q);
  const [items, setItems] = useState<Guest[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  /** The question (search, status, reload) whose answer the list shows. */
  const question = `${q}\n${status}\n${tick}`;
  const [answered, setAnswered] = useState<string | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [notice, setNotice] = useState('');
  const [undoing, setUndoing] = useState<Guest | null>(null);
  const [walkIn, setWalkIn] = useState(false);
  const [removing, setRemoving] = useState(false);
  const action = useAction();
  // An operator runs the door (check in, undo); adding, inviting and removing guests is a manager's.
  const manages = session.me.role !== 'operator';
  const asked = useRef(0);
  const sentinel = useRef<HTMLDivElement>(null);

  const attendance = useLoad(
    async () => ok(await session.api.GET('/v1/events/{id}/attendance', path)),
    [event.id],
  );
  const reloadAttendance = useRef(attendance.reload);
  reloadAttendance.current = attendance.reload;
  // Undone check-ins and guests removed elsewhere are not in the live stream: the counter is read again
  // every half minute as well.
  useEffect(() => {
    const timer = setInterval(() => reloadAttendance.current(), 30_000);
    return () => clearInterval(timer);
  }, []);

  const fetchPage = async (after?: string) =>
    ok(
      await session.api.GET('/v1/events/{id}/guests', {
        params: {
          path: { id: event.id },
          query: {
            limit: PAGE,
            ...(q ? { q } : {}),
            ...(status ? { status: status as Guest['status'] } : {}),
            ...(after ? { cursor: after } : {}),
          },
        },
      }),
    );

  // What was typed, once typing settles; the answer to an older question is dropped.
  useEffect(() => {
    const timer = setTimeout(() => setFilters({ q: typed.trim() }), TYPING_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  useEffect(() => {
    const n = ++asked.current;
    setLoading(true);
    fetchPage()
      .then((page) => {
        if (n !== asked.current) return;
        setItems(page.items);
        setTotal(page.total);
        setCursor(page.nextCursor);
        action.setError(null);
      })
      .catch((err: unknown) => n === asked.current && action.setError(shownError(err)))
      .finally(() => {
        if (n !== asked.current) return;
        setLoading(false);
        setAnswered(question);
      });
  }, [q, status, tick]);

  const loadMore = async () => {
    if (!cursor || loading) return;
    const n = asked.current;
    setLoading(true);
    try {
      const page = await fetchPage(cursor);
      if (n !== asked.current) return;
      setItems((list) => [...list, ...page.items.filter((g) => !list.some((x) => x.id === g.id))]);
      setCursor(page.nextCursor);
    } catch (err) {
      action.setError(shownError(err));
    } finally {
      if (n === asked.current) setLoading(false);
    }
  };
  const loadMoreRef = useRef(loadMore);
  loadMoreRef.current = loadMore;
  // The next page when the end of the list scrolls into view (the button stays for keyboards).
  useEffect(() => {
    const end = sentinel.current;
    if (!end || typeof IntersectionObserver === 'undefined') return;
    const watcher = new IntersectionObserver((seen) => {
      if (seen.some((s) => s.isIntersecting)) void loadMoreRef.current();
    });
    watcher.observe(end);
    return () => watcher.disconnect();
  }, []);

  // Check-ins at this event from anywhere (kiosks, links, other doors): the counter and the rows follow.
  useEffect(() => {
    const abort = new AbortController();
    void followCheckins(
      session,
      abort.signal,
      (c: AdminCheckin) => {
        if (c.event?.id !== event.id) return;
        reloadAttendance.current();
        if (c.guestId && ADMITTED.has(c.outcome)) {
          setItems((list) =>
            list.map((g) =>
              g.id === c.guestId && g.status !== 'checked_in'
                ? { ...g, status: 'checked_in', checkedInAt: c.recordedAt }
                : g,
            ),
          );
        }
      },
      () => undefined,
    );
    return () => abort.abort();
  }, [session, event.id]);

  const patchRow = (id: string, change: Partial<Guest>) =>
    setItems((list) => list.map((g) => (g.id === id ? { ...g, ...change } : g)));

  /** Checks one guest in; says whether they were admitted. */
  const admit = async (g: Guest): Promise<boolean> => {
    const result = ok(
      await session.api.POST('/v1/checkin/manual', { body: { guestId: g.id, eventId: event.id } }),
    );
    if (ADMITTED.has(result.outcome)) {
      patchRow(g.id, { status: 'checked_in', checkedInAt: result.occurredAt });
      return true;
    }
    setNotice(
      t('deniedNotice', {
        name: g.name,
        reason: result.reason ? term('denialReason', result.reason) : term('checkinOutcome', result.outcome),
      }),
    );
    return false;
  };

  const checkIn = (g: Guest) =>
    action.run(async () => {
      if (await admit(g)) setNotice(t('checkedInNotice', { name: g.name }));
      attendance.reload();
    });

  const undo = (g: Guest, reason: string) =>
    action.run(async () => {
      // The guest's latest admission that still counts is the one taken back.
      const checkins = ok(
        await session.api.GET('/v1/admin/checkins', {
          params: { query: { eventId: event.id, guestId: g.id, limit: 50 } },
        }),
      ).items;
      const last = checkins.find((c) => ADMITTED.has(c.outcome) && !c.voided);
      setUndoing(null);
      if (!last) {
        setNotice(t('nothingToUndo', { name: g.name }));
        return;
      }
      const voided = ok(
        await session.api.POST('/v1/checkin/{checkInId}/void', {
          params: { path: { checkInId: last.id } },
          body: { reason },
        }),
      );
      if (voided.guest) {
        patchRow(g.id, {
          status: voided.guest.status as Guest['status'],
          checkedInAt: voided.guest.checkedInAt,
        });
      }
      setNotice(t('undoneNotice', { name: g.name }));
      attendance.reload();
    });

  const addWalkIn = (e: Event) => {
    e.preventDefault();
    const v = formFields(e, ['name', 'email', 'document'] as const);
    void action.run(async () => {
      const guest = ok(
        await session.api.POST('/v1/events/{id}/guests', {
          ...path,
          body: {
            name: v.name,
            status: 'confirmed',
            ...(v.email ? { email: v.email } : {}),
            ...(v.document ? { document: v.document } : {}),
          },
        }),
      );
      setWalkIn(false);
      setItems((list) => [guest, ...list.filter((g) => g.id !== guest.id)]);
      setTotal((n) => (n === null ? n : n + 1));
      if (await admit(guest)) setNotice(t('checkedInNotice', { name: guest.name }));
      attendance.reload();
    });
  };

  const chosen = items.filter((g) => selected.has(g.id));
  const toggle = (id: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const allShown = items.length > 0 && items.every((g) => selected.has(g.id));

  const bulkCheckIn = () =>
    action.run(async () => {
      let admitted = 0;
      let refused = 0;
      await inParallel(
        chosen.filter((g) => g.status !== 'checked_in'),
        BULK_PARALLEL,
        async (g) => {
          if (await admit(g)) admitted++;
          else refused++;
        },
      );
      setSelected(new Set());
      setNotice(t('bulkCheckedIn', { ok: admitted, refused }));
      attendance.reload();
    });
  const bulkInvite = () =>
    action.run(async () => {
      const r = ok(
        await session.api.POST('/v1/events/{id}/guests/invite', {
          ...path,
          body: { guestIds: chosen.map((g) => g.id) },
        }),
      );
      setSelected(new Set());
      setNotice(t('inviteResult', { sent: r.sent, skipped: r.skipped, failed: r.failed }));
      setTick((n) => n + 1);
    });
  const bulkRemove = () =>
    action.run(async () => {
      setRemoving(false);
      let removed = 0;
      let failed = 0;
      await inParallel(chosen, BULK_PARALLEL, async (g) => {
        const res = await session.api.DELETE('/v1/events/{id}/guests/{guestId}', {
          params: { path: { id: event.id, guestId: g.id } },
        });
        if (res.error) failed++;
        else removed++;
      });
      setSelected(new Set());
      setNotice(t('bulkRemoved', { ok: removed, failed }));
      setTick((n) => n + 1);
      attendance.reload();
    });

  return (
    <section class="door" aria-label={event.name}>
      <div class="door-bar">
        {attendance.data ? <AttendanceMeter attendance={attendance.data} id="door-attendance" /> : null}
        <div class="door-find">
          <Field label={t('doorSearch')}>
            <input
              type="search"
              id="door-search"
              placeholder={t('doorSearchHelp')}
              autocomplete="off"
              autoFocus
              value={typed}
              onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)}
            />
          </Field>
          <Field label={t('status')}>
            <select
              id="door-status"
              value={status}
              onChange={(e) => setFilters({ status: (e.currentTarget as HTMLSelectElement).value })}
            >
              <option value="">{t('all')}</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {term('guestStatus', s)}
                </option>
              ))}
            </select>
          </Field>
          {manages ? (
            <button type="button" id="walk-in" class="secondary" onClick={() => setWalkIn(true)}>
              {t('walkIn')}
            </button>
          ) : null}
        </div>
      </div>

      <p class="notice" role="status" id="door-notice">
        {notice}
      </p>
      <ErrorNote error={action.error ?? attendance.error} />

      <div class="door-bulk" role="group" aria-label={t('selectedCount', { count: chosen.length })}>
        <label>
          <input
            type="checkbox"
            id="select-shown"
            checked={allShown}
            onChange={(e) =>
              setSelected(
                (e.currentTarget as HTMLInputElement).checked ? new Set(items.map((g) => g.id)) : new Set(),
              )
            }
          />
          {t('selectShown')}
        </label>
        {chosen.length > 0 ? (
          <>
            <strong id="selected-count">{t('selectedCount', { count: chosen.length })}</strong>
            <button
              type="button"
              id="bulk-checkin"
              onClick={() => void bulkCheckIn()}
              aria-busy={action.busy}
            >
              {t('checkIn')}
            </button>
            {manages ? (
              <>
                <button type="button" id="bulk-invite" class="secondary" onClick={() => void bulkInvite()}>
                  {t('inviteSelected')}
                </button>
                <button
                  type="button"
                  id="bulk-remove"
                  class="contrast outline"
                  onClick={() => setRemoving(true)}
                >
                  {t('removeGuest')}
                </button>
              </>
            ) : null}
            <button type="button" class="secondary outline" onClick={() => setSelected(new Set())}>
              {t('clearSelection')}
            </button>
          </>
        ) : null}
      </div>

      <p class="muted" id="door-count" aria-live="polite">
        {total === null
          ? t('loading')
          : total === 0 && q
            ? t('noGuestMatch', { q })
            : t('doorShowing', { shown: items.length, total })}
      </p>
      {/* Busy from the first key typed until the list shows the answer to what was typed. */}
      <ul
        class="door-list"
        id="door-guests"
        aria-busy={loading || typed.trim() !== q || answered !== question}
      >
        {items.map((g) => (
          <li key={g.id} class={g.status === 'checked_in' ? 'in' : undefined} data-guest={g.name}>
            <input
              type="checkbox"
              aria-label={t('selectGuest', { name: g.name })}
              checked={selected.has(g.id)}
              onChange={(e) => toggle(g.id, (e.currentTarget as HTMLInputElement).checked)}
            />
            <div class="guest">
              <strong>{g.name}</strong>
              <small>{[g.email, g.document].filter(Boolean).join(' · ') || '\u00a0'}</small>
            </div>
            <div class="state">
              <Badge tone={g.status === 'checked_in' ? 'ok' : g.status === 'declined' ? 'bad' : undefined}>
                {term('guestStatus', g.status)}
              </Badge>
              {g.status === 'checked_in' && g.checkedInAt ? (
                <small>{t('inAt', { time: timeOf(g.checkedInAt) })}</small>
              ) : null}
            </div>
            {g.status === 'checked_in' ? (
              <button
                type="button"
                class="secondary outline"
                aria-label={t('undoName', { name: g.name })}
                onClick={() => setUndoing(g)}
              >
                {t('undo')}
              </button>
            ) : (
              <button
                type="button"
                aria-label={t('checkInName', { name: g.name })}
                onClick={() => void checkIn(g)}
              >
                {t('checkIn')}
              </button>
            )}
          </li>
        ))}
      </ul>
      <div ref={sentinel} class="door-end">
        {cursor ? (
          <button
            type="button"
            class="outline"
            id="door-more"
            onClick={() => void loadMore()}
            aria-busy={loading}
          >
            {t('loadMore')}
          </button>
        ) : null}
      </div>

      {undoing ? (
        <UndoDialog
          name={undoing.name}
          busy={action.busy}
          fallbackFocus="#door-search"
          onCancel={() => setUndoing(null)}
          onUndo={(reason) => void undo(undoing, reason)}
        />
      ) : null}
      {walkIn ? (
        <Modal labelledBy="walk-in-title" describedBy="walk-in-help" onClose={() => setWalkIn(false)}>
          <article>
            <h2 id="walk-in-title">{t('walkInTitle')}</h2>
            <p id="walk-in-help" class="muted">
              {t('walkInHelp')}
            </p>
            <form onSubmit={addWalkIn}>
              <Field label={t('name')}>
                <input name="name" id="walk-in-name" required autoFocus />
              </Field>
              <Field label={t('email')}>
                <input type="email" name="email" id="walk-in-email" />
              </Field>
              <Field label={t('document')}>
                <input name="document" id="walk-in-document" />
              </Field>
              <ErrorNote error={action.error} />
              <FormDialogFooter
                onCancel={() => setWalkIn(false)}
                submitId="walk-in-submit"
                busy={action.busy}
                submitLabel={t('walkInSubmit')}
              />
            </form>
          </article>
        </Modal>
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={t('removeSelectedTitle', { count: chosen.length })}
          text={t('removeSelectedText')}
          confirmLabel={t('removeGuest')}
          fallbackFocus="#door-search"
          onConfirm={() => void bulkRemove()}
          onCancel={() => setRemoving(false)}
        />
      ) : null}
    </section>
  );
}
