// Events and guests: create and configure an event (times in the event's own time zone, methods,
// capacity, geofence, branding with a preview of the kiosk's attract screen), open and close it (closing
// asks first), import its guest list with the per-row report, edit or remove one guest, mail
// invitations (a draft is published first, never mailed dead links), and follow attendance.
import type { Branding, Event as EventT, Guest } from '@portico/contract';
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../errors.js';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { browserZone, instantOf, timeZones, wallOf, whenIn, zoneLabel } from '../time-zones.js';
import {
  Badge,
  ConfirmDialog,
  ErrorNote,
  Field,
  formFields,
  Notice,
  PageHeader,
  rowProblem,
  Table,
  useAction,
  useLoad,
  valuesOf,
} from '../ui.js';
import { METHODS, useEvents } from './checkins.js';

/** What the kiosk shows while nobody is in front of it, in the event's colours. */
export function AttractPreview({ branding, name }: { branding: Branding; name: string }) {
  return (
    <figure>
      <div
        class="attract"
        id="attract-preview"
        style={{ background: branding.primaryColor ?? '#0b5fff', color: '#fff' }}
        aria-label={t('preview')}
      >
        {branding.logoUrl ? <img src={branding.logoUrl} alt="" /> : null}
        <h3>{branding.displayName || name || '—'}</h3>
        {branding.welcomeText ? <p>{branding.welcomeText}</p> : null}
        <span
          class="cta"
          style={{
            background: branding.secondaryColor ?? '#ffffff',
            color: branding.primaryColor ?? '#0b5fff',
          }}
        >
          {t('lookAtCamera')}
        </span>
      </div>
      <figcaption class="muted">{t('preview')}</figcaption>
    </figure>
  );
}

function brandingOf(form: FormData): Branding {
  const s = (k: string) => String(form.get(k) ?? '').trim();
  const b: Branding = { primaryColor: s('primaryColor'), secondaryColor: s('secondaryColor') };
  for (const k of ['displayName', 'logoUrl', 'welcomeText', 'locale'] as const) if (s(k)) b[k] = s(k);
  return b;
}

