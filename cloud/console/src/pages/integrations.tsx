// Integrations: applications with their scopes and API keys (a new or rotated key is shown once, with a
// copy button; a key rotated or revoked after a confirmation), the webhook URL with a test event, the
// delivery log (components/delivery-log.tsx), and the MQTT topics the service publishes on.
import { ok, type Schemas } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { valuesOf } from '../format.js';
import { Badge, ErrorNote, Notice } from '../components/feedback.js';
import { Table } from '../components/table.js';
import { Field } from '../components/form.js';
import { ConfirmDialog } from '../components/dialogs.js';
import { PageHeader } from '../components/page-header.js';
import { DeliveryLog } from '../components/delivery-log.js';

type Scope = Schemas['ApiScope'];
const SCOPES = valuesOf<Scope>({
  'persons:read': true,
  'persons:write': true,
  checkin: true,
  'tenant:read': true,
  'tenant:write': true,
  'events:read': true,
  'events:write': true,
  'bus:subscribe': true,
});

/** A key just issued: its clear text, and whether it replaced a key (which stopped working at once). */
interface NewSecret {
  key: string;
  rotated: boolean;
}

/** A secret shown once: copy it now, then it is gone from the page. */
function OnceSecret({ secret, onDismiss }: { secret: NewSecret; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret.key).catch(() => undefined);
    setCopied(true);
  };
  return (
    <article id="new-key">
      <p class="notice">
        {t('keyOnce')}
        {secret.rotated ? ` ${t('rotatedOld')}` : ''}
      </p>
      <p class="secret" id="new-key-value">
        {secret.key}
      </p>
      <div class="row">
        <button type="button" id="copy-key" onClick={() => void copy()}>
          {copied ? t('copied') : t('copy')}
        </button>
        <button type="button" class="secondary" id="dismiss-key" onClick={onDismiss}>
          {t('dismiss')}
        </button>
      </div>
    </article>
  );
}

/** A key's scopes: "every scope" for a key that holds them all. */
function ScopeList({ scopes }: { scopes: Scope[] }) {
  if (SCOPES.every((sc) => scopes.includes(sc))) return <small class="muted">{t('allScopes')}</small>;
  return (
    <small>
      <code>{scopes.join(', ')}</code>
    </small>
  );
}

