// Where a report's figures come from (prisma/functions/report-rollups.sql): whole Korea days and months from the
// pre-aggregated tables the database keeps with every change, and the unit that holds now (cut at now: the periods'
// last end, periods.ts) from the raw rows through their indexes, so a report is as exact as reading every row.
import { DateTime } from 'luxon';
import { KOREA_ZONE } from '../../lib/calendar.ts';

export type Unit = 'day' | 'month';

export interface Split {
  /** Whole units from the tables, as dates (`YYYY-MM-DD`, `to` exclusive); null when there are none. */
  whole: { from: string; to: string } | null;
  /** The rest, from the raw rows; null when empty. */
  live: { start: Date; end: Date } | null;
}

/** Before anything the service records (0001-01-01 UTC; PostgreSQL's timestamptz starts in 4713 BC). */
const BEGINNING = new Date('0001-01-01T00:00:00Z');

const isoDate = (instant: Date) => DateTime.fromJSDate(instant, { zone: KOREA_ZONE }).toISODate()!;

/**
 * Splits [start, end) at the start of the unit that holds `end` (end itself when it is a unit's start). `start` is a
 * unit's start (a period's, or -Infinity for "everything before"), or `end` itself when the range is empty. In a zone
 * other than the tables', everything is live.
 */
export function splitRange(start: Date | null, end: Date, unit: Unit, zone: string): Split {
  if (zone !== KOREA_ZONE) return { whole: null, live: start === null || start < end ? { start: start ?? BEGINNING, end } : null };
  const cut = DateTime.fromJSDate(end, { zone: KOREA_ZONE }).startOf(unit).toJSDate();
  const wholeFrom = start === null ? '-infinity' : isoDate(start);
  const whole = start === null || start < cut ? { from: wholeFrom, to: isoDate(cut) } : null;
  const liveStart = start !== null && start > cut ? start : cut;
  return { whole, live: liveStart < end ? { start: liveStart, end } : null };
}
