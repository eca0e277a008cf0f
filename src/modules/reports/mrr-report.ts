// GET /admin/reports/mrr (DESIGN.md §5 "Reports"): MRR movements by Korea calendar month, read from the movements
// ledger alone (mrr_movements, written by the database with every change that moves MRR; never the events table,
// whose rows expire). One set-based query: what counted before the first month, and each month's movements; each
// month's starting figures are the previous month's ending, so ending = starting + new + expansion + reactivation −
// contraction − churn holds to the won by construction.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import { type Period, rate } from './periods.ts';

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

/** ±1 subscription for each movement that starts or stops counting. */
const COUNT_DELTA = `CASE m."kind" WHEN 'NEW' THEN 1 WHEN 'REACTIVATION' THEN 1 WHEN 'CHURN' THEN -1 ELSE 0 END`;

/** What counted before `instant`: the sum of every movement dated before it. */
export async function readMrrBefore(db: Db, instant: Date): Promise<{ mrr: number; subscriptions: number }> {
  const [row] = await sqlQuery<{ mrr: number; subscriptions: number }>(
    db,
    `SELECT COALESCE(sum(m."delta"), 0)::float8 AS "mrr", COALESCE(sum(${COUNT_DELTA}), 0)::int AS "subscriptions"
       FROM "mrr_movements" m WHERE m."at" < $1`,
    [instant],
  );
  return { mrr: Number(row?.mrr ?? 0), subscriptions: row?.subscriptions ?? 0 };
}

/**
 * Movements are grouped under their Korea month's label (computed in SQL) rather than joined with every month by
 * range; the months are contiguous, so one bound on the whole range and the label are the same grouping.
 */
export async function buildMrrReport(db: Db, periods: Period[], zone: string): Promise<MrrMonth[]> {
  const first = periods[0];
  if (!first) return [];
  const base = await readMrrBefore(db, first.start);
  const found = await sqlQuery<Row & { month: string }>(
    db,
    `SELECT to_char(date_trunc('month', m."at" AT TIME ZONE $3), 'YYYY-MM') AS "month",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'NEW'), 0)::float8 AS "new",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'EXPANSION'), 0)::float8 AS "expansion",
            COALESCE(sum(m."delta") FILTER (WHERE m."kind" = 'REACTIVATION'), 0)::float8 AS "reactivation",
            COALESCE(-sum(m."delta") FILTER (WHERE m."kind" = 'CONTRACTION'), 0)::float8 AS "contraction",
            COALESCE(-sum(m."delta") FILTER (WHERE m."kind" = 'CHURN'), 0)::float8 AS "churn",
            count(*) FILTER (WHERE m."kind" = 'NEW')::int AS "newCount",
            count(*) FILTER (WHERE m."kind" = 'REACTIVATION')::int AS "reactivated",
            count(*) FILTER (WHERE m."kind" = 'CHURN')::int AS "churned"
       FROM "mrr_movements" m WHERE m."at" >= $1 AND m."at" < $2
      GROUP BY date_trunc('month', m."at" AT TIME ZONE $3)`,
    [first.start, periods.at(-1)!.end, zone],
  );
  const none: Row = { new: 0, expansion: 0, reactivation: 0, contraction: 0, churn: 0, newCount: 0, reactivated: 0, churned: 0 };
  const byMonth = new Map(found.map((row) => [row.month, row]));
  const rows = periods.map((period) => byMonth.get(period.label) ?? none);
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
