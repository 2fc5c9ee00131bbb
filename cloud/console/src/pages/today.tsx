// Today: check-ins arriving live, the day's counts per event, method and outcome, who arrived per event
// (arrived / confirmed / capacity and a chart of arrivals, following the stream), and the devices with
// their last sync and queue; a check-in's photo is fetched only when asked for (each view is audited).
import type { AdminCheckin } from '@portico/contract';
import { ok } from '@portico/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { day, t, term, when } from '../i18n.js';
import { followCheckins } from '../live.js';
import type { EnumWords } from '@portico/contract/words';
import type { Session } from '../session.js';
import { ArrivalsChart } from '../components/arrivals-chart.js';
import { AttendanceMeter } from '../components/attendance.js';
import { useLoad } from '../hooks.js';
import { ErrorNote } from '../components/feedback.js';
import { Table } from '../components/table.js';
import { PageHeader } from '../components/page-header.js';
import { checkinHead, CheckinRow } from '../components/checkin-row.js';

const MAX_LIVE = 50;

function Counts<K extends 'checkinMethod' | 'checkinOutcome'>(props: {
  title: string;
  kind: K;
  counts: Record<string, number>;
}) {
  const { title, kind, counts } = props;
  return (
    <article>
      <h3>{title}</h3>
      <table>
        <tbody>
          {Object.entries(counts).map(([k, n]) => (
            <tr key={k}>
              <th scope="row">{term(kind, k as keyof EnumWords[K])}</th>
              <td>{n}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

export function Today({ session }: { session: Session }) {
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const stats = useLoad(
    async () => ok(await session.api.GET('/v1/admin/stats/today', { params: { query: { tz } } })),
    [],
  );
  const [live, setLive] = useState<AdminCheckin[]>([]);
  // Ids that came through the stream (highlighted), as opposed to the ones listed on opening.
  const [arrived, setArrived] = useState<ReadonlySet<string>>(new Set());
  const [connected, setConnected] = useState<boolean | null>(null);
  const reloadStats = useRef(stats.reload);
  reloadStats.current = stats.reload;

  useEffect(() => {
    const abort = new AbortController();
    let pending: number | undefined;
    // The latest check-ins first, then each new one as the stream brings it.
    session.api
      .GET('/v1/admin/checkins', { params: { query: { limit: 20 } }, signal: abort.signal })
      .then(({ data }) =>
        setLive((list) => [...list, ...(data?.items ?? []).filter((c) => !list.some((x) => x.id === c.id))]),
      )
      .catch(() => undefined);
    void followCheckins(
      session,
      abort.signal,
      (c) => {
        setLive((list) => [c, ...list.filter((x) => x.id !== c.id)].slice(0, MAX_LIVE));
        setArrived((ids) => new Set(ids).add(c.id));
        // The counts follow the stream, at most once a second.
        clearTimeout(pending);
        pending = window.setTimeout(() => reloadStats.current(), 1000);
      },
      setConnected,
    );
    return () => {
      abort.abort();
      clearTimeout(pending);
    };
  }, [session]);

  const s = stats.data;
  return (
    <>
      <PageHeader title={t('navToday')} />
      <ErrorNote error={stats.error} />
      <section class="grid-stats" aria-busy={!s && !stats.error}>
        <article>
          <h3>{t('total')}</h3>
          <div class="stat" id="total-today">
            {s?.total ?? '…'}
          </div>
          <small class="muted">{s ? `${day(s.from)} (${s.timeZone ?? 'UTC'})` : ''}</small>
        </article>
        <article>
          <h3>{t('byEvent')}</h3>
          <table>
            <thead>
              <tr>
                <th>{t('event')}</th>
                <th>{t('total')}</th>
                <th>{t('admitted')}</th>
              </tr>
            </thead>
            <tbody>
              {(s?.byEvent ?? []).map((e) => (
                <tr key={e.event?.id ?? 'none'}>
                  <th scope="row">{e.event?.name ?? t('noEvent')}</th>
                  <td>{e.total}</td>
                  <td>{e.admitted}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </article>
        {s ? <Counts title={t('byMethod')} kind="checkinMethod" counts={s.byMethod} /> : null}
        {s ? <Counts title={t('byOutcome')} kind="checkinOutcome" counts={s.byOutcome} /> : null}
      </section>

      {s && s.attendance.length > 0 ? (
        <section>
          <h2>{t('whoArrived')}</h2>
          <div class="grid-stats" id="attendance-today">
            {s.attendance.map((a) => (
              <article key={a.event.id} data-event={a.event.name}>
                <h3>
                  <a href={`#/door/${a.event.id}`} title={t('doorOpen')}>
                    {a.event.name}
                  </a>
                </h3>
                <AttendanceMeter attendance={a} />
                <ArrivalsChart session={session} eventId={a.event.id} version={s} />
              </article>
            ))}
          </div>
        </section>
      ) : null}

      <section>
        <h2>{t('liveCheckins')}</h2>
        <p class="muted" role="status" id="live-state" aria-busy={connected !== true && connected !== false}>
          {connected === false ? t('liveDisconnected') : connected ? t('liveConnected') : t('loading')}
        </p>
        <Table id="live" head={checkinHead(false)}>
          {live.map((c) => (
            <CheckinRow
              key={c.id}
              session={session}
              checkin={c}
              detailed={false}
              class={arrived.has(c.id) ? 'live-item' : undefined}
            />
          ))}
        </Table>
      </section>

      <section>
        <h2>{t('devices')}</h2>
        <Table id="devices" head={[t('name'), t('lastSeen'), t('lastSync'), t('queueLength')]}>
          {(s?.devices ?? []).map((d) => (
            <tr key={d.id}>
              <td>
                {d.name} {d.revokedAt ? <span class="badge bad">{t('revoked')}</span> : null}
              </td>
              <td>{when(d.lastSeenAt)}</td>
              <td>{when(d.lastSyncAt)}</td>
              <td>{d.queueLength ?? '—'}</td>
            </tr>
          ))}
        </Table>
        {s && s.devices.length === 0 ? <p class="muted">{t('none')}</p> : null}
      </section>
    </>
  );
}
