// Who arrived at an event, as the door and Today show it: arrived, confirmed and capacity, with a bar
// of arrivals against the capacity (or the confirmed guests when the event has no capacity).
import type { EventAttendance } from '@portico/contract';
import { t } from '../i18n.js';

export function AttendanceMeter(props: { attendance: EventAttendance; id?: string }) {
  const a = props.attendance;
  const of = a.capacity ?? a.confirmed;
  const left = a.capacity === null ? null : a.capacity - a.arrived;
  return (
    <div class="attendance" id={props.id}>
      <dl>
        <div>
          <dt>{t('arrived')}</dt>
          <dd class="arrived">{a.arrived}</dd>
        </div>
        <div>
          <dt>{t('confirmedCount')}</dt>
          <dd>{a.confirmed}</dd>
        </div>
        <div>
          <dt>{t('capacityCount')}</dt>
          <dd>{a.capacity ?? t('noLimit')}</dd>
        </div>
      </dl>
      <progress
        value={a.arrived}
        max={Math.max(of, a.arrived, 1)}
        aria-label={t('attendanceLabel', { arrived: a.arrived, of })}
      />
      {left === null ? null : (
        <small class={left > 0 ? 'muted' : 'full'}>
          {left > 0 ? t('placesLeft', { count: left }) : t('full')}
        </small>
      )}
    </div>
  );
}
