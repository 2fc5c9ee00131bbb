// Check-ins: every check-in of the tenant with filters, newest first, page by page; an admission undone
// with a reason; the same filters export a CSV file.
import type { AdminCheckin, AdminCheckinFlag, Event as EventT } from '@portico/contract';
import type { EnumWords } from '@portico/contract/words';
import { ok } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t, term } from '../i18n.js';
import type { Session } from '../session.js';
import { UndoDialog } from '../components/undo-dialog.js';
import { useAction, useEvents, usePages, useUrlFilters } from '../hooks.js';
import { isoOf, METHODS, saveFile, valuesOf } from '../format.js';
import { ErrorNote } from '../components/feedback.js';
import { PagesFooter, Table } from '../components/table.js';
import { Field, formFields } from '../components/form.js';
import { PageHeader } from '../components/page-header.js';
import { checkinHead, CheckinRow, whoOf } from '../components/checkin-row.js';

const OUTCOMES = valuesOf<AdminCheckin['outcome']>({
  success: true,
  denied: true,
  liveness_failed: true,
  geofence_alert: true,
});
const FLAGS = valuesOf<AdminCheckinFlag>({
  offline: true,
  late: true,
  conflict: true,
  event_closed: true,
  capacity_reached: true,
  method_not_allowed: true,
  already_checked_in: true,
});

/** The filters whose choices are a contract enum, and that enum's words. */
const FILTER_WORDS = { method: 'checkinMethod', outcome: 'checkinOutcome', flag: 'checkinFlag' } as const;

const FILTERS = ['eventId', 'method', 'outcome', 'flag', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

export function Checkins({ session }: { session: Session }) {
  const events = useEvents(session);
  const [filters, setFilters] = useUrlFilters(FILTERS);
  // The form's values as the route's query: empty ones left out.
  const query = (f: Filters, cursor?: string) => ({
    ...(f.eventId ? { eventId: f.eventId } : {}),
    ...(f.method ? { method: f.method as AdminCheckin['method'] } : {}),
    ...(f.outcome ? { outcome: f.outcome as AdminCheckin['outcome'] } : {}),
    ...(f.flag ? { flag: f.flag as AdminCheckinFlag } : {}),
    ...(f.from ? { from: isoOf(f.from) } : {}),
    ...(f.to ? { to: isoOf(f.to) } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const pages = usePages<AdminCheckin>(
    async (cursor) =>
      ok(await session.api.GET('/v1/admin/checkins', { params: { query: query(filters, cursor) } })),
    [filters],
  );
  const { items } = pages;
  const exporting = useAction();
  const undoing = useAction();
  const [toUndo, setToUndo] = useState<AdminCheckin | null>(null);
  // Check-ins undone here, shown as such without reading the pages again.
  const [undone, setUndone] = useState<Record<string, AdminCheckin['voided']>>({});
  const undo = (c: AdminCheckin, reason: string) =>
    undoing.run(async () => {
      const voided = ok(
        await session.api.POST('/v1/checkin/{checkInId}/void', {
          params: { path: { checkInId: c.id } },
          body: { reason },
        }),
      );
      setToUndo(null);
      setUndone((m) => ({ ...m, [c.id]: { at: voided.voidedAt, reason: voided.reason, by: session.me.id } }));
    });

  const apply = (e: Event) => {
    e.preventDefault();
    setFilters(formFields(e, FILTERS));
  };
  const exportCsv = () =>
    exporting.run(async () => {
      const csv = ok(
        await session.api.GET('/v1/admin/checkins/export.csv', {
          params: { query: query(filters) },
          parseAs: 'blob',
        }),
      );
      saveFile(csv, `checkins-${new Date().toISOString().slice(0, 10)}.csv`);
    });

  const option =
    <K extends keyof typeof FILTER_WORDS>(name: K) =>
    (v: keyof EnumWords[(typeof FILTER_WORDS)[K]] & string) => (
      <option key={v} value={v} selected={filters[name] === v}>
        {term(FILTER_WORDS[name], v)}
      </option>
    );
  return (
    <>
      <PageHeader title={t('navCheckins')}>
        <button
          type="button"
          class="secondary"
          id="export-csv"
          onClick={() => void exportCsv()}
          aria-busy={exporting.busy}
        >
          {t('exportCsv')}
        </button>
      </PageHeader>
      <form class="row" onSubmit={apply} aria-label={t('filter')}>
        <Field label={t('event')}>
          <select name="eventId">
            <option value="">{t('all')}</option>
            {(events.data ?? []).map((ev: EventT) => (
              <option key={ev.id} value={ev.id} selected={filters.eventId === ev.id}>
                {ev.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('method')}>
          <select name="method">
            <option value="">{t('all')}</option>
            {METHODS.map(option('method'))}
          </select>
        </Field>
        <Field label={t('outcome')}>
          <select name="outcome">
            <option value="">{t('all')}</option>
            {OUTCOMES.map(option('outcome'))}
          </select>
        </Field>
        <Field label={t('flag')}>
          <select name="flag">
            <option value="">{t('all')}</option>
            {FLAGS.map(option('flag'))}
          </select>
        </Field>
        <Field label={t('from')}>
          <input type="datetime-local" name="from" defaultValue={filters.from} />
        </Field>
        <Field label={t('to')}>
          <input type="datetime-local" name="to" defaultValue={filters.to} />
        </Field>
        <button type="submit">{t('filter')}</button>
      </form>
      <ErrorNote error={pages.error ?? exporting.error ?? undoing.error} />
      <Table id="checkins" head={checkinHead(true, true)}>
        {items.map((c) => (
          <CheckinRow
            key={c.id}
            session={session}
            checkin={undone[c.id] ? { ...c, voided: undone[c.id]! } : c}
            detailed
            onUndo={setToUndo}
          />
        ))}
      </Table>
      {toUndo ? (
        <UndoDialog
          name={whoOf(toUndo)}
          busy={undoing.busy}
          fallbackFocus="#checkins"
          onCancel={() => setToUndo(null)}
          onUndo={(reason) => void undo(toUndo, reason)}
        />
      ) : null}
      <PagesFooter pages={pages} />
    </>
  );
}
