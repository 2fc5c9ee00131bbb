// Events and guests: the tenant's events, one opened with its form (components/event-form), its guests
// (components/guest-list), opening, closing and cancelling (both ask first) and its attendance.
import type { Event as EventT } from '@portico/contract';
import { ok } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t, term } from '../i18n.js';
import type { Session } from '../session.js';
import { whenIn } from '../time-zones.js';
import { useAction, useEvents } from '../hooks.js';
import { Badge, ErrorNote } from '../components/feedback.js';
import { Table } from '../components/table.js';
import { ConfirmDialog } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';
import { EventForm } from '../components/event-form.js';
import { Guests } from '../components/guest-list.js';

/** The status changes offered for an event in each status (as EVENT_TRANSITIONS allows). */
const STATUS_ACTIONS: {
  to: EventT['status'];
  from: EventT['status'][];
  label: 'publish' | 'open' | 'closeEvent' | 'cancelEvent';
}[] = [
  { to: 'published', from: ['draft'], label: 'publish' },
  { to: 'open', from: ['draft', 'published', 'closed'], label: 'open' },
  { to: 'closed', from: ['open'], label: 'closeEvent' },
  { to: 'cancelled', from: ['draft', 'published', 'open', 'closed'], label: 'cancelEvent' },
];

function EventDetail(props: {
  session: Session;
  event: EventT;
  onBack: () => void;
  onChanged: (e: EventT) => void;
}) {
  const { session, event } = props;
  const [configuring, setConfiguring] = useState(false);
  /** The change being confirmed: closing stops every door, cancelling cannot be undone. */
  const [confirming, setConfirming] = useState<'closed' | 'cancelled' | null>(null);
  const action = useAction();
  const move = (status: EventT['status']) =>
    action.run(async () => {
      setConfirming(null);
      props.onChanged(
        ok(
          await session.api.PATCH('/v1/events/{id}/status', {
            params: { path: { id: event.id } },
            body: { status },
          }),
        ),
      );
    });
  return (
    <>
      <PageHeader title={event.name}>
        <button type="button" class="secondary outline" onClick={props.onBack}>
          {t('back')}
        </button>
      </PageHeader>
      <p>
        {t('status')}:{' '}
        <Badge tone={event.status === 'open' ? 'ok' : undefined}>{term('eventStatus', event.status)}</Badge> ·{' '}
        {event.checkinMethods.map((m) => term('checkinMethod', m)).join(', ')} ·{' '}
        <span id="event-when">
          {whenIn(event.startsAt, event.timeZone)}
          {event.endsAt ? ` – ${whenIn(event.endsAt, event.timeZone)}` : ''}
        </span>
      </p>
      <div class="row">
        {STATUS_ACTIONS.filter((a) => a.from.includes(event.status)).map((a) => (
          <button
            type="button"
            key={a.to}
            id={`status-${a.to}`}
            class={a.to === 'cancelled' ? 'secondary outline' : undefined}
            // Closing stops every door at once and cancelling is final: both asked first.
            onClick={() =>
              a.to === 'closed' || a.to === 'cancelled' ? setConfirming(a.to) : void move(a.to)
            }
          >
            {t(a.label)}
          </button>
        ))}
        <button type="button" class="secondary" onClick={() => setConfiguring(!configuring)}>
          {t('configure')}
        </button>
        <a href={`#/door/${event.id}`} id="open-door">
          {t('doorOpen')}
        </a>
      </div>
      {confirming === 'closed' ? (
        <ConfirmDialog
          title={t('closeEventTitle', { name: event.name })}
          text={t('closeEventText')}
          confirmLabel={t('closeEventConfirm')}
          fallbackFocus="#status-open"
          onConfirm={() => void move('closed')}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {confirming === 'cancelled' ? (
        <ConfirmDialog
          title={t('cancelEventTitle', { name: event.name })}
          text={t('cancelEventText')}
          confirmLabel={t('cancelEventConfirm')}
          cancelLabel={t('keepEvent')}
          fallbackFocus="#open-door"
          onConfirm={() => void move('cancelled')}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      <ErrorNote error={action.error} />
      {configuring ? (
        <EventForm
          session={session}
          event={event}
          onDone={(e) => {
            setConfiguring(false);
            if (e) props.onChanged(e);
          }}
        />
      ) : null}
      <Guests session={session} event={event} onChanged={props.onChanged} />
    </>
  );
}

export function Events({ session }: { session: Session }) {
  const events = useEvents(session);
  const [creating, setCreating] = useState(false);
  const [selected, setSelected] = useState<EventT | null>(null);

  if (selected)
    return (
      <EventDetail
        key={selected.id}
        session={session}
        event={selected}
        onBack={() => {
          setSelected(null);
          events.reload();
        }}
        onChanged={setSelected}
      />
    );
  return (
    <>
      <PageHeader title={t('navEvents')}>
        <button type="button" id="new-event" onClick={() => setCreating(true)}>
          {t('newEvent')}
        </button>
      </PageHeader>
      {creating ? (
        <EventForm
          session={session}
          event={null}
          onDone={(e) => {
            setCreating(false);
            if (e) setSelected(e);
          }}
        />
      ) : null}
      <ErrorNote error={events.error} />
      <Table id="events" head={[t('name'), t('status'), t('startsAt'), t('methods'), t('actions')]}>
        {(events.data ?? []).map((e) => (
          <tr key={e.id}>
            <td>{e.name}</td>
            <td>
              <Badge tone={e.status === 'open' ? 'ok' : undefined}>{term('eventStatus', e.status)}</Badge>
            </td>
            <td>{whenIn(e.startsAt, e.timeZone)}</td>
            <td>{e.checkinMethods.map((m) => term('checkinMethod', m)).join(', ')}</td>
            <td>
              <button type="button" class="outline" onClick={() => setSelected(e)}>
                {t('guests')} / {t('configure')}
              </button>{' '}
              <a href={`#/door/${e.id}`}>{t('navDoor')}</a>
            </td>
          </tr>
        ))}
      </Table>
      {events.data?.length === 0 ? <p class="muted">{t('none')}</p> : null}
    </>
  );
}
