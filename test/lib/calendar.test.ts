import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  addInterval,
  calendarDate,
  calendarDaysBetween,
  cycleContaining,
  cycleDueAt,
  type Interval,
  formatGatewayDateTime,
  instantOfWallClock,
  mobileWindowOffsetDays,
  parseGatewayDateTime,
  sameCalendarMonth,
} from '../../src/lib/calendar.ts';

const SEOUL = 'Asia/Seoul';
const kst = (local: string) => new Date(`${local}+09:00`);

describe('calendar', () => {
  it('clamps month ends from the anchor without drift: Jan 31 → Feb 29 (leap year) → Mar 31', () => {
    const anchor = kst('2028-01-31T10:00:00');
    expect(addInterval(anchor, 'month', 1, SEOUL)).toEqual(kst('2028-02-29T10:00:00'));
    expect(addInterval(anchor, 'month', 2, SEOUL)).toEqual(kst('2028-03-31T10:00:00'));
    expect(addInterval(anchor, 'month', 13, SEOUL)).toEqual(kst('2029-02-28T10:00:00'));
  });

  it('takes dates in the zone: 23:30 KST and 00:30 KST the next day are one calendar day apart', () => {
    expect(calendarDaysBetween(kst('2026-04-15T23:30:00'), kst('2026-04-16T00:30:00'), SEOUL)).toBe(1);
    expect(calendarDaysBetween(kst('2026-04-16T00:30:00'), kst('2026-04-15T23:30:00'), SEOUL)).toBe(-1);
    expect(sameCalendarMonth(kst('2026-03-31T23:59:00'), kst('2026-04-01T00:00:00'), SEOUL)).toBe(false);
  });

  it('round-trips the gateway format in Korea time and refuses impossible dates', () => {
    expect(formatGatewayDateTime(kst('2026-01-02T03:04:05'))).toBe('20260102030405');
    expect(parseGatewayDateTime('20260102030405')).toEqual(kst('2026-01-02T03:04:05'));
    expect(parseGatewayDateTime('20260230000000')).toBeUndefined();
    expect(parseGatewayDateTime('2026-01-02')).toBeUndefined();
  });

  it('property: a wall-clock time and an instant’s date through the fixed offset agree with Luxon in the named zone', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1985-01-01T00:00:00Z'), max: new Date('2105-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom(SEOUL, 'UTC', 'America/New_York'),
        (instant, zone) => {
          const local = DateTime.fromJSDate(instant, { zone });
          expect(calendarDate(instant, zone)).toBe(local.toISODate());
          const time = { year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute, second: local.second };
          const named = DateTime.fromObject(time, { zone }).toJSDate();
          expect(instantOfWallClock(time, zone)).toEqual(named);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses a wall-clock time that is not on the calendar (February 30th, hour 24)', () => {
    const at = { year: 2026, month: 11, day: 24, hour: 18, minute: 30, second: 0 };
    expect(instantOfWallClock(at, SEOUL)).toEqual(kst('2026-11-24T18:30:00'));
    expect(instantOfWallClock({ ...at, month: 2, day: 30 }, SEOUL)).toBeUndefined();
    expect(instantOfWallClock({ ...at, hour: 24 }, SEOUL)).toBeUndefined();
    expect(instantOfWallClock({ ...at, year: 2027, month: 2, day: 29 }, SEOUL)).toBeUndefined();
    expect(instantOfWallClock({ ...at, year: 1987, month: 5, day: 10, hour: 2 }, SEOUL)).toEqual(
      DateTime.fromObject({ year: 1987, month: 5, day: 10, hour: 2, minute: 30 }, { zone: SEOUL }).toJSDate(),
    );
  });

  it('property: the day of month after adding months is the anchor’s day, or the month’s last day when shorter', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2090-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: 1, max: 240 }),
        (anchor, months) => {
          const parts = (d: Date) => {
            const [y, m, day] = new Intl.DateTimeFormat('en-CA', { timeZone: SEOUL, year: 'numeric', month: '2-digit', day: '2-digit' })
              .format(d)
              .split('-')
              .map(Number);
            return { y: y!, m: m!, day: day! };
          };
          const a = parts(anchor);
          const r = parts(addInterval(anchor, 'month', months, SEOUL));
          const totalMonths = a.y * 12 + (a.m - 1) + months;
          expect(r.y * 12 + (r.m - 1)).toBe(totalMonths);
          const lastDay = new Date(Date.UTC(Math.floor(totalMonths / 12), (totalMonths % 12) + 1, 0)).getUTCDate();
          expect(r.day).toBe(Math.min(a.day, lastDay));
        },
      ),
    );
  });

  it('property: the MOBILE window offset is 0 exactly one month after the last success, and shifts day by day', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2080-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: -20, max: 20 }),
        (last, days) => {
          const due = addInterval(last, 'month', 1, SEOUL);
          expect(mobileWindowOffsetDays(last, due)).toBe(0);
          expect(mobileWindowOffsetDays(last, new Date(due.getTime() + days * 86_400_000))).toBe(days);
        },
      ),
    );
  });

  const anchors = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2080-01-01T00:00:00Z'), noInvalidDate: true });
  const intervals: fc.Arbitrary<Interval> = fc.record({
    unit: fc.constantFrom('day' as const, 'week' as const, 'month' as const, 'year' as const),
    count: fc.integer({ min: 1, max: 12 }),
  });
  const zones = fc.constantFrom(SEOUL, 'UTC', 'America/New_York', 'Europe/Berlin');

  it('property: due dates strictly increase and cycle n is always n intervals from the anchor (no drift)', () => {
    fc.assert(
      fc.property(anchors, intervals, zones, fc.integer({ min: 0, max: 60 }), (anchor, interval, zone, n) => {
        const due = cycleDueAt(anchor, interval, n, zone);
        const next = cycleDueAt(anchor, interval, n + 1, zone);
        expect(next.getTime()).toBeGreaterThan(due.getTime());
        // Independent of how cycleDueAt computes it: the calendar position is exactly n intervals from the anchor.
        const a = DateTime.fromJSDate(anchor, { zone });
        const d = DateTime.fromJSDate(due, { zone });
        if (interval.unit === 'day' || interval.unit === 'week') {
          const days = interval.count * n * (interval.unit === 'week' ? 7 : 1);
          expect(calendarDaysBetween(anchor, due, zone)).toBe(days);
        } else {
          const months = interval.count * n * (interval.unit === 'year' ? 12 : 1);
          expect(d.year * 12 + d.month - (a.year * 12 + a.month)).toBe(months);
          expect(d.day).toBe(Math.min(a.day, d.daysInMonth!));
        }
      }),
    );
  });

  it('property: a month-end anchor lands on each month’s last day or on the anchor’s day, never earlier', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2000, max: 2080 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 36 }), (year, month, n) => {
        const anchor = DateTime.fromObject({ year, month, day: 1, hour: 9 }, { zone: SEOUL })
          .endOf('month')
          .set({ hour: 9, minute: 0, second: 0, millisecond: 0 });
        const due = DateTime.fromJSDate(cycleDueAt(anchor.toJSDate(), { unit: 'month', count: 1 }, n, SEOUL), { zone: SEOUL });
        expect(due.day).toBe(Math.min(anchor.day, due.daysInMonth!));
        expect(due.hour).toBe(9);
      }),
    );
  });

  it('property: cycleContaining(now) is the one cycle whose period [due(n), due(n+1)) holds now', () => {
    fc.assert(
      fc.property(
        anchors,
        intervals,
        zones,
        fc.integer({ min: 0, max: 5 * 366 * 86_400 }),
        fc.integer({ min: 0, max: 5 }),
        (anchor, interval, zone, seconds, from) => {
          const now = new Date(anchor.getTime() + seconds * 1000);
          const n = cycleContaining(anchor, interval, now, zone, from);
          expect(n).toBeGreaterThanOrEqual(from);
          if (n === from && cycleDueAt(anchor, interval, from, zone) > now) return; // not due yet
          expect(cycleDueAt(anchor, interval, n, zone).getTime()).toBeLessThanOrEqual(now.getTime());
          expect(cycleDueAt(anchor, interval, n + 1, zone).getTime()).toBeGreaterThan(now.getTime());
        },
      ),
    );
  });

  it('cycleContaining jumps over missed periods: 3 months of downtime charge the period containing now', () => {
    const anchor = kst('2028-01-31T10:00:00');
    const monthly = { unit: 'month' as const, count: 1 };
    expect(cycleContaining(anchor, monthly, kst('2028-02-29T09:59:59'), SEOUL, 1)).toBe(1);
    expect(cycleContaining(anchor, monthly, kst('2028-02-29T10:00:00'), SEOUL, 1)).toBe(1);
    expect(cycleContaining(anchor, monthly, kst('2028-05-30T12:00:00'), SEOUL, 1)).toBe(3);
    expect(cycleContaining(anchor, monthly, kst('2028-05-31T10:00:00'), SEOUL, 1)).toBe(4);
  });
});

