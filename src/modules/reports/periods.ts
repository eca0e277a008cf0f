// The reports' calendar (docs/reconciliation.md "Revenue reports"): Korea calendar months and days. A month runs from 00:00 Korea time
// on its first day (15:00 UTC the day before); the period that contains the service's now ends now.
import { DateTime } from 'luxon';
import { ValidationError } from '../../lib/errors.ts';

export interface Period {
  /** `YYYY-MM` or `YYYY-MM-DD`. */
  label: string;
  start: Date;
  /** Exclusive; just after now for the period that contains now (and the start of one that has not begun). */
  end: Date;
}

export type Granularity = 'day' | 'month';

const MAX_PERIODS = 1000;

function parse(text: string, granularity: Granularity, zone: string): DateTime {
  const format = granularity === 'month' ? 'yyyy-MM' : 'yyyy-MM-dd';
  const parsed = DateTime.fromFormat(text, format, { zone });
  if (!parsed.isValid) throw new ValidationError(`${text} is not a ${granularity === 'month' ? 'month (YYYY-MM)' : 'date (YYYY-MM-DD)'}`);
  return parsed.startOf(granularity);
}

/** A calendar's periods before clamping: they depend only on the range, the granularity and the zone. */
type Calendar = ReadonlyArray<{ label: string; start: number; end: number }>;

/**
 * The calendars of the latest ranges asked. Walking a range's Korea days with Luxon (an Intl offset lookup per step)
 * was most of a daily report's time once its figures were pre-aggregated (docs/benchmarks.md); the same ranges are
 * asked again and again (the console's defaults, a dashboard), and a calendar never changes, so the latest few are
 * kept. Only clamping to now is done per request.
 */
const calendars = new Map<string, Calendar>();
const CALENDARS_KEPT = 32;

function calendar(from: string, to: string, granularity: Granularity, zone: string): Calendar {
  const key = `${granularity} ${zone} ${from} ${to}`;
  const kept = calendars.get(key);
  if (kept) return kept;
  const first = parse(from, granularity, zone);
  const last = parse(to, granularity, zone);
  if (last < first) throw new ValidationError(`to (${to}) is before from (${from})`);
  const step = granularity === 'month' ? { months: 1 } : { days: 1 };
  const periods: Array<{ label: string; start: number; end: number }> = [];
  // Each step is taken once (a period's end is the next one's start).
  let at = first;
  let start = at.toMillis();
  while (at <= last) {
    if (periods.length === MAX_PERIODS) throw new ValidationError(`At most ${MAX_PERIODS} periods per report`);
    const next = at.plus(step);
    const end = next.toMillis();
    const date = at.toISODate()!;
    periods.push({ label: granularity === 'month' ? date.slice(0, 7) : date, start, end });
    at = next;
    start = end;
  }
  if (calendars.size >= CALENDARS_KEPT) calendars.delete(calendars.keys().next().value!);
  calendars.set(key, periods);
  return periods;
}

/** Every period from `from` to `to` (inclusive) in `zone`, their ends clamped to now. */
export function periodsBetween(from: string, to: string, granularity: Granularity, zone: string, now: Date): Period[] {
  // Instants are kept to the millisecond: the period that contains now includes now itself.
  const limit = now.getTime() + 1;
  return calendar(from, to, granularity, zone).map(({ label, start, end }) => ({
    label,
    start: new Date(Math.min(start, limit)),
    end: new Date(Math.min(end, limit)),
  }));
}

/**
 * Months from the month of `from` to the month of `to` (days, `YYYY-MM-DD`), the first starting at `from` (00:00 in
 * `zone`) and the last ending with `to`: a monthly report asked from the 15th counts from the 15th, not the whole
 * first month (and likewise at its end).
 */
export function monthsBetweenDays(from: string, to: string, zone: string, now: Date): Period[] {
  const [first] = periodsBetween(from, from, 'day', zone, now);
  const [last] = periodsBetween(to, to, 'day', zone, now);
  if (last!.start < first!.start) throw new ValidationError(`to (${to}) is before from (${from})`);
  const months = periodsBetween(from.slice(0, 7), to.slice(0, 7), 'month', zone, now);
  const end = months.length - 1;
  months[0] = { ...months[0]!, start: first!.start };
  months[end] = { ...months[end]!, end: last!.end };
  return months;
}

/** A rate as the contract gives it: a decimal rounded to 4 places, null when its base is 0. */
export function rate(numerator: number, base: number): number | null {
  if (base === 0) return null;
  return Math.round((numerator / base) * 10_000) / 10_000;
}
