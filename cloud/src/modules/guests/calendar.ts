// A guest's invitation as an iCalendar file (RFC 5545): one VEVENT with the event's start, end and venue,
// whose UID stays the same for the same guest and event, so a calendar updates the entry it already has.
import { createHash } from 'node:crypto';

export interface CalendarEntry {
  guestId: string;
  eventId: string;
  /** Host name the UID is qualified with (the service's public host). */
  host: string;
  summary: string;
  description: string | null;
  location: string | null;
  url: string;
  start: Date;
  end: Date | null;
  stamp: Date;
}

/** TEXT values: backslash, semicolon, comma and line breaks escaped (RFC 5545 3.3.11). */
export function escapeText(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/;/g, '\\;')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/** A content line folded at 75 octets, never inside a UTF-8 character (RFC 5545 3.1). */
function fold(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char);
    const room = parts.length === 0 ? 75 : 74; // continuation lines start with one space
    if (octets + size > room) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join('\r\n ');
}

const utc = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * The file's name, the same in every language: the event's name as a safe ASCII slug (`Noite de Gala` ->
 * `noite-de-gala.ics`), else its day where it takes place (a name without a Latin letter or digit).
 */
export function calendarFileName(eventName: string, start: Date, timeZone: string): string {
  const slug = eventName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-+|-+$/g, '');
  const day = new Intl.DateTimeFormat('en-CA', { dateStyle: 'short', timeZone }).format(start);
  return `${slug || day}.ics`;
}

/** A stable UID: a hash of guest and event, so neither id is disclosed. */
export function calendarUid(guestId: string, eventId: string, host: string): string {
  const digest = createHash('sha256').update(`${guestId}:${eventId}`).digest('hex').slice(0, 32);
  return `${digest}@${host}`;
}

export function guestCalendar(entry: CalendarEntry): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Portico//Invitation//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    'BEGIN:VEVENT',
    `UID:${calendarUid(entry.guestId, entry.eventId, entry.host)}`,
    `DTSTAMP:${utc(entry.stamp)}`,
    `DTSTART:${utc(entry.start)}`,
    ...(entry.end ? [`DTEND:${utc(entry.end)}`] : []),
    `SUMMARY:${escapeText(entry.summary)}`,
    ...(entry.location ? [`LOCATION:${escapeText(entry.location)}`] : []),
    ...(entry.description ? [`DESCRIPTION:${escapeText(entry.description)}`] : []),
    `URL:${entry.url}`,
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return lines.map(fold).join('\r\n') + '\r\n';
}
