// Calendar arithmetic in a named time zone (docs/api.md "How we fill the gateway's gaps"; docs/architecture.md, invariant 9), on Luxon. Instants are stored in UTC;
// dates, month ends and day counts are taken in the zone. Adding months to an anchor clamps to the month's end
// (Jan 31 + 1 month = Feb 28/29) and is always computed from the anchor, so there is no drift.
import { DateTime, FixedOffsetZone, IANAZone, type Zone } from 'luxon';

/**
 * Korea Standard Time, the one spelling of the zone in TypeScript: the gateway's own (transactionDateTime is
 * yyyyMMddHHmmss in it), its settlement files' dates, the reports' days and months (the roll-up tables' zone), the
 * console's times, and BILLING_TIMEZONE's default.
 */
export const KOREA_ZONE = 'Asia/Seoul' as const;
const GATEWAY_FORMAT = 'yyyyMMddHHmmss';

export type IntervalUnit = 'day' | 'week' | 'month' | 'year';

// A named zone costs an Intl.DateTimeFormat#formatToParts call for every DateTime made in it, a large share of the
// charging engine's CPU (docs/benchmarks.md "Measurements behind choices in the code"). A zone whose UTC offset has not changed over the years we deal in (Asia/Seoul since 1988,
// UTC) is the same calendar as a fixed offset, which Luxon computes without Intl; so within those years such a zone
// is replaced by its fixed offset. Zones with daylight saving time (or any change in those years) keep their name.
// The offset is sampled every 7 days: every offset change tzdata knows lasted months.
const FIXED_FROM = Date.UTC(1990, 0, 1);
const FIXED_UNTIL = Date.UTC(2100, 0, 1);
const SAMPLE_MS = 7 * 86_400_000;
const fixedZones = new Map<string, Zone | undefined>();

function fixedOffsetOf(name: string): Zone | undefined {
  if (fixedZones.has(name)) return fixedZones.get(name);
  const zone = IANAZone.create(name);
  let fixed: Zone | undefined;
  if (zone.isValid) {
    const offset = zone.offset(FIXED_FROM);
    let constant = true;
    for (let t = FIXED_FROM; t <= FIXED_UNTIL && constant; t += SAMPLE_MS) constant = zone.offset(t) === offset;
    if (constant && zone.offset(FIXED_UNTIL) === offset) fixed = FixedOffsetZone.instance(offset);
  }
  fixedZones.set(name, fixed);
  return fixed;
}

/** The zone to compute `instant` in: the named zone, or its fixed offset when that is the same calendar there. */
export function zoneAt(instant: Date, name: string): Zone | string {
  const t = instant.getTime();
  if (t < FIXED_FROM || t >= FIXED_UNTIL) return name;
  return fixedOffsetOf(name) ?? name;
}

/** An instant as a Luxon DateTime in the zone (zoneAt). */
function inZone(instant: Date, name: string): DateTime {
  return DateTime.fromJSDate(instant, { zone: zoneAt(instant, name) });
}

export function formatGatewayDateTime(instant: Date): string {
  return inZone(instant, KOREA_ZONE).toFormat(GATEWAY_FORMAT);
}

/** Parses yyyyMMddHHmmss in Korea time; undefined when it is not a real date-time. */
export function parseGatewayDateTime(text: unknown): Date | undefined {
  if (typeof text !== 'string' || !/^\d{14}$/.test(text)) return undefined;
  return fixedGatewayDateTime(text) ?? parseGatewayDateTimeInZone(text);
}

/**
 * The common case of parseGatewayDateTime without Luxon (every approval's transactionDateTime; Luxon's fromFormat was
 * most of reading a charge's answer, docs/benchmarks.md "Measurements behind choices in the code"): a wall time whose
 * fields are all in their ranges, in the years where Korea time is a fixed offset. Anything else (an impossible date,
 * another year) is undefined here and left to Luxon. test/lib/calendar.test.ts compares both with Luxon's parsing in
 * the named zone.
 */
