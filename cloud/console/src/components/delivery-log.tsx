// The webhook delivery log: read again every few seconds while the page is in view, so a new delivery
// and each attempt show up by themselves; a delivery opens in a dialog with the exact body sent, every
// attempt (status or error, duration, the start of the answer) and the next retry, with "retry now"
// while it waits for one and "redeliver" always.
import { ok, type Schemas } from '@portico/sdk';
import { useEffect, useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { Session } from '../session.js';
import { useAction, useLoad } from '../hooks.js';
import { Badge, ErrorNote } from './feedback.js';
import { Table } from './table.js';
import { Modal } from './dialogs.js';

type Delivery = Schemas['AdminWebhookDelivery'];

/** How often the log is read again while the page is visible. */
export const DELIVERIES_POLL_MS = 3_000;

/** Calls `tick` every `everyMs` while the document is visible, and once as soon as it becomes visible. */
function useWhileVisible(tick: () => void, everyMs: number) {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') tick();
    }, everyMs);
    const onVisible = () => document.visibilityState === 'visible' && tick();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [everyMs]);
}

const tone = (status: Delivery['status']) =>
  status === 'delivered' ? 'ok' : status === 'failed' ? 'bad' : status === 'cancelled' ? undefined : 'warn';

/** An attempt's outcome in a few words: the HTTP status, or why no answer came. */
function outcomeOf(a: Delivery['attempts'][number]): string {
  return a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? '—');
}

function DeliveryDialog(props: {
  session: Session;
  id: string;
  version: number;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { session, id } = props;
  const path = { params: { path: { id } } };
  // Read again with the log, so attempts made while the dialog is open show up in it.
  const delivery = useLoad(
    async () => ok(await session.api.GET('/v1/admin/webhook-deliveries/{id}', path)),
    [id, props.version],
  );
  const action = useAction();
  const retry = () =>
    action.run(async () => {
      ok(await session.api.POST('/v1/admin/webhook-deliveries/{id}/retry', path));
      delivery.reload();
      props.onChanged();
    });
  const redeliver = () =>
    action.run(async () => {
      ok(await session.api.POST('/v1/admin/webhook-deliveries/{id}/redeliver', path));
      props.onChanged();
    });
  const d = delivery.data;
  return (
    <Modal labelledBy="delivery-title" id="delivery" onClose={props.onClose} fallbackFocus="#deliveries">
      <article>
        <header>
          <h2 id="delivery-title">{t('deliveryTitle', { event: d?.event ?? '…' })}</h2>
        </header>
        <ErrorNote error={delivery.error ?? action.error} />
        {d ? (
          <>
            <p>
              <Badge tone={tone(d.status)}>{term('deliveryStatus', d.status)}</Badge> <code>{d.url}</code>
              <br />
              <small class="muted">
                {when(d.createdAt)}
                {d.nextAttemptAt ? ` · ${t('nextRetry')}: ${when(d.nextAttemptAt)}` : ''}
              </small>
            </p>
            <h3>{t('attempts')}</h3>
            {d.attempts.length === 0 ? <p class="muted">{t('none')}</p> : null}
            <ol id="delivery-attempts">
              {d.attempts.map((a) => (
                <li key={a.attempt}>
                  <strong>{outcomeOf(a)}</strong> · {when(a.at)} · {a.durationMs} ms
                  {a.statusCode !== null && a.error ? ` · ${a.error}` : ''}
                  <br />
                  <small>{t('response')}:</small>{' '}
                  {a.response ? (
                    <pre class="command">{a.response}</pre>
                  ) : (
                    <small class="muted">{t('noResponse')}</small>
                  )}
                </li>
              ))}
            </ol>
            <h3>{t('payload')}</h3>
            <pre class="command" id="delivery-payload" tabIndex={0} aria-label={t('payload')}>
              {JSON.stringify(d.payload, null, 2)}
            </pre>
          </>
        ) : (
          <p aria-busy="true">{t('loading')}</p>
        )}
        <footer>
          <button type="button" class="secondary" onClick={props.onClose}>
            {t('close')}
          </button>
          {d?.status === 'pending' && d.attempts.length > 0 ? (
            <button type="button" id="retry-now" onClick={() => void retry()} aria-busy={action.busy}>
              {t('retryNow')}
            </button>
          ) : null}
          <button type="button" class="outline" onClick={() => void redeliver()} aria-busy={action.busy}>
            {t('redeliver')}
          </button>
        </footer>
      </article>
    </Modal>
  );
}

/** The log of the tenant's deliveries; `version` changes when the page queued one (a test event). */
export function DeliveryLog({ session, version }: { session: Session; version: number }) {
  const [tick, setTick] = useState(0);
  const deliveries = useLoad(
    async () =>
      ok(await session.api.GET('/v1/admin/webhook-deliveries', { params: { query: { limit: 50 } } })),
    [version, tick],
  );
  useWhileVisible(() => setTick((n) => n + 1), DELIVERIES_POLL_MS);
  const [open, setOpen] = useState<string | null>(null);
  const items = deliveries.data?.items ?? [];
  return (
    <>
      <header class="page">
        <h3>{t('deliveries')}</h3>
      </header>
      <p class="muted">
        <small>{t('deliveriesLive')}</small>
      </p>
      <ErrorNote error={deliveries.error} />
      <Table
        id="deliveries"
        label={t('deliveries')}
        head={[t('when'), t('event'), t('status'), t('attempts'), t('actions')]}
      >
        {items.map((d) => {
          const last = d.attempts[d.attempts.length - 1];
          return (
            <tr key={d.id}>
              <td>{when(d.createdAt)}</td>
              <td>
                <code>{d.event}</code>
                <br />
                <small class="muted">{d.url}</small>
              </td>
              <td>
                <Badge tone={tone(d.status)}>{term('deliveryStatus', d.status)}</Badge>
                {d.nextAttemptAt ? (
                  <>
                    <br />
                    <small class="muted">
                      {t('nextRetry')}: {when(d.nextAttemptAt)}
                    </small>
                  </>
                ) : null}
              </td>
              <td>
                {d.attempts.length}
                {last ? (
                  <>
                    <br />
                    <small class="muted">
                      {outcomeOf(last)} · {last.durationMs} ms
                    </small>
                  </>
                ) : null}
              </td>
              <td>
                <button
                  type="button"
                  class="outline"
                  aria-label={`${t('details')}: ${d.event} ${when(d.createdAt)}`}
                  onClick={() => setOpen(d.id)}
                >
                  {t('details')}
                </button>
              </td>
            </tr>
          );
        })}
      </Table>
      {deliveries.data && items.length === 0 ? <p class="muted">{t('none')}</p> : null}
      {open ? (
        <DeliveryDialog
          session={session}
          id={open}
          version={tick}
          onClose={() => setOpen(null)}
          onChanged={() => setTick((n) => n + 1)}
        />
      ) : null}
    </>
  );
}