describe('fixed-offset zones (the fast path)', () => {
  // The reference: Luxon in the named zone, as calendar.ts computed before it used fixed offsets.
  const named = {
    add: (anchor: Date, unit: Interval['unit'], count: number, zone: string) =>
      DateTime.fromJSDate(anchor, { zone })
        .plus({ [`${unit}s`]: count })
        .toJSDate(),
    days: (a: Date, b: Date, zone: string) =>
      Math.round(DateTime.fromJSDate(b, { zone }).startOf('day').diff(DateTime.fromJSDate(a, { zone }).startOf('day'), 'days').days),
    format: (d: Date) => DateTime.fromJSDate(d, { zone: SEOUL }).toFormat('yyyyMMddHHmmss'),
  };
  const instant = fc.date({ min: new Date(Date.UTC(1985, 0, 1)), max: new Date(Date.UTC(2110, 0, 1)), noInvalidDate: true });

  it('property: Asia/Seoul and UTC give what the named zone gives, on both sides of the years where the offset is fixed', () => {
    fc.assert(
      fc.property(
        instant,
        instant,
        fc.constantFrom<Interval['unit']>('day', 'week', 'month', 'year'),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom(SEOUL, 'UTC'),
        (a, b, unit, count, zone) => {
          expect(addInterval(a, unit, count, zone)).toEqual(named.add(a, unit, count, zone));
          expect(calendarDaysBetween(a, b, zone)).toBe(named.days(a, b, zone));
          expect(sameCalendarMonth(a, b, zone)).toBe(
            DateTime.fromJSDate(a, { zone }).toFormat('yyyyMM') === DateTime.fromJSDate(b, { zone }).toFormat('yyyyMM'),
          );
          expect(formatGatewayDateTime(a)).toBe(named.format(a));
          expect(parseGatewayDateTime(named.format(a))?.getTime()).toBe(Math.floor(a.getTime() / 1000) * 1000);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('twin: an interval added by hand is what Luxon adds in the named zone (month ends, leap days, backwards, far)', () => {
    const ends = fc.constantFrom(
      '2024-01-31T15:00:00Z',
      '2024-02-28T15:00:00Z',
      '2024-02-29T14:59:59.999Z',
      '2023-12-31T15:30:00Z',
      '1990-01-01T00:00:00Z',
      '2099-12-31T14:59:59Z',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          ends.map((iso) => new Date(iso)),
          fc.date({ min: new Date('1985-01-01T00:00:00Z'), max: new Date('2105-12-31T00:00:00Z'), noInvalidDate: true }),
        ),
        fc.constantFrom<Interval['unit']>('day', 'week', 'month', 'year'),
        fc.oneof(fc.integer({ min: -40, max: 40 }), fc.integer({ min: -1500, max: 1500 })),
        fc.constantFrom(SEOUL, 'UTC'),
        (anchor, unit, count, zone) => {
          expect(addInterval(anchor, unit, count, zone)).toEqual(named.add(anchor, unit, count, zone));
        },
      ),
      { numRuns: 20000 },
    );
  });

  it('twin: the gateway date-time read by hand is what Luxon reads in the named zone, for any 14 digits', () => {
    const luxon = (text: string) => {
      const parsed = DateTime.fromFormat(text, 'yyyyMMddHHmmss', { zone: SEOUL });
      return parsed.isValid ? parsed.toJSDate().getTime() : undefined;
    };
    const pad = (value: number, width: number) => String(value).padStart(width, '0');
    // Each field in its range and just past it (month 13, day 32, hour 24, minute and second 60, zeros), around the
    // years where Korea time is a fixed offset and its 1987-88 daylight saving time.
    const digits = fc
      .tuple(
        fc.oneof(fc.integer({ min: 1985, max: 2105 }), fc.constantFrom(0, 1, 99, 1987, 1988, 1989, 1990, 2099, 2100, 9999)),
        fc.integer({ min: 0, max: 13 }),
        fc.oneof(fc.integer({ min: 0, max: 32 }), fc.constantFrom(28, 29, 30, 31)),
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
      )
      .map(([y, mo, d, h, mi, s]) => `${pad(y, 4)}${pad(mo, 2)}${pad(d, 2)}${pad(h, 2)}${pad(mi, 2)}${pad(s, 2)}`);
    fc.assert(
      fc.property(fc.oneof(digits, fc.stringMatching(/^\d{14}$/)), (text) => {
        expect(parseGatewayDateTime(text)?.getTime()).toBe(luxon(text));
      }),
      { numRuns: 20000 },
    );
    for (const text of ['20240229235959', '20230229000000', '21000101000000', '19891231150000', '19900101000000', '00000101000000']) {
      expect(parseGatewayDateTime(text)?.getTime(), text).toBe(luxon(text));
    }
  });

  it('Korea’s daylight saving time of 1987 and New York’s every year still come from the named zone', () => {
    // 1987-05-10 02:00 KST became 03:00 KDT: one month after April 10 is 1987-05-10 at the same wall time in KDT.
    expect(addInterval(new Date('1987-04-10T12:00:00+09:00'), 'month', 1, SEOUL).toISOString()).toBe(new Date('1987-05-10T12:00:00+10:00').toISOString());
    const ny = 'America/New_York';
    expect(addInterval(new Date('2026-03-01T12:00:00-05:00'), 'month', 1, ny).toISOString()).toBe(new Date('2026-04-01T12:00:00-04:00').toISOString());
    expect(calendarDaysBetween(new Date('2026-03-07T23:30:00-05:00'), new Date('2026-03-09T00:30:00-04:00'), ny)).toBe(2);
  });
});
