// Persons: search, create or edit (enrolling the face from three guided webcam photos by default, or one
// to three files, each photo's quality shown first), import a CSV file, send the enrollment link, show the identity's QR code, anonymise or
// delete after a confirmation that says what is erased.
import type { Person } from '@portico/contract';
import { ok, type Schemas } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { parseCsv } from '../csv.js';
import { t, when } from '../i18n.js';
import { enrollmentRefusal, PhotoPicker } from '../photo.js';
import type { Session } from '../session.js';
import {
  Badge,
  ConfirmDialog,
  ErrorNote,
  Field,
  formFields,
  PageHeader,
  rowProblem,
  Table,
  useAction,
  useLoad,
} from '../ui.js';

type Editing = { mode: 'new' } | { mode: 'edit'; person: Person } | null;

const FIELDS = ['name', 'document', 'externalId', 'email', 'phone', 'birthDate'] as const;

function PersonForm(props: { session: Session; editing: Exclude<Editing, null>; onDone: () => void }) {
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
      props.onDone();
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
          <button type="button" class="secondary" onClick={props.onDone}>
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
      const rows = parseCsv(await file.text());
      setReport(ok(await props.session.api.POST('/v1/persons/import', { body: { rows } })));
      props.onDone();
    });
  };
  return (
    <article>
      <h2>{t('importCsv')}</h2>
      <form class="row" onSubmit={submit}>
        <Field label={t('csvFile')} help={t('importHelp')}>
          <input type="file" name="file" id="persons-csv" accept=".csv,text/csv" required />
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
                      {t('row')} {r.index + 2}
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
    <>
      <button type="button" class="outline" onClick={props.onEdit}>
        {t('edit')}
      </button>
      {person.email && !person.enrolled ? (
        <button type="button" class="outline" onClick={() => void sendLink()}>
          {t('sendLink')}
        </button>
      ) : null}
      {person.identityId ? (
        <button type="button" class="outline" onClick={() => void showQr()}>
          {t('qrCode')}
        </button>
      ) : null}
      <button type="button" class="outline secondary" onClick={() => setConfirm('anonymise')}>
        {t('anonymise')}
      </button>
      <button type="button" class="outline contrast" onClick={() => setConfirm('delete')}>
        {t('delete')}
      </button>
      {notice ? <p class="notice">{notice}</p> : null}
      <ErrorNote error={action.error} />
      {qr ? (
        <div>
          <img class="qr" src={qr.qrCode} alt={`${t('qrCode')}: ${person.name}`} />
          <p class="muted">
            {t('qrHelp')} {when(qr.expiresAt)}
          </p>
          <button type="button" class="secondary" onClick={() => setQr(null)}>
            {t('close')}
          </button>
        </div>
      ) : null}
      {confirm ? (
        <ConfirmDialog
          title={`${confirm === 'anonymise' ? t('anonymise') : t('delete')}: ${person.name}`}
          text={confirm === 'anonymise' ? t('anonymiseConfirm') : t('deleteConfirm')}
          onConfirm={() => void erase(confirm)}
          onCancel={() => setConfirm(null)}
        />
      ) : null}
    </>
  );
}

export function Persons({ session }: { session: Session }) {
  const [q, setQ] = useState('');
  const [editing, setEditing] = useState<Editing>(null);
  const [importing, setImporting] = useState(false);
  const list = useLoad(
    async () =>
      ok(await session.api.GET('/v1/persons', { params: { query: { limit: 100, ...(q ? { q } : {}) } } }))
        .items,
    [q],
  );
  const search = (e: Event) => {
    e.preventDefault();
    setQ(formFields(e, ['q']).q);
  };
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
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      ) : null}
      {importing ? <ImportPersons session={session} onDone={list.reload} /> : null}
      <form class="row" role="search" onSubmit={search}>
        <Field label={t('search')}>
          <input type="search" name="q" id="person-search" />
        </Field>
        <button type="submit">{t('search')}</button>
      </form>
      <ErrorNote error={list.error} />
      <Table id="persons" head={[t('name'), t('document'), t('email'), t('enrolled'), t('actions')]}>
        {(list.data ?? []).map((p) => (
          <tr key={p.id}>
            <td>{p.name}</td>
            <td>{p.document}</td>
            <td>{p.email ?? '—'}</td>
            <td>{p.enrolled ? <Badge tone="ok">{t('yes')}</Badge> : <Badge>{t('no')}</Badge>}</td>
            <td>
              <PersonActions
                session={session}
                person={p}
                onEdit={() => setEditing({ mode: 'edit', person: p })}
                onChanged={list.reload}
              />
            </td>
          </tr>
        ))}
      </Table>
      {list.data?.length === 0 ? <p class="muted">{t('none')}</p> : null}
    </>
  );
}
