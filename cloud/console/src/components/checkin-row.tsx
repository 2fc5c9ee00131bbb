// A check-in as a table row (who, event, how it was reached, outcome, photo on request, undo), shared by
// Today, Check-ins and the door view.
import type { AdminCheckin, StepUpFactor } from '@portico/contract';
import { useEffect, useState } from 'preact/hooks';
import { t, term, when } from '../i18n.js';
import type { TextKey } from '../texts.js';
import type { Session } from '../session.js';
import { Badge, OutcomeBadge } from './feedback.js';

export function CheckinPhoto({ session, checkin }: { session: Session; checkin: AdminCheckin }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  if (!checkin.hasImage) return <span class="muted">—</span>;
  if (url)
    return (
      <img
        class="thumb"
        src={url}
        alt={`${t('showPhoto')} ${checkin.person?.name ?? checkin.guest?.name ?? ''}`}
      />
    );
  const load = async () => {
    const { data } = await session.api.GET('/v1/admin/checkins/{id}/image', {
      params: { path: { id: checkin.id } },
      parseAs: 'blob',
    });
    if (!data) return setError(t('noPhoto'));
    setUrl(URL.createObjectURL(data));
  };
  return (
    <>
      <button type="button" class="outline" onClick={() => void load()}>
        {t('showPhoto')}
      </button>
      {error ? <span class="muted">{error}</span> : null}
    </>
  );
}

const VIA = {
  qr: 'viaQr',
  staff: 'viaStaff',
  document_last4: 'viaDocumentLast4',
  birth_date: 'viaBirthDate',
} as const satisfies Record<StepUpFactor, TextKey>;

/** How an admission was reached: "Face + QR" when a second factor settled the face, else the method. */
export const howReached = (c: Pick<AdminCheckin, 'method' | 'stepUp'>) =>
  c.stepUp ? t('faceVia', { factor: t(VIA[c.stepUp.factor]) }) : term('checkinMethod', c.method);

/** Column titles of a check-in table; `detailed` adds the score and the flags, `actions` the undo. */
export const checkinHead = (detailed: boolean, actions = false) => [
  t('when'),
  t('person'),
  t('event'),
  t('method'),
  t('outcome'),
  ...(detailed ? [t('score'), t('flags')] : []),
  t('showPhoto'),
  ...(actions ? [t('actions')] : []),
];

/** Who a check-in is for: the person, else the guest (a link check-in names only its guest). */
export const whoOf = (c: Pick<AdminCheckin, 'person' | 'guest'>) => c.person?.name ?? c.guest?.name ?? '—';

/** A check-in's row under `checkinHead(detailed)`. */
export function CheckinRow(props: {
  session: Session;
  checkin: AdminCheckin;
  detailed: boolean;
  class?: string | undefined;
  /** With it, an "Undo" in the last column of an admission that still counts. */
  onUndo?: (c: AdminCheckin) => void;
}) {
  const c = props.checkin;
  return (
    <tr class={props.class}>
      <td>{when(c.recordedAt)}</td>
      <td>
        {whoOf(c)}
        {c.voided ? (
          <>
            {' '}
            <Badge tone="warn">{t('voidedBadge')}</Badge>
          </>
        ) : null}
      </td>
      <td>{c.event?.name ?? '—'}</td>
      <td>{howReached(c)}</td>
      <td>
        <OutcomeBadge outcome={c.outcome} />
      </td>
      {props.detailed ? (
        <>
          <td>{c.score === null ? '—' : c.score.toFixed(2)}</td>
          <td>{c.flags.map((f) => term('checkinFlag', f)).join(', ') || '—'}</td>
        </>
      ) : null}
      <td>
        <CheckinPhoto session={props.session} checkin={c} />
      </td>
      {props.onUndo ? (
        <td>
          {(c.outcome === 'success' || c.outcome === 'geofence_alert') && !c.voided ? (
            <button
              type="button"
              class="secondary outline"
              aria-label={t('undoName', { name: whoOf(c) })}
              onClick={() => props.onUndo?.(c)}
            >
              {t('undo')}
            </button>
          ) : (
            '—'
          )}
        </td>
      ) : null}
    </tr>
  );
}
