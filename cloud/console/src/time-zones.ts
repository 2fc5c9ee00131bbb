// An event's times in the event's own time zone (not the browser's): the form's `datetime-local`
// values are wall-clock times there, and the pages show its dates with the zone beside them.
import { lang } from './i18n.js';

/** The IANA zones this browser knows, UTC first; `current` kept even if the browser does not list it. */
export function timeZones(current: string): string[] {
  const all = Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC');
  const zones = ['UTC', ...all];
  return zones.includes(current) ? zones : [current, ...zones];
}

/** A zone as people read it: `America/Sao_Paulo` -> `America/Sao Paulo`. */
export const zoneLabel = (zone: string): string => zone.replace(/_/g, ' ');

/** The browser's zone, the default for a new event. */
export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** The wall-clock parts of `at` in `zone`, as if they were a UTC instant (ms). */
function wallMs(at: Date, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
}

/** An ISO instant as a `datetime-local` value in `zone` ('' for none). */
export function wallOf(iso: string | null | undefined, zone: string): string {
  if (!iso) return '';
  return new Date(wallMs(new Date(iso), zone)).toISOString().slice(0, 16);
}

/** A `datetime-local` value read as a wall-clock time in `zone` -> ISO instant (empty stays null). */
export function instantOf(wall: string, zone: string): string | null {
  if (!wall) return null;
  const asUtc = new Date(`${wall}:00Z`).getTime();
  // The zone's offset at that moment; read again at the result, which differs across a DST change.
  let at = asUtc - (wallMs(new Date(asUtc), zone) - asUtc);
  at = asUtc - (wallMs(new Date(at), zone) - at);
  return new Date(at).toISOString();
}

/** A date and time as lived in `zone`, in the console's language, with the zone named. */
export function whenIn(iso: string | null | undefined, zone: string): string {
  if (!iso) return '—';
  const text = new Date(iso).toLocaleString(lang(), {
    dateStyle: 'short',
    timeStyle: 'short',
    timeZone: zone,
  });
  return `${text} (${zoneLabel(zone)})`;
}