function ApplicationKeys({
  session,
  app,
  onSecret,
}: {
  session: Session;
  app: Schemas['Application'];
  onSecret: (k: NewSecret) => void;
}) {
  const path = { params: { path: { id: app.id } } };
  const keys = useLoad(
    async () => ok(await session.api.GET('/v1/applications/{id}/api-keys', path)).items,
    [app.id],
  );
  const [confirm, setConfirm] = useState<{ kind: 'rotate' | 'revoke'; key: Schemas['ApiKey'] } | null>(null);
  const action = useAction();
  const newKey = () =>
    action.run(async () => {
      onSecret({
        key: ok(await session.api.POST('/v1/applications/{id}/api-keys', { ...path, body: {} })).key,
        rotated: false,
      });
      keys.reload();
    });
  const change = (kind: 'rotate' | 'revoke', key: Schemas['ApiKey']) =>
    action.run(async () => {
      setConfirm(null);
      const keyPath = { params: { path: { id: app.id, keyId: key.id } } };
      if (kind === 'rotate')
        onSecret({
          key: ok(await session.api.POST('/v1/applications/{id}/api-keys/{keyId}/rotate', keyPath)).key,
          rotated: true,
        });
      else ok(await session.api.DELETE('/v1/applications/{id}/api-keys/{keyId}', keyPath));
      keys.reload();
    });
  const label = (k: Schemas['ApiKey']) => `${k.prefix}…${k.lastFour}`;
  return (
    <>
      <ul class="keys">
        {(keys.data ?? []).map((k) => (
          <li key={k.id}>
            <code>{label(k)}</code>{' '}
            <Badge tone={k.status === 'active' ? 'ok' : undefined}>{term('apiKeyStatus', k.status)}</Badge>{' '}
            <ScopeList scopes={k.scopes} />
            <br />
            <small class="muted">
              {t('keyCreated')} {when(k.createdAt)} · {t('keyLastUsed')} {when(k.lastUsedAt)}
              {k.revokedAt ? ` · ${t('keyStopped')} ${when(k.revokedAt)}` : ''}
            </small>
            {k.status === 'active' ? (
              <div>
                <button type="button" class="outline" onClick={() => setConfirm({ kind: 'rotate', key: k })}>
                  {t('rotate')}
                </button>
                <button
                  type="button"
                  class="outline contrast"
                  onClick={() => setConfirm({ kind: 'revoke', key: k })}
                >
                  {t('revoke')}
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      <button type="button" class="outline" onClick={() => void newKey()}>
        {t('newKey')}
      </button>
      <ErrorNote error={action.error ?? keys.error} />
      {confirm ? (
        <ConfirmDialog
          title={`${confirm.kind === 'rotate' ? t('rotate') : t('revoke')}: ${label(confirm.key)}`}
          text={confirm.kind === 'rotate' ? t('rotateConfirm') : t('revokeConfirm')}
          confirmLabel={confirm.kind === 'rotate' ? t('rotate') : t('revoke')}
          onConfirm={() => void change(confirm.kind, confirm.key)}
          onCancel={() => setConfirm(null)}
        />
      ) : null}
    </>
  );
}

function Applications({ session }: { session: Session }) {
  const apps = useLoad(async () => ok(await session.api.GET('/v1/applications')).items, []);
  const [secret, setSecret] = useState<NewSecret | null>(null);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const formEl = e.currentTarget as HTMLFormElement;
    // No scope ticked: a key with every scope (the API's default).
    const scopes = SCOPES.filter((sc) => form.getAll('scopes').includes(sc));
    void action.run(async () => {
      const created = ok(
        await session.api.POST('/v1/applications', {
          body: {
            name: String(form.get('name')),
            environment: form.get('environment') === 'sandbox' ? 'sandbox' : 'live',
            ...(scopes.length > 0 ? { scopes } : {}),
          },
        }),
      );
      setSecret({ key: created.apiKey.key, rotated: false });
      formEl.reset();
      apps.reload();
    });
  };
  return (
    <section>
      <h2>{t('applications')}</h2>
      {secret ? <OnceSecret secret={secret} onDismiss={() => setSecret(null)} /> : null}
      <form onSubmit={create} aria-label={t('newApplication')}>
        <div class="row">
          <Field label={t('newApplication')}>
            <input name="name" id="app-name" required />
          </Field>
          <Field label={t('environment')}>
            <select name="environment">
              <option value="live">live</option>
              <option value="sandbox">sandbox</option>
            </select>
          </Field>
          <button type="submit" id="create-app" aria-busy={action.busy}>
            {t('create')}
          </button>
        </div>
        <fieldset id="app-scopes" class="scopes">
          <legend>{t('scopes')}</legend>
          {SCOPES.map((sc) => (
            <label key={sc}>
              <input type="checkbox" name="scopes" value={sc} />
              <code>{sc}</code>
            </label>
          ))}
          <small class="muted">{t('scopesHelp')}</small>
        </fieldset>
      </form>
      <ErrorNote error={action.error ?? apps.error} />
      <Table id="applications" head={[t('name'), t('environment'), t('apiKeys')]}>
        {(apps.data ?? []).map((a) => (
          <tr key={a.id}>
            <td>{a.name}</td>
            <td>{a.environment}</td>
            <td>
              <ApplicationKeys session={session} app={a} onSecret={setSecret} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function Webhooks({ session }: { session: Session }) {
  const tenant = { params: { path: { id: session.me.tenant.id } } };
  const settings = useLoad(async () => ok(await session.api.GET('/v1/tenants/{id}/settings', tenant)), []);
  // Bumped when this page queues a delivery, so the log reads it at once rather than at its next poll.
  const [queued, setQueued] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();

  const save = (e: Event) => {
    e.preventDefault();
    const url = String(new FormData(e.currentTarget as HTMLFormElement).get('webhookUrl') ?? '').trim();
    void action.run(async () => {
      ok(
        await session.api.PATCH('/v1/tenants/{id}/settings', {
          ...tenant,
          body: { webhookUrl: url || null },
        }),
      );
      setNotice(t('saved'));
      settings.reload();
    });
  };
  const sendTest = () =>
    action.run(async () => {
      ok(await session.api.POST('/v1/admin/webhooks/test'));
      setNotice(t('testQueued'));
      setQueued((n) => n + 1);
    });

  return (
    <section>
      <h2>{t('webhooks')}</h2>
      {settings.data ? (
        <form class="row" onSubmit={save}>
          <Field label={t('webhookUrl')} help={t('webhookHelp')}>
            <input
              type="url"
              name="webhookUrl"
              id="webhook-url"
              defaultValue={settings.data.webhookUrl ?? ''}
            />
          </Field>
          <button type="submit" id="save-webhook">
            {t('save')}
          </button>
          <button type="button" class="secondary" id="send-test" onClick={() => void sendTest()}>
            {t('sendTest')}
          </button>
        </form>
      ) : null}
      <Notice message={notice} />
      <ErrorNote error={action.error ?? settings.error} />
      <DeliveryLog session={session} version={queued} />
    </section>
  );
}

function Topics({ session }: { session: Session }) {
  const bus = useLoad(async () => ok(await session.api.GET('/v1/admin/bus')), []);
  const b = bus.data;
  return (
    <section>
      <h2>{t('mqttTopics')}</h2>
      <ErrorNote error={bus.error} />
      {b ? (
        <>
          <p>
            {t('brokers')}:{' '}
            {b.brokers.map((x) => (
              <code key={x.url}>{x.url} </code>
            ))}{' '}
            · {b.protocol} · QoS {b.qos}
          </p>
          {b.wsUrl ? (
            <p>
              {t('brokerWebSocket')}: <code id="bus-ws-url">{b.wsUrl}</code>
            </p>
          ) : null}
          <Table id="topics" head={[t('event'), t('topic'), 'Webhook']}>
            {b.events.map((e) => (
              <tr key={e.event}>
                <td>
                  <code>{e.event}</code>
                </td>
                <td>
                  <code>{e.topic}</code>
                </td>
                <td>{e.webhook ? t('yes') : t('no')}</td>
              </tr>
            ))}
          </Table>
        </>
      ) : null}
    </section>
  );
}

export function Integrations({ session }: { session: Session }) {
  return (
    <>
      <PageHeader title={t('navIntegrations')} />
      <Applications session={session} />
      <Webhooks session={session} />
      <Topics session={session} />
    </>
  );
}
