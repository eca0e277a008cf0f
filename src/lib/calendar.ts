// Calendar arithmetic in a named time zone (DESIGN.md §2, §3 rule 9), on Luxon. Instants are stored in UTC;
// dates, month ends and day counts are taken in the zone. Adding months to an anchor clamps to the month's end
// (Jan 31 + 1 month = Feb 28/29) and is always computed from the anchor, so there is no drift.
import { DateTime } from 'luxon';

/** The gateway's own zone: transactionDateTime is yyyyMMddHHmmss in Korea Standard Time. */
export const GATEWAY_ZONE = 'Asia/Seoul';
const GATEWAY_FORMAT = 'yyyyMMddHHmmss';

export type IntervalUnit = 'day' | 'week' | 'month' | 'year';

export function formatGatewayDateTime(instant: Date): string {
  return DateTime.fromJSDate(instant, { zone: GATEWAY_ZONE }).toFormat(GATEWAY_FORMAT);
}

/** Parses yyyyMMddHHmmss in Korea time; undefined when it is not a real date-time. */
export function parseGatewayDateTime(text: unknown): Date | undefined {
  if (typeof text !== 'string' || !/^\d{14}$/.test(text)) return undefined;
  const parsed = DateTime.fromFormat(text, GATEWAY_FORMAT, { zone: GATEWAY_ZONE });
  return parsed.isValid ? parsed.toJSDate() : undefined;
}

/** anchor + count × unit, in the zone's calendar, clamped to the month's end. */
export function addInterval(anchor: Date, unit: IntervalUnit, count: number, zone: string): Date {
  const key = `${unit}s` as 'days' | 'weeks' | 'months' | 'years';
  return DateTime.fromJSDate(anchor, { zone }).plus({ [key]: count }).toJSDate();
}

/** Whole calendar days from a to b in the zone (b's date minus a's date), ignoring the time of day. */
export function calendarDaysBetween(a: Date, b: Date, zone: string): number {
  const start = DateTime.fromJSDate(a, { zone }).startOf('day');
  const end = DateTime.fromJSDate(b, { zone }).startOf('day');
  return Math.round(end.diff(start, 'days').days);
}

export function sameCalendarMonth(a: Date, b: Date, zone: string): boolean {
  const x = DateTime.fromJSDate(a, { zone });
  const y = DateTime.fromJSDate(b, { zone });
  return x.year === y.year && x.month === y.month;
}

/**
 * The MOBILE window (DESIGN.md §5): calendar days in Korea time, inclusive,
 * |date(now) − date(last success + 1 month)| ≤ 5. Returns the signed distance in days.
 */
export function mobileWindowOffsetDays(lastSuccessAt: Date, now: Date, zone: string = GATEWAY_ZONE): number {
  return calendarDaysBetween(addInterval(lastSuccessAt, 'month', 1, zone), now, zone);
}

export const MOBILE_WINDOW_DAYS = 5;

export interface Interval {
  unit: IntervalUnit;
  count: number;
}

/** When cycle n of a subscription anchored at `anchor` is due: anchor + n intervals, never from the last due date. */
export function cycleDueAt(anchor: Date, interval: Interval, n: number, zone: string): Date {
  return addInterval(anchor, interval.unit, interval.count * n, zone);
}

/**
 * The cycle whose period contains `now`: the largest n ≥ `from` with cycleDueAt(n) ≤ now, or `from` itself when
 * that is not due yet. Used after downtime so that missed periods are not charged in a burst (rule 10).
 */
export function cycleContaining(anchor: Date, interval: Interval, now: Date, zone: string, from = 0): number {
  if (cycleDueAt(anchor, interval, from, zone) > now) return from;
  const key = `${interval.unit}s` as 'days' | 'weeks' | 'months' | 'years';
  const elapsed = DateTime.fromJSDate(now, { zone }).diff(DateTime.fromJSDate(anchor, { zone }), key).as(key);
  // The estimate can be off by one either way around month ends and DST; step to the exact answer.
  let n = Math.max(from, Math.floor(elapsed / interval.count));
  while (n > from && cycleDueAt(anchor, interval, n, zone) > now) n -= 1;
  while (cycleDueAt(anchor, interval, n + 1, zone) <= now) n += 1;
  return n;
}
