// Times on the console's pages are Korea time (docs/console.md "Operator console": the zone is named once, in the layout, as KST);
// exports stay in UTC. Formatting only: no rule reads these strings.
import { KOREA_ZONE } from '../../lib/calendar.ts';

const dateTime = new Intl.DateTimeFormat('sv-SE', {
  timeZone: KOREA_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
const dateOnly = new Intl.DateTimeFormat('sv-SE', { timeZone: KOREA_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });

/** "2026-11-24 19:05:07" in Korea time; "" for no date. The page names the zone (KST) once, in its layout. */
export function formatKst(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? '' : dateTime.format(date);
}

/** "2026-11-24", the Korea calendar day of an instant. */
export function formatKstDate(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? '' : dateOnly.format(date);
}

/** The machine-readable instant for a <time datetime> attribute (UTC, ISO-8601). */
export function isoInstant(value: Date | string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
