// Integrations: applications and their API keys (a new key is shown once, with a copy button), the
// webhook URL with a test event, the delivery log with each attempt and a redeliver action, and the
// MQTT topics the service publishes on.
import { ok, type Schemas } from '@portico/sdk';
import { useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { Badge, ErrorNote, Field, PageHeader, useAction, useLoad } from '../ui.js';

/** A secret shown once: copy it now, then it is gone from the page. */
function OnceSecret({ secret, onDismiss }: { secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(secret).catch(() => undefined);
    setCopied(true);
  };
  return (
    <article id="new-key">
      <p class="notice">{t('keyOnce')}</p>
      <p class="secret" id="new-key-value">
        {secret}
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

function ApplicationKeys({
  session,
  app,
  onSecret,
}: {
  session: Session;
  app: Schemas['Application'];
  onSecret: (k: string) => void;
}) {
  const path = { params: { path: { id: app.id } } };
  const keys = useLoad(
    async () => ok(await session.api.GET('/v1/applications/{id}/api-keys', path)).items,
    [app.id],
  );
  const action = useAction();
  const newKey = () =>
    action.run(async () => {
      onSecret(ok(await session.api.POST('/v1/applications/{id}/api-keys', { ...path, body: {} })).key);
      keys.reload();
    });
  return (
    <>
      <ul class="keys">
        {(keys.data ?? []).map((k) => (
          <li key={k.id}>
            <code>
              {k.prefix}…{k.lastFour}
            </code>{' '}
            <Badge tone={k.status === 'active' ? 'ok' : undefined}>{term(k.status)}</Badge>{' '}
            <span class="muted">{when(k.lastUsedAt)}</span>
          </li>
        ))}
      </ul>
      <button type="button" class="outline" onClick={() => void newKey()}>
        {t('newKey')}
      </button>
      <ErrorNote error={action.error ?? keys.error} />
    </>
  );
}

function Applications({ session }: { session: Session }) {
  const apps = useLoad(async () => ok(await session.api.GET('/v1/applications')).items, []);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const formEl = e.currentTarget as HTMLFormElement;
    void action.run(async () => {
      const created = ok(
        await session.api.POST('/v1/applications', {
          body: {
            name: String(form.get('name')),
            environment: form.get('environment') === 'sandbox' ? 'sandbox' : 'live',
          },
        }),
      );
      setSecret(created.apiKey.key);
      formEl.reset();
      apps.reload();
    });
  };
  return (
    <section>
      <h2>{t('applications')}</h2>
      {secret ? <OnceSecret secret={secret} onDismiss={() => setSecret(null)} /> : null}
      <form class="row" onSubmit={create} aria-label={t('newApplication')}>
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
      </form>
      <ErrorNote error={action.error ?? apps.error} />
      <div class="table-wrap">
        <table id="applications">
          <thead>
            <tr>
              <th>{t('name')}</th>
              <th>{t('environment')}</th>
              <th>{t('apiKeys')}</th>
            </tr>
          </thead>
          <tbody>
            {(apps.data ?? []).map((a) => (
              <tr key={a.id}>
                <td>{a.name}</td>
                <td>{a.environment}</td>
                <td>
                  <ApplicationKeys session={session} app={a} onSecret={setSecret} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Webhooks({ session }: { session: Session }) {
  const tenant = { params: { path: { id: session.me.tenant.id } } };
  const settings = useLoad(async () => ok(await session.api.GET('/v1/tenants/{id}/settings', tenant)), []);
  const deliveries = useLoad(
    async () =>
      ok(await session.api.GET('/v1/admin/webhook-deliveries', { params: { query: { limit: 50 } } })),
    [],
  );
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
      deliveries.reload();
    });
  const redeliver = (id: string) =>
    action.run(async () => {
      ok(await session.api.POST('/v1/admin/webhook-deliveries/{id}/redeliver', { params: { path: { id } } }));
      deliveries.reload();
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
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorNote error={action.error ?? settings.error} />
      <header class="page">
        <h3>{t('deliveries')}</h3>
        <button type="button" class="outline" id="refresh-deliveries" onClick={deliveries.reload}>
          {t('refresh')}
        </button>
      </header>
      <ErrorNote error={deliveries.error} />
      <div class="table-wrap">
        <table id="deliveries">
          <thead>
            <tr>
              <th>{t('when')}</th>
              <th>{t('event')}</th>
              <th>{t('status')}</th>
              <th>{t('attempts')}</th>
              <th>{t('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {(deliveries.data?.items ?? []).map((d) => (
              <tr key={d.id}>
                <td>{when(d.createdAt)}</td>
                <td>
                  <code>{d.event}</code>
                  <br />
                  <small class="muted">{d.url}</small>
                </td>
                <td>
                  <Badge tone={d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : undefined}>
                    {term(d.status)}
                  </Badge>
                </td>
                <td>
                  <ol>
                    {d.attempts.map((a) => (
                      <li key={a.attempt}>
                        {when(a.at)} · {a.statusCode ?? '—'} · {a.durationMs} ms
                        {a.error ? ` · ${a.error}` : ''}
                      </li>
                    ))}
                  </ol>
                </td>
                <td>
                  <button type="button" class="outline" onClick={() => void redeliver(d.id)}>
                    {t('redeliver')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {deliveries.data?.items.length === 0 ? <p class="muted">{t('none')}</p> : null}
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
          <div class="table-wrap">
            <table id="topics">
              <thead>
                <tr>
                  <th>{t('event')}</th>
                  <th>{t('topic')}</th>
                  <th>Webhook</th>
                </tr>
              </thead>
              <tbody>
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
              </tbody>
            </table>
          </div>
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