function fixedGatewayDateTime(text: string): Date | undefined {
  const fixed = fixedOffsetOf(KOREA_ZONE);
  if (!fixed) return undefined;
  const field = (from: number, to: number) => Number(text.slice(from, to));
  const [year, month, day, hour, minute, second] = [field(0, 4), field(4, 6), field(6, 8), field(8, 10), field(10, 12), field(12, 14)];
  if (year < 1990 || year > 2099 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  // A day past the month's end rolls over into the next month: not a real date, left to Luxon (which refuses it).
  if (new Date(wall).getUTCDate() !== day) return undefined;
  const instant = new Date(wall - fixed.offset(wall) * 60_000);
  return zoneAt(instant, KOREA_ZONE) === KOREA_ZONE ? undefined : instant;
}

function parseGatewayDateTimeInZone(text: string): Date | undefined {
  let parsed = DateTime.fromFormat(text, GATEWAY_FORMAT, { zone: fixedOffsetOf(KOREA_ZONE) ?? KOREA_ZONE });
  if (parsed.isValid && zoneAt(parsed.toJSDate(), KOREA_ZONE) === KOREA_ZONE) parsed = DateTime.fromFormat(text, GATEWAY_FORMAT, { zone: KOREA_ZONE });
  return parsed.isValid ? parsed.toJSDate() : undefined;
}

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * A wall-clock time in the zone as an instant, or undefined when it is no real date-time (February 31st). Through the
 * zone's fixed offset where that is the same calendar (zoneAt), as parseGatewayDateTime: a settlement file has a
 * date-time on every line.
 */
export function instantOfWallClock(time: WallClock, name: string): Date | undefined {
  const utc = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
  const near = new Date(utc);
  const zone = zoneAt(near, name);
  if (zone instanceof FixedOffsetZone) {
    // Date.UTC rolls February 31st over into March: a real date-time reads back the same.
    const real =
      near.getUTCFullYear() === time.year &&
      near.getUTCMonth() === time.month - 1 &&
      near.getUTCDate() === time.day &&
      near.getUTCHours() === time.hour &&
      near.getUTCMinutes() === time.minute &&
      near.getUTCSeconds() === time.second;
    const instant = new Date(utc - zone.offset(utc) * 60_000);
    if (real && zoneAt(instant, name) === zone) return instant;
    if (!real) return undefined;
  }
  let parsed = DateTime.fromObject(time, { zone: zoneAt(near, name) });
  if (parsed.isValid && zoneAt(parsed.toJSDate(), name) === name) parsed = DateTime.fromObject(time, { zone: name });
  return parsed.isValid ? parsed.toJSDate() : undefined;
}

/** The calendar date of an instant in the zone, YYYY-MM-DD. */
export function calendarDate(instant: Date, name: string): string {
  const zone = zoneAt(instant, name);
  if (zone instanceof FixedOffsetZone) return new Date(instant.getTime() + zone.offset(instant.getTime()) * 60_000).toISOString().slice(0, 10);
  return DateTime.fromJSDate(instant, { zone }).toISODate()!;
}

/** anchor + count × unit, in the zone's calendar, clamped to the month's end. */
export function addInterval(anchor: Date, unit: IntervalUnit, count: number, zone: string): Date {
  return fixedAddInterval(anchor, unit, count, zone) ?? luxonAddInterval(anchor, unit, count, zone);
}

/**
 * addInterval by hand where the zone is a fixed offset at the anchor and at the sum (a charge's cycles: planning and
 * recording a charge took several Luxon DateTimes each, most of the charging engine's time in Luxon, docs/benchmarks.md
 * "Measurements behind choices in the code"): the wall time's date moved as Luxon's plus moves it (years and months
 * first, the day clamped to the month's end, then days and weeks), its time of day kept. Undefined elsewhere (Luxon
 * then); test/lib/calendar.test.ts compares it with Luxon in the named zone.
 */
function fixedAddInterval(anchor: Date, unit: IntervalUnit, count: number, name: string): Date | undefined {
  const zone = zoneAt(anchor, name);
  if (!(zone instanceof FixedOffsetZone) || !Number.isInteger(count)) return undefined;
  const offsetMs = zone.offset(anchor.getTime()) * 60_000;
  const wall = new Date(anchor.getTime() + offsetMs);
  let sum: number;
  if (unit === 'day' || unit === 'week') sum = wall.getTime() + count * (unit === 'week' ? 7 : 1) * 86_400_000;
  else {
    const months = wall.getUTCMonth() + (unit === 'year' ? 12 * count : count);
    const year = wall.getUTCFullYear() + Math.floor(months / 12);
    const month = months - 12 * Math.floor(months / 12);
    // Date.UTC reads years 0 to 99 as 1900 to 1999: only the fixed years are summed here.
    if (year < 1990 || year > 2100) return undefined;
    const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
    sum = Date.UTC(
      year,
      month,
      Math.min(wall.getUTCDate(), lastDay),
      wall.getUTCHours(),
      wall.getUTCMinutes(),
      wall.getUTCSeconds(),
      wall.getUTCMilliseconds(),
    );
  }
  const result = new Date(sum - offsetMs);
  return zoneAt(result, name) === zone ? result : undefined;
}

function luxonAddInterval(anchor: Date, unit: IntervalUnit, count: number, zone: string): Date {
  const key = `${unit}s` as 'days' | 'weeks' | 'months' | 'years';
  const result = inZone(anchor, zone)
    .plus({ [key]: count })
    .toJSDate();
  // The sum may leave the years where the offset is fixed: then it is taken in the named zone.
  return zoneAt(result, zone) === zoneAt(anchor, zone)
    ? result
    : DateTime.fromJSDate(anchor, { zone })
        .plus({ [key]: count })
        .toJSDate();
}

/** Whole calendar days from a to b in the zone (b's date minus a's date), ignoring the time of day. */
export function calendarDaysBetween(a: Date, b: Date, zone: string): number {
  const start = inZone(a, zone).startOf('day');
  const end = inZone(b, zone).startOf('day');
  return Math.round(end.diff(start, 'days').days);
}

export function sameCalendarMonth(a: Date, b: Date, zone: string): boolean {
  const x = inZone(a, zone);
  const y = inZone(b, zone);
  return x.year === y.year && x.month === y.month;
}

/**
 * The MOBILE window (docs/architecture.md "Recurring charging"): calendar days in Korea time, inclusive,
 * |date(now) − date(last success + 1 month)| ≤ 5. Returns the signed distance in days.
 */
export function mobileWindowOffsetDays(lastSuccessAt: Date, now: Date, zone: string = KOREA_ZONE): number {
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
 * About how many units lie from `anchor` to `now` in the zone, for cycleContaining's first guess (it steps to the
 * exact answer, so the guess decides only how many steps). Where the zone is a fixed offset at both instants, from
 * the wall times' fields (a charge's plan asked Luxon for two DateTimes and a diff); elsewhere Luxon's diff.
 */
