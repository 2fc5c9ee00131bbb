// Persons, newest first, read page by page with their total: search as you type (accents and capitals
// ignored), create or edit (enrolling the face from three guided webcam photos by default, or one to
// three files, each photo's quality shown first), import a CSV or XLSX file; per row Edit, and in its menu the
// enrollment link, the identity's QR code, anonymise or delete after a confirmation that says what is erased.
import type { Person } from '@portico/contract';
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { t, when } from '../i18n.js';
import { enrollmentRefusal, PhotoPicker } from '../photo.js';
import type { Session } from '../session.js';
import { useAction, usePages, useUrlFilters } from '../hooks.js';
import { rowProblem } from '../format.js';
import { Badge, ErrorNote, Notice } from '../components/feedback.js';
import { PagesFooter, Table } from '../components/table.js';
import { Field, formFields } from '../components/form.js';
import { ConfirmDialog, Modal } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';

type Editing = { mode: 'new' } | { mode: 'edit'; person: Person } | null;

const FIELDS = ['name', 'document', 'externalId', 'email', 'phone', 'birthDate'] as const;

function PersonForm(props: {
  session: Session;
  editing: Exclude<Editing, null>;
  /** After saving, with the saved name; without one on cancel. */
  onDone: (saved?: string) => void;
}) {
  const { session, editing } = props;
  const person = editing.mode === 'edit' ? editing.person : null;
  /** The photos to enroll; null while the webcam is still taking them (saving waits). */
  const [taken, setTaken] = useState<string[] | null>([]);
  const photos = taken ?? [];
  const [refused, setRefused] = useState<number[]>([]);
  const save = useAction();

  /** An enrollment call: a refusal of its photos becomes a sentence naming them, and marks them. */
  const enroll = async (call: () => Promise<unknown>) => {
    setRefused([]);
    try {
      await call();
    } catch (err) {
      const refusal = enrollmentRefusal(err, photos.length);
      if (!refusal) throw err;
      setRefused(refusal.photos);
      throw new Error(refusal.message);
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const entered = formFields(e, FIELDS);
    const value = (k: (typeof FIELDS)[number]) => entered[k];
    void save.run(async () => {
      if (person) {
        // Name and document are required; an emptied optional field is cleared (null).
        const optional = (k: (typeof FIELDS)[number]) => value(k) || null;
        const body: Schemas['UpdatePersonRequest'] = {
          name: value('name'),
          document: value('document'),
          externalId: optional('externalId'),
          email: optional('email'),
          phone: optional('phone'),
          birthDate: optional('birthDate'),
        };
        ok(await session.api.PATCH('/v1/persons/{id}', { params: { path: { id: person.id } }, body }));
        // Photos taken here enroll (or re-enroll) this person's face.
        if (photos.length)
          await enroll(async () =>
            ok(
              await session.api.POST('/v1/public/onboarding/enroll', {
                body: { personId: person.id, frames: photos },
              }),
            ),
          );
      } else {
        const fields = Object.fromEntries(
          FIELDS.flatMap((k) => (value(k) ? [[k, value(k)]] : [])),
        ) as Schemas['CreatePersonRequest'];
        if (photos.length)
          await enroll(async () =>
            ok(await session.api.POST('/v1/onboarding', { body: { ...fields, frames: photos } })),
          );
        else ok(await session.api.POST('/v1/persons', { body: fields }));
      }
      props.onDone(value('name'));
    });
  };
  const common = (k: (typeof FIELDS)[number]) => ({
    name: k,
    id: `person-${k}`,
    defaultValue: person?.[k] ?? '',
  });
  return (
    <article>
      <h2>{person ? `${t('edit')}: ${person.name}` : t('newPerson')}</h2>
      <form onSubmit={submit}>
        <div class="grid-2">
          <Field label={t('name')}>
            <input {...common('name')} required />
          </Field>
          <Field label={t('document')}>
            <input {...common('document')} required />
          </Field>
          <Field label={t('email')}>
            <input {...common('email')} type="email" />
          </Field>
          <Field label={t('phone')}>
            <input {...common('phone')} type="tel" />
          </Field>
          <Field label={t('birthDate')}>
            <input {...common('birthDate')} type="date" />
          </Field>
          <Field label={t('externalId')}>
            <input {...common('externalId')} />
          </Field>
        </div>
        <PhotoPicker
          session={session}
          onPhotos={(list) => {
            setTaken(list);
            setRefused([]);
          }}
          refused={refused}
        />
        <ErrorNote error={save.error} />
        <div class="row">
          <button type="submit" id="save-person" aria-busy={save.busy} disabled={taken === null}>
            {photos.length > 1
              ? t('saveAndEnrollN', { count: photos.length })
              : photos.length
                ? t('saveAndEnroll')
                : t('save')}
          </button>
          <button type="button" class="secondary" onClick={() => props.onDone()}>
            {t('cancel')}
          </button>
          {taken === null ? (
            <small class="muted" id="photos-pending">
              {t('photosPending')}
            </small>
          ) : null}
        </div>
      </form>
    </article>
  );
}

function ImportPersons(props: { session: Session; onDone: () => void }) {
  const [report, setReport] = useState<Schemas['ImportPersonsResult'] | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    const file = (new FormData(e.currentTarget as HTMLFormElement).get('file') as File | null) ?? null;
    if (!file) return;
    void action.run(async () => {
      // The server reads the spreadsheet (the same reader as the guest import).
      setReport(
        ok(
          await props.session.api.POST('/v1/persons/import', {
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
      props.onDone();
    });
  };
  return (
    <article>
      <h2>{t('importCsv')}</h2>
      <form class="row" onSubmit={submit}>
        <Field label={t('csvFile')} help={t('importHelp')}>
          <input
            type="file"
            name="file"
            id="persons-csv"
            accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            required
          />
        </Field>
        <button type="submit" aria-busy={action.busy}>
          {t('upload')}
        </button>
      </form>
      <ErrorNote error={action.error} />
      {report ? (
        <>
          <h3>{t('importReport')}</h3>
          <p>
            {t('created')}: {report.created} · {t('updated')}: {report.updated} · {t('failed')}:{' '}
            {report.failed}
          </p>
          <table>
            <tbody>
              {report.results
                .filter((r) => r.status === 'failed')
                .map((r) => (
                  <tr key={r.index}>
                    <td>
                      {t('row')} {r.row ?? r.index + 2}
                    </td>
                    <td>{(r.errors ?? []).map(rowProblem).join('; ')}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </>
      ) : null}
    </article>
  );
}

/**
 * A person's row actions: Edit, and the rest (enrollment link, QR code, anonymise, delete) in a menu
 * that opens in place, so a row holds two buttons on a laptop and on a phone alike.
 */
function PersonActions(props: {
  session: Session;
  person: Person;
  onEdit: () => void;
  onChanged: () => void;
}) {
  const { session, person } = props;
  const [confirm, setConfirm] = useState<'anonymise' | 'delete' | null>(null);
  const [qr, setQr] = useState<Schemas['QrToken'] | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  const id = { params: { path: { id: person.id } } };
  const qrTitle = `qr-title-${person.id}`;

  const sendLink = () =>
    action.run(async () => {
      const sent = ok(await session.api.POST('/v1/persons/{id}/send-enrollment-link', id));
      setNotice(`${t('linkSent')} ${when(sent.expiresAt)}`);
    });
  const showQr = () =>
    action.run(async () => {
      setQr(
        ok(
          await session.api.GET('/v1/checkin/identities/{identityId}/qr-token', {
            params: { path: { identityId: person.identityId! } },
          }),
        ),
      );
    });
  const erase = (kind: 'anonymise' | 'delete') =>
    action.run(async () => {
      setConfirm(null);
      if (kind === 'anonymise') ok(await session.api.DELETE('/v1/persons/{id}/data', id));
      else ok(await session.api.DELETE('/v1/persons/{id}', id));
      props.onChanged();
    });

  if (person.anonymised) return <Badge>{t('anonymised')}</Badge>;
  return (
    <div class="row-actions">
      <button type="button" class="outline" onClick={props.onEdit}>
        {t('edit')}
      </button>
      <details class="row-menu">
        <summary
          role="button"
          class="outline secondary"
          aria-label={t('moreActionsFor', { name: person.name })}
        >
          {t('moreActions')}
        </summary>
        <ul>
          {person.email && !person.enrolled ? (
            <li>
              <button type="button" class="outline" onClick={() => void sendLink()}>
                {t('sendLink')}
              </button>
            </li>
          ) : null}
          {person.identityId ? (
            <li>
              <button type="button" class="outline" onClick={() => void showQr()}>
                {t('qrCode')}
              </button>
            </li>
          ) : null}
          <li>
            <button type="button" class="outline secondary" onClick={() => setConfirm('anonymise')}>
              {t('anonymise')}
            </button>
          </li>
          <li>
            <button type="button" class="outline contrast" onClick={() => setConfirm('delete')}>
              {t('delete')}
            </button>
          </li>
        </ul>
      </details>
      <Notice message={notice} />
      <ErrorNote error={action.error} />
      {qr ? (
        <Modal labelledBy={qrTitle} onClose={() => setQr(null)}>
          <article>
            <h2 id={qrTitle}>
              {t('qrCode')}: {person.name}
            </h2>
            <img class="qr" src={qr.qrCode} alt={`${t('qrCode')}: ${person.name}`} />
            <p class="muted">
              {t('qrHelp')} {when(qr.expiresAt)}
            </p>
            <footer>
              <button type="button" class="secondary" onClick={() => setQr(null)}>
                {t('close')}
              </button>
            </footer>
          </article>
        </Modal>
      ) : null}
      {confirm ? (
        <ConfirmDialog
          title={`${confirm === 'anonymise' ? t('anonymise') : t('delete')}: ${person.name}`}
          text={confirm === 'anonymise' ? t('anonymiseConfirm') : t('deleteConfirm')}
          onConfirm={() => void erase(confirm)}
          onCancel={() => setConfirm(null)}
          fallbackFocus="#person-search"
        />
      ) : null}
    </div>
  );
}

const PAGE = 50;
const FILTERS = ['q', 'enrolled'] as const;

/** How long typing must pause before the list is asked again. */
const TYPING_MS = 250;

export function Persons({ session }: { session: Session }) {
  const [filters, setFilters] = useUrlFilters(FILTERS);
  const { q } = filters;
  const enrolled = filters.enrolled as '' | 'true' | 'false';
  const [typed, setTyped] = useState(q);
  const [tick, setTick] = useState(0);
  const [saved, setSaved] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing>(null);
  const [importing, setImporting] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setFilters({ q: typed.trim() }), TYPING_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  // Newest first (the API's order), so a person just saved is on top of the first page.
  const pages = usePages<Person>(
    async (cursor) =>
      ok(
        await session.api.GET('/v1/persons', {
          params: {
            query: {
              limit: PAGE,
              ...(q ? { q } : {}),
              ...(enrolled ? { enrolled } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [q, enrolled, tick],
  );
  const reload = () => setTick((n) => n + 1);
  return (
    <>
      <PageHeader title={t('navPersons')}>
        <button type="button" id="new-person" onClick={() => setEditing({ mode: 'new' })}>
          {t('newPerson')}
        </button>{' '}
        <button type="button" class="secondary" id="import-persons" onClick={() => setImporting(!importing)}>
          {t('importCsv')}
        </button>
      </PageHeader>
      {editing ? (
        <PersonForm
          key={editing.mode === 'edit' ? editing.person.id : 'new'}
          session={session}
          editing={editing}
          onDone={(name) => {
            // A new person is shown on top: the search and filter that could hide them are cleared.
            if (editing.mode === 'new' && name) {
              setTyped('');
              setFilters({ q: '', enrolled: '' });
            }
            setSaved(name ?? null);
            setEditing(null);
            reload();
          }}
        />
      ) : null}
      {importing ? <ImportPersons session={session} onDone={reload} /> : null}
      <form class="row persons-filters" aria-label={t('search')} onSubmit={(e) => e.preventDefault()}>
        <Field label={t('search')}>
          <input
            type="search"
            name="q"
            id="person-search"
            placeholder={t('searchPersonsHelp')}
            autocomplete="off"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </Field>
        <Field label={t('enrolled')}>
          <select
            id="person-enrolled"
            value={enrolled}
            onChange={(e) => setFilters({ enrolled: e.currentTarget.value })}
          >
            <option value="">{t('all')}</option>
            <option value="true">{t('yes')}</option>
            <option value="false">{t('no')}</option>
          </select>
        </Field>
      </form>
      <Notice message={saved ? t('personSaved', { name: saved }) : null} />
      <p id="persons-total" class="muted" aria-live="polite">
        {pages.total === null
          ? '\u00a0'
          : t('personsShown', { shown: pages.items.length, total: pages.total })}
      </p>
      <ErrorNote error={pages.error} />
      <Table id="persons" stacked head={[t('name'), t('document'), t('email'), t('enrolled'), t('actions')]}>
        {pages.items.map((p) => (
          <tr key={p.id} data-person={p.id}>
            <td data-label={t('name')}>{p.name}</td>
            <td data-label={t('document')}>{p.document}</td>
            <td data-label={t('email')}>{p.email ?? '—'}</td>
            <td data-label={t('enrolled')}>
              {p.enrolled ? <Badge tone="ok">{t('yes')}</Badge> : <Badge>{t('no')}</Badge>}
            </td>
            <td class="row-actions-cell" data-label={t('actions')}>
              <PersonActions
                session={session}
                person={p}
                onEdit={() => setEditing({ mode: 'edit', person: p })}
                onChanged={reload}
              />
            </td>
          </tr>
        ))}
      </Table>
      <PagesFooter pages={pages} />
    </>
  );
}