function EventForm(props: { session: Session; event: EventT | null; onDone: (e: EventT | null) => void }) {
  const { session, event } = props;
  const [branding, setBranding] = useState<Branding>(
    event?.branding ?? { primaryColor: '#0b5fff', secondaryColor: '#ffffff', locale: 'en' },
  );
  const [name, setName] = useState(event?.name ?? '');
  // The zone the start and end are typed in: the event's, or the browser's for a new event.
  const [zone, setZone] = useState(event?.timeZone ?? browserZone());
  const save = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const s = (k: string) => String(form.get(k) ?? '').trim();
    const num = (k: string) => (s(k) === '' ? null : Number(s(k)));
    const methods = METHODS.filter((m) => form.get(`method-${m}`) === 'on');
    const lat = num('lat');
    const lng = num('lng');
    const geofence =
      lat !== null && lng !== null ? { center: { lat, lng }, radiusMetres: num('radius') } : null;
    const timeZone = s('timeZone') || 'UTC';
    const fields = {
      name: s('name'),
      startsAt: instantOf(s('startsAt'), timeZone),
      endsAt: instantOf(s('endsAt'), timeZone),
      timeZone,
      branding: brandingOf(form),
    };
    // Said here before anything is sent; the API refuses it the same way (400 ends_before_start).
    if (fields.startsAt && fields.endsAt && fields.endsAt < fields.startsAt) {
      save.setError({ message: errorText('ends_before_start') ?? '', code: 'ends_before_start' });
      document.getElementById('event-ends')?.focus();
      return;
    }
    void save.run(async () => {
      if (!event) {
        const created = ok(
          await session.api.POST('/v1/events', {
            body: { ...fields, capacity: num('capacity'), checkinMethods: methods, geofence },
          }),
        );
        return props.onDone(created);
      }
      const path = { params: { path: { id: event.id } } };
      ok(await session.api.PATCH('/v1/events/{id}', { ...path, body: fields }));
      props.onDone(
        ok(
          await session.api.PATCH('/v1/events/{id}/config', {
            ...path,
            body: { capacity: num('capacity'), checkinMethods: methods, geofence },
          }),
        ),
      );
    });
  };
  const onInput = (e: Event) => {
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBranding(brandingOf(form));
    setName(String(form.get('name') ?? ''));
    setZone(String(form.get('timeZone') ?? zone));
  };

  return (
    <article>
      <h2>{event ? `${t('configure')}: ${event.name}` : t('newEvent')}</h2>
      <form onSubmit={submit} onInput={onInput} id="event-form">
        <div class="grid-2">
          <div>
            <Field label={t('name')}>
              <input name="name" id="event-name" required defaultValue={event?.name ?? ''} />
            </Field>
            <Field label={t('timeZone')} help={t('timeZoneHelp')}>
              <select name="timeZone" id="event-zone" value={zone}>
                {timeZones(zone).map((z) => (
                  <option key={z} value={z}>
                    {zoneLabel(z)}
                  </option>
                ))}
              </select>
            </Field>
            <div class="row">
              <Field label={t('startsAtIn', { zone: zoneLabel(zone) })}>
                <input
                  type="datetime-local"
                  name="startsAt"
                  id="event-starts"
                  defaultValue={wallOf(event?.startsAt, zone)}
                />
              </Field>
              <Field label={t('endsAtIn', { zone: zoneLabel(zone) })}>
                <input
                  type="datetime-local"
                  name="endsAt"
                  id="event-ends"
                  defaultValue={wallOf(event?.endsAt, zone)}
                />
              </Field>
            </div>
            <Field label={t('capacity')}>
              <input
                type="number"
                name="capacity"
                id="event-capacity"
                min="1"
                defaultValue={event?.capacity ?? ''}
              />
            </Field>
            <fieldset>
              <legend>{t('methods')}</legend>
              {METHODS.map((m) => (
                <label key={m}>
                  <input
                    type="checkbox"
                    name={`method-${m}`}
                    defaultChecked={event ? event.checkinMethods.includes(m) : true}
                  />
                  {term(m)}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>{t('geofence')}</legend>
              <div class="row">
                <Field label={t('latitude')}>
                  <input
                    type="number"
                    step="any"
                    min="-90"
                    max="90"
                    name="lat"
                    defaultValue={event?.geofence?.center.lat ?? ''}
                  />
                </Field>
                <Field label={t('longitude')}>
                  <input
                    type="number"
                    step="any"
                    min="-180"
                    max="180"
                    name="lng"
                    defaultValue={event?.geofence?.center.lng ?? ''}
                  />
                </Field>
              </div>
              <Field label={t('radius')}>
                <input
                  type="number"
                  min="1"
                  name="radius"
                  defaultValue={event?.geofence?.radiusMetres ?? ''}
                />
              </Field>
            </fieldset>
          </div>
          <div>
            <fieldset>
              <legend>{t('branding')}</legend>
              <Field label={t('displayName')}>
                <input name="displayName" defaultValue={event?.branding.displayName ?? ''} />
              </Field>
              <div class="row">
                <Field label={t('primaryColor')}>
                  <input type="color" name="primaryColor" defaultValue={branding.primaryColor ?? '#0b5fff'} />
                </Field>
                <Field label={t('secondaryColor')}>
                  <input
                    type="color"
                    name="secondaryColor"
                    defaultValue={branding.secondaryColor ?? '#ffffff'}
                  />
                </Field>
              </div>
              <Field label={t('logoUrl')}>
                <input type="url" name="logoUrl" defaultValue={event?.branding.logoUrl ?? ''} />
              </Field>
              <Field label={t('welcomeText')}>
                <textarea name="welcomeText" rows={2} defaultValue={event?.branding.welcomeText ?? ''} />
              </Field>
              <Field label={t('locale')}>
                <select name="locale" value={branding.locale ?? 'en'}>
                  <option value="en">English</option>
                  <option value="pt-BR">Português (Brasil)</option>
                </select>
              </Field>
            </fieldset>
            <AttractPreview branding={branding} name={name} />
          </div>
        </div>
        <ErrorNote error={save.error} />
        <div class="row">
          <button type="submit" id="save-event" aria-busy={save.busy}>
            {event ? t('save') : t('create')}
          </button>
          <button type="button" class="secondary" onClick={() => props.onDone(null)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </article>
  );
}

const GUEST_STATUSES = valuesOf<Guest['status']>({
  pending: true,
  invited: true,
  confirmed: true,
  declined: true,
  checked_in: true,
});

/** The statuses an admin may set (`checked_in` is reached only by a check-in). */
const SETTABLE_STATUSES = valuesOf<NonNullable<Schemas['UpdateGuestRequest']['status']>>({
  pending: true,
  invited: true,
  confirmed: true,
  declined: true,
});

const GUEST_FIELDS = ['name', 'email', 'phone', 'document', 'birthDate', 'status'] as const;

/** One guest's details and status; an emptied optional field is cleared, the status sent only when changed. */
function GuestForm(props: { session: Session; guest: Guest; onDone: (changed: boolean) => void }) {
  const { session, guest } = props;
  const save = useAction();
  // Opened from the list: typing goes to the guest's name at once.
  useEffect(() => document.getElementById('guest-name')?.focus(), [guest.id]);
  const submit = (e: Event) => {
    e.preventDefault();
    const v = formFields(e, GUEST_FIELDS);
    const status = SETTABLE_STATUSES.find((st) => st === v.status && st !== guest.status);
    const body: Schemas['UpdateGuestRequest'] = {
      name: v.name,
      email: v.email || null,
      phone: v.phone || null,
      document: v.document || null,
      birthDate: v.birthDate || null,
      ...(status ? { status } : {}),
    };
    void save.run(async () => {
      ok(
        await session.api.PATCH('/v1/events/{id}/guests/{guestId}', {
          params: { path: { id: guest.eventId, guestId: guest.id } },
          body,
        }),
      );
      props.onDone(true);
    });
  };
  return (
    <article id="guest-form">
      <h3>
        {t('edit')}: {guest.name}
      </h3>
      <form onSubmit={submit}>
        <div class="grid-2">
          <Field label={t('name')}>
            <input name="name" id="guest-name" required defaultValue={guest.name} />
          </Field>
          <Field label={t('email')}>
            <input type="email" name="email" id="guest-email" defaultValue={guest.email ?? ''} />
          </Field>
          <Field label={t('phone')}>
            <input name="phone" id="guest-phone" defaultValue={guest.phone ?? ''} />
          </Field>
          <Field label={t('document')}>
            <input name="document" id="guest-document" defaultValue={guest.document ?? ''} />
          </Field>
          <Field label={t('birthDate')}>
            <input type="date" name="birthDate" id="guest-birthDate" defaultValue={guest.birthDate ?? ''} />
          </Field>
          <Field label={t('status')} help={guest.status === 'checked_in' ? t('guestCheckedIn') : undefined}>
            <select name="status" id="guest-status" disabled={guest.status === 'checked_in'}>
              {guest.status === 'checked_in' ? (
                <option value="checked_in" selected>
                  {term('checked_in')}
                </option>
              ) : null}
              {SETTABLE_STATUSES.map((st) => (
                <option key={st} value={st} selected={st === guest.status}>
                  {term(st)}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <ErrorNote error={save.error} />
        <div class="row">
          <button type="submit" id="save-guest" aria-busy={save.busy}>
            {t('save')}
          </button>
          <button type="button" class="secondary" onClick={() => props.onDone(false)}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </article>
  );
}

const STATUS_ACTIONS: {
  to: EventT['status'];
  from: EventT['status'][];
  label: 'publish' | 'open' | 'closeEvent';
}[] = [
  { to: 'published', from: ['draft'], label: 'publish' },
  { to: 'open', from: ['draft', 'published', 'closed'], label: 'open' },
  { to: 'closed', from: ['open'], label: 'closeEvent' },
];

function Guests(props: { session: Session; event: EventT; onChanged: (e: EventT) => void }) {
  const { session, event } = props;
  const path = { params: { path: { id: event.id } } };
  const guests = useLoad(
    async () =>
      ok(
        await session.api.GET('/v1/events/{id}/guests', {
          params: { path: { id: event.id }, query: { limit: 200 } },
        }),
      ).items,
    [event.id],
  );
  const [report, setReport] = useState<Schemas['GuestImportResult'] | null>(null);
  const [mailed, setMailed] = useState<string | null>(null);
  const [editing, setEditing] = useState<Guest | null>(null);
  const [removing, setRemoving] = useState<Guest | null>(null);
  const [publishing, setPublishing] = useState(false);
  const action = useAction();

  const upload = (e: Event) => {
    e.preventDefault();
    const file = new FormData(e.currentTarget as HTMLFormElement).get('file') as File;
    void action.run(async () => {
      setReport(
        ok(
          await session.api.POST('/v1/events/{id}/guests/import', {
            ...path,
            // The schema types the file part as a string (OpenAPI's binary format); the browser sends the file.
            body: { file: file.name },
            bodySerializer: () => {
              const form = new FormData();
              form.append('file', file);
              return form;
            },
          }),
        ),
      );
      guests.reload();
    });
  };
  const mail = (kind: 'invite' | 'reinvite') =>
    action.run(async () => {
      const r = ok(
        await session.api.POST(
          kind === 'invite' ? '/v1/events/{id}/guests/invite' : '/v1/events/{id}/guests/reinvite',
          {
            ...path,
            body: {},
          },
        ),
      );
      setMailed(t('inviteResult', { sent: r.sent, skipped: r.skipped, failed: r.failed }));
      guests.reload();
    });
  // A draft's links answer "not valid": it is published first, then the same invitations go out.
  const publishAndInvite = () =>
    action.run(async () => {
      setPublishing(false);
      props.onChanged(
        ok(await session.api.PATCH('/v1/events/{id}/status', { ...path, body: { status: 'published' } })),
      );
      const r = ok(await session.api.POST('/v1/events/{id}/guests/invite', { ...path, body: {} }));
      setMailed(t('inviteResult', { sent: r.sent, skipped: r.skipped, failed: r.failed }));
      guests.reload();
    });
  const remove = (g: Guest) =>
    action.run(async () => {
      setRemoving(null);
      ok(
        await session.api.DELETE('/v1/events/{id}/guests/{guestId}', {
          params: { path: { id: event.id, guestId: g.id } },
        }),
      );
      guests.reload();
    });

  const list = guests.data ?? [];
  // Each status counted by the API (its `total`), whatever the length of the list.
  const counts = useLoad(
    async () =>
      Object.fromEntries(
        await Promise.all(
          GUEST_STATUSES.map(async (status) => {
            const page = ok(
              await session.api.GET('/v1/events/{id}/guests', {
                params: { path: { id: event.id }, query: { status, limit: 1 } },
              }),
            );
            return [status, page.total] as const;
          }),
        ),
      ) as Record<Guest['status'], number>,
    [event.id, guests.data],
  );
  const byStatus = (s: Guest['status']) => counts.data?.[s] ?? '…';
  return (
    <section>
      <h2>{t('guests')}</h2>
      <article>
        <h3>{t('attendance')}</h3>
        <p id="attendance">
          {GUEST_STATUSES.map((s) => (
            <span key={s}>
              <Badge tone={s === 'checked_in' ? 'ok' : undefined}>
                {term(s)}: {byStatus(s)}
              </Badge>{' '}
            </span>
          ))}
          {event.capacity ? (
            <span class="muted">
              {' '}
              / {t('capacityShort')}: {event.capacity}
            </span>
          ) : null}
        </p>
      </article>
      <form class="row" onSubmit={upload}>
        <Field label={t('importGuests')} help={t('importGuestsHelp')}>
          <input type="file" name="file" id="guests-file" accept=".csv,.xlsx,text/csv" required />
        </Field>
        <button type="submit" id="upload-guests" aria-busy={action.busy}>
          {t('upload')}
        </button>
      </form>
      {report ? (
        <article id="guest-import-report">
          <h3>{t('importReport')}</h3>
          <p>
            {t('created')}: {report.created} · {t('duplicate')}: {report.duplicates} · {t('failed')}:{' '}
            {report.failed}
          </p>
          <table>
            <thead>
              <tr>
                <th>{t('row')}</th>
                <th>{t('status')}</th>
                <th>{t('details')}</th>
              </tr>
            </thead>
            <tbody>
              {report.results.map((r) => (
                <tr key={r.row}>
                  <td>{r.row}</td>
                  <td>
                    <Badge tone={r.status === 'created' ? 'ok' : r.status === 'failed' ? 'bad' : 'warn'}>
                      {term(r.status)}
                    </Badge>
                  </td>
                  <td>
                    {r.duplicateOf ? `${t('duplicate')}: ${r.duplicateOf}` : ''}
                    {(r.errors ?? []).map(rowProblem).join('; ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </article>
      ) : null}
      {event.status === 'draft' ? (
        <div class="row">
          <p class="notice" id="draft-invite-note">
            {t('draftInviteNote')}
          </p>
          <button type="button" class="secondary" id="publish-invite" onClick={() => setPublishing(true)}>
            {t('publishAndInvite')}
          </button>
        </div>
      ) : (
        <div class="row">
          <button type="button" class="secondary" id="invite" onClick={() => void mail('invite')}>
            {t('invite')}
          </button>
          <button type="button" class="secondary outline" onClick={() => void mail('reinvite')}>
            {t('reinvite')}
          </button>
        </div>
      )}
      {publishing ? (
        <ConfirmDialog
          title={t('publishInviteTitle', { name: event.name })}
          text={t('publishInviteText')}
          confirmLabel={t('publishAndInvite')}
          fallbackFocus="#invite"
          onConfirm={() => void publishAndInvite()}
          onCancel={() => setPublishing(false)}
        />
      ) : null}
      <Notice message={mailed} />
      <ErrorNote error={action.error ?? guests.error} />
      {editing ? (
        <GuestForm
          key={editing.id}
          session={session}
          guest={editing}
          onDone={(changed) => {
            setEditing(null);
            if (changed) guests.reload();
          }}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`${t('removeGuest')}: ${removing.name}`}
          text={t('removeGuestConfirm')}
          confirmLabel={t('removeGuest')}
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(null)}
        />
      ) : null}
      <Table id="guests" head={[t('name'), t('email'), t('status'), t('when'), t('actions')]}>
        {list.map((g) => (
          <tr key={g.id}>
            <td>{g.name}</td>
            <td>{g.email ?? '—'}</td>
            <td>
              <Badge tone={g.status === 'checked_in' ? 'ok' : undefined}>{term(g.status)}</Badge>
            </td>
            <td>{when(g.checkedInAt ?? g.confirmedAt ?? g.invitedAt)}</td>
            <td>
              <button type="button" class="outline" onClick={() => setEditing(g)}>
                {t('edit')}
              </button>
              <button type="button" class="outline contrast" onClick={() => setRemoving(g)}>
                {t('removeGuest')}
              </button>
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function EventDetail(props: {
  session: Session;
  event: EventT;
  onBack: () => void;
  onChanged: (e: EventT) => void;
}) {
  const { session, event } = props;
  const [configuring, setConfiguring] = useState(false);
  const [closing, setClosing] = useState(false);
  const action = useAction();
  const move = (status: EventT['status']) =>
    action.run(async () => {
      setClosing(false);
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
        {t('status')}: <Badge tone={event.status === 'open' ? 'ok' : undefined}>{term(event.status)}</Badge> ·{' '}
        {event.checkinMethods.map(term).join(', ')} ·{' '}
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
            // Closing stops every door at once: asked first.
            onClick={() => (a.to === 'closed' ? setClosing(true) : void move(a.to))}
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
      {closing ? (
        <ConfirmDialog
          title={t('closeEventTitle', { name: event.name })}
          text={t('closeEventText')}
          confirmLabel={t('closeEventConfirm')}
          fallbackFocus="#status-open"
          onConfirm={() => void move('closed')}
          onCancel={() => setClosing(false)}
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
              <Badge tone={e.status === 'open' ? 'ok' : undefined}>{term(e.status)}</Badge>
            </td>
            <td>{whenIn(e.startsAt, e.timeZone)}</td>
            <td>{e.checkinMethods.map(term).join(', ')}</td>
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