function unitsBetween(anchor: Date, now: Date, unit: IntervalUnit, name: string): number {
  const zone = zoneAt(anchor, name);
  if (zone instanceof FixedOffsetZone && zoneAt(now, name) === zone) {
    const days = (now.getTime() - anchor.getTime()) / 86_400_000;
    if (unit === 'day' || unit === 'week') return unit === 'week' ? days / 7 : days;
    const offsetMs = zone.offset(anchor.getTime()) * 60_000;
    const [a, b] = [new Date(anchor.getTime() + offsetMs), new Date(now.getTime() + offsetMs)];
    const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
    return unit === 'year' ? months / 12 : months;
  }
  const key = `${unit}s` as 'days' | 'weeks' | 'months' | 'years';
  return inZone(now, name).diff(inZone(anchor, name), key).as(key);
}

/**
 * The cycle whose period contains `now`: the largest n ≥ `from` with cycleDueAt(n) ≤ now, or `from` itself when
 * that is not due yet. Used after downtime so that missed periods are not charged in a burst (invariant 10).
 */
export function cycleContaining(anchor: Date, interval: Interval, now: Date, zone: string, from = 0): number {
  if (cycleDueAt(anchor, interval, from, zone) > now) return from;
  // The estimate can be off by one either way around month ends and DST; step to the exact answer.
  let n = Math.max(from, Math.floor(unitsBetween(anchor, now, interval.unit, zone) / interval.count));
  while (n > from && cycleDueAt(anchor, interval, n, zone) > now) n -= 1;
  while (cycleDueAt(anchor, interval, n + 1, zone) <= now) n += 1;
  return n;
}
