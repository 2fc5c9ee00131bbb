// An event's guests: import with the per-row report, edit or remove one guest, mail invitations (a
// draft is published first, never mailed dead links), status changes.
import type { Event as EventT, Guest } from '@portico/contract';
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { rowProblem, valuesOf } from '../format.js';
import { Badge, ErrorNote, Notice } from './feedback.js';
import { Table } from './table.js';
import { Field, formFields } from './form.js';
import { ConfirmDialog } from './dialogs.js';

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
                  {term('guestStatus', 'checked_in')}
                </option>
              ) : null}
              {SETTABLE_STATUSES.map((st) => (
                <option key={st} value={st} selected={st === guest.status}>
                  {term('guestStatus', st)}
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

export function Guests(props: { session: Session; event: EventT; onChanged: (e: EventT) => void }) {
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
                {term('guestStatus', s)}: {byStatus(s)}
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
                      {term('guestImportRow', r.status)}
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
              <Badge tone={g.status === 'checked_in' ? 'ok' : undefined}>
                {term('guestStatus', g.status)}
              </Badge>
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
