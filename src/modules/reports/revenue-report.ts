// GET /admin/reports/revenue (docs/reconciliation.md "Revenue reports"): succeeded payments by the Korea date of their approval (one
// resolved later: the approval time it was resolved with; one refunded later still counts here), succeeded refunds
// (CANCEL attempts that SUCCEEDED) by the Korea date they were sent to the gateway, and refunds made outside it
// (external_refunds) by the Korea date they were recorded; net = payments − refunds. Refunds never move MRR (they are
// no subscription change). Each period's figures are split twice, by method and by gateway (a refund's are its
// payment's), each split summing to the period's. Read from the pre-aggregated days (rollups.ts).
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import type { Period } from './periods.ts';
import { splitRange } from './rollups.ts';

export interface Money {
  count: number;
  amount: number;
}

export interface RevenueFigures {
  payments: Money;
  refunds: Money;
  net: number;
}

const METHODS = ['CARD', 'MOBILE'] as const;
const GATEWAYS = ['DANAL', 'TOSS'] as const;

export interface RevenuePeriod extends RevenueFigures {
  period: string;
  byMethod: Record<(typeof METHODS)[number], RevenueFigures>;
  byGateway: Record<(typeof GATEWAYS)[number], RevenueFigures>;
}

interface Row {
  period: string;
  method: (typeof METHODS)[number];
  gateway: (typeof GATEWAYS)[number];
  paymentCount: number;
  paymentAmount: number;
  refundCount: number;
  refundAmount: number;
}

function figures(rows: Row[]): RevenueFigures {
  const sum = (pick: (row: Row) => number) => rows.reduce((total, row) => total + Number(pick(row)), 0);
  const payments = { count: sum((r) => r.paymentCount), amount: sum((r) => r.paymentAmount) };
  const refunds = { count: sum((r) => r.refundCount), amount: sum((r) => r.refundAmount) };
  return { payments, refunds, net: payments.amount - refunds.amount };
}

/** The rows' figures for each key (every key present: zeros when it has no row). */
function split<K extends string>(rows: Row[], keys: readonly K[], keyOf: (row: Row) => string): Record<K, RevenueFigures> {
  return Object.fromEntries(keys.map((key) => [key, figures(rows.filter((row) => keyOf(row) === key))])) as Record<K, RevenueFigures>;
}

/**
 * Whole Korea days come from revenue_days (their shards summed), the day that holds now from the raw rows
 * (revenue_lines: the same rules, through the report indexes, over one day at most); the two sets of rows are added
 * by period, method and gateway. Rows are grouped under their period's label (a day, or its month) rather than joined with
 * every period by range: the periods are contiguous (each starts where the one before ends; only the last is cut at
 * now), so one bound on the whole range and the label are the same grouping.
 */
export async function buildRevenueReport(db: Db, periods: Period[], zone: string): Promise<RevenuePeriod[]> {
  if (periods.length === 0) return [];
  const monthly = periods[0]!.label.length === 7;
  const label = monthly ? 'YYYY-MM' : 'YYYY-MM-DD';
  const { whole, live } = splitRange(periods[0]!.start, periods.at(-1)!.end, 'day', zone);
  const [kept, recent] = await Promise.all([
    whole
      ? sqlQuery<Row>(
          db,
          `SELECT to_char(r."day", $3) AS "period", r."method", r."gateway",
                  sum(r."paymentCount")::int AS "paymentCount", sum(r."paymentAmount")::float8 AS "paymentAmount",
                  sum(r."refundCount")::int AS "refundCount", sum(r."refundAmount")::float8 AS "refundAmount"
             FROM "revenue_days" r WHERE r."day" >= $1::date AND r."day" < $2::date
            GROUP BY 1, 2, 3`,
          [whole.from, whole.to, label],
        )
      : [],
    live
      ? sqlQuery<Row>(
          db,
          `SELECT to_char(date_trunc($4, l."at" AT TIME ZONE $3), $5) AS "period", l."method", l."gateway",
                  sum(l."paymentCount")::int AS "paymentCount", sum(l."paymentAmount")::float8 AS "paymentAmount",
                  sum(l."refundCount")::int AS "refundCount", sum(l."refundAmount")::float8 AS "refundAmount"
             FROM "revenue_lines"($1, $2) l
            GROUP BY 1, 2, 3`,
          [live.start, live.end, zone, monthly ? 'month' : 'day', label],
        )
      : [],
  ]);
  const byPeriod = new Map<string, Row[]>();
  for (const row of [...kept, ...recent]) byPeriod.set(row.period, [...(byPeriod.get(row.period) ?? []), row]);
  return periods.map((period) => {
    const mine = byPeriod.get(period.label) ?? [];
    return {
      period: period.label,
      ...figures(mine),
      byMethod: split(mine, METHODS, (row) => row.method),
      byGateway: split(mine, GATEWAYS, (row) => row.gateway),
    };
  });
}
