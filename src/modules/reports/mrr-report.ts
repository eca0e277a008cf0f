// GET /admin/reports/mrr (docs/reconciliation.md "Revenue reports"): MRR movements by Korea calendar month, read from the movements
// ledger alone (mrr_movements, written by the database with every change that moves MRR; never the events table,
// whose rows expire), through its sums by Korea month (mrr_months, rollups.ts): what counted before the first month,
// and each month's movements; each month's starting figures are the previous month's ending, so ending = starting +
// new + expansion + reactivation − contraction − churn holds to the won by construction.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import { KOREA_ZONE } from '../../lib/calendar.ts';
import { type Period, rate } from './periods.ts';
import { splitRange } from './rollups.ts';

export interface MrrMonth {
  month: string;
  startingMrr: number;
  new: number;
  expansion: number;
  reactivation: number;
  contraction: number;
  churn: number;
  endingMrr: number;
  startingSubscriptions: number;
  endingSubscriptions: number;
  newSubscriptions: number;
  churnedSubscriptions: number;
  logoChurnRate: number | null;
  grossMrrChurnRate: number | null;
  netMrrChurnRate: number | null;
}

interface Row {
  new: number;
  expansion: number;
  reactivation: number;
  contraction: number;
  churn: number;
  newCount: number;
  reactivated: number;
  churned: number;
}

/** The kinds' figures of a range of whole Korea months, from mrr_months (their shards summed). */
const KEPT = `SELECT to_char(r."month", 'YYYY-MM') AS "month",
            COALESCE(sum(r."delta") FILTER (WHERE r."kind" = 'NEW'), 0)::float8 AS "new",
            COALESCE(sum(r."delta") FILTER (WHERE r."kind" = 'EXPANSION'), 0)::float8 AS "expansion",
            COALESCE(sum(r."delta") FILTER (WHERE r."kind" = 'REACTIVATION'), 0)::float8 AS "reactivation",
            COALESCE(-sum(r."delta") FILTER (WHERE r."kind" = 'CONTRACTION'), 0)::float8 AS "contraction",
            COALESCE(-sum(r."delta") FILTER (WHERE r."kind" = 'CHURN'), 0)::float8 AS "churn",
            COALESCE(sum(r."count") FILTER (WHERE r."kind" = 'NEW'), 0)::int AS "newCount",
            COALESCE(sum(r."count") FILTER (WHERE r."kind" = 'REACTIVATION'), 0)::int AS "reactivated",
            COALESCE(sum(r."count") FILTER (WHERE r."kind" = 'CHURN'), 0)::int AS "churned"
       FROM "mrr_months" r WHERE r."month" >= $1::date AND r."month" < $2::date`;

/** The same figures from the movements themselves, dated in [$1, $2), grouped by their month in zone $3. */
const LIVE = `SELECT to_char(date_trunc('month', m."at" AT TIME ZONE $3), 'YYYY-MM') AS "month",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'NEW'), 0)::float8 AS "new",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'EXPANSION'), 0)::float8 AS "expansion",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'REACTIVATION'), 0)::float8 AS "reactivation",
            COALESCE(-sum(m."delta") FILTER (WHERE m."kind" = 'CONTRACTION'), 0)::float8 AS "contraction",
            COALESCE(-sum(m."delta") FILTER (WHERE m."kind" = 'CHURN'), 0)::float8 AS "churn",
            count(*) FILTER (WHERE m."kind" = 'NEW')::int AS "newCount",
            count(*) FILTER (WHERE m."kind" = 'REACTIVATION')::int AS "reactivated",
            count(*) FILTER (WHERE m."kind" = 'CHURN')::int AS "churned"
       FROM "mrr_movements" m WHERE m."at" >= $1 AND m."at" < $2`;

type MonthRow = Row & { month: string };

/**
 * The movements of [start, end) by month: whole Korea months from mrr_months, the month that holds `end` (cut at
 * now) from the movements through their index. `start` null: everything before `end`.
 */
async function readMovements(db: Db, start: Date | null, end: Date, zone: string): Promise<MonthRow[]> {
  const { whole, live } = splitRange(start, end, 'month', zone);
  const [kept, recent] = await Promise.all([
    whole ? sqlQuery<MonthRow>(db, `${KEPT} GROUP BY r."month"`, [whole.from, whole.to]) : [],
    live ? sqlQuery<MonthRow>(db, `${LIVE} GROUP BY date_trunc('month', m."at" AT TIME ZONE $3)`, [live.start, live.end, zone]) : [],
  ]);
  return [...kept, ...recent];
}

/** ±1 subscription for each movement that starts or stops counting. */
const countDelta = (row: Row) => row.newCount + row.reactivated - row.churned;
const mrrDelta = (row: Row) => Number(row.new) + Number(row.expansion) + Number(row.reactivation) - Number(row.contraction) - Number(row.churn);

/** What counted before `instant`: the sum of every movement dated before it. */
export async function readMrrBefore(db: Db, instant: Date): Promise<{ mrr: number; subscriptions: number }> {
  const rows = await readMovements(db, null, instant, KOREA_ZONE);
  return { mrr: rows.reduce((sum, row) => sum + mrrDelta(row), 0), subscriptions: rows.reduce((sum, row) => sum + countDelta(row), 0) };
}

/**
 * Movements are grouped under their Korea month's label (computed in SQL) rather than joined with every month by
 * range; the months are contiguous, so one bound on the whole range and the label are the same grouping.
 */
export async function buildMrrReport(db: Db, periods: Period[], zone: string): Promise<MrrMonth[]> {
  const first = periods[0];
  if (!first) return [];
  const [base, found] = await Promise.all([readMrrBefore(db, first.start), readMovements(db, first.start, periods.at(-1)!.end, zone)]);
  const none: Row = { new: 0, expansion: 0, reactivation: 0, contraction: 0, churn: 0, newCount: 0, reactivated: 0, churned: 0 };
  const rows = periods.map((period) => {
    const mine = found.filter((row) => row.month === period.label);
    const sum = (key: keyof Row) => mine.reduce((total, row) => total + Number(row[key]), 0);
    if (mine.length === 0) return none;
    return Object.fromEntries(Object.keys(none).map((key) => [key, sum(key as keyof Row)])) as unknown as Row;
  });
  let mrr = base.mrr;
  let subscriptions = base.subscriptions;
  return periods.map((period, index) => {
    const row = rows[index]!;
    const moved = {
      new: Number(row.new),
      expansion: Number(row.expansion),
      reactivation: Number(row.reactivation),
      contraction: Number(row.contraction),
      churn: Number(row.churn),
    };
    const startingMrr = mrr;
    const startingSubscriptions = subscriptions;
    mrr = startingMrr + moved.new + moved.expansion + moved.reactivation - moved.contraction - moved.churn;
    subscriptions = startingSubscriptions + row.newCount + row.reactivated - row.churned;
    return {
      month: period.label,
      startingMrr,
      ...moved,
      endingMrr: mrr,
      startingSubscriptions,
      endingSubscriptions: subscriptions,
      newSubscriptions: row.newCount,
      churnedSubscriptions: row.churned,
      logoChurnRate: rate(row.churned, startingSubscriptions),
      grossMrrChurnRate: rate(moved.churn + moved.contraction, startingMrr),
      netMrrChurnRate: rate(moved.churn + moved.contraction - moved.expansion - moved.reactivation, startingMrr),
    };
  });
}
