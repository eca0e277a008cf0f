import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addInterval,
  calendarDaysBetween,
  formatGatewayDateTime,
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
});
