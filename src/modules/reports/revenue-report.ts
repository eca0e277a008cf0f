// GET /admin/reports/revenue (DESIGN.md §5 "Reports"): succeeded payments by the Korea date of their approval (one
// resolved later: the approval time it was resolved with; one refunded later still counts here), succeeded refunds
// (CANCEL attempts that SUCCEEDED) by the Korea date they were sent to the gateway, and refunds made outside it
// (external_refunds) by the Korea date they were recorded; net = payments − refunds. Refunds never move MRR (they are
// no subscription change). One set-based query over every period.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import type { Period } from './periods.ts';

export interface Money {
  count: number;
  amount: number;
}

export interface RevenueFigures {
  payments: Money;
  refunds: Money;
  net: number;
}

export interface RevenuePeriod extends RevenueFigures {
  period: string;
  byMethod: { CARD: RevenueFigures; MOBILE: RevenueFigures };
}

interface Row {
  period: string;
  method: 'CARD' | 'MOBILE';
  paymentCount: number;
  paymentAmount: number;
  refundCount: number;
  refundAmount: number;
}

const METHODS = ['CARD', 'MOBILE'] as const;

function figures(rows: Row[]): RevenueFigures {
  const sum = (pick: (row: Row) => number) => rows.reduce((total, row) => total + Number(pick(row)), 0);
  const payments = { count: sum((r) => r.paymentCount), amount: sum((r) => r.paymentAmount) };
  const refunds = { count: sum((r) => r.refundCount), amount: sum((r) => r.refundAmount) };
  return { payments, refunds, net: payments.amount - refunds.amount };
}

/**
 * Each row is grouped under its period, its Korea day (or month) truncated in SQL and formatted once per group, rather
 * than joined with every period by range: a range join compares each payment with each of up to 1,000 periods. The periods are
 * contiguous (each starts where the one before ends; only the last is cut at now), so one bound on the whole range
 * and the label are the same grouping. Both ranges (approvals, refunds) are read through their partial indexes
 * (migration 20261124180000_report_indexes).
 */
export async function buildRevenueReport(db: Db, periods: Period[], zone: string): Promise<RevenuePeriod[]> {
  if (periods.length === 0) return [];
  const monthly = periods[0]!.label.length === 7;
  const rows = await sqlQuery<Row>(
    db,
    `WITH moved AS (
       SELECT pay."method", pay."approvedAt" AS "at", pay."amount", 1 AS "payments", 0 AS "refunds"
         FROM "payments" pay
        WHERE pay."status" IN ('SUCCEEDED', 'CANCELED') AND pay."approvedAt" >= $1 AND pay."approvedAt" < $2
       UNION ALL
       SELECT pay."method", COALESCE(a."sentAt", a."completedAt", a."createdAt"), a."amount", 0, 1
         FROM "payment_attempts" a JOIN "payments" pay ON pay."id" = a."paymentId"
        WHERE a."operation" = 'CANCEL' AND a."status" = 'SUCCEEDED'
          AND COALESCE(a."sentAt", a."completedAt", a."createdAt") >= $1 AND COALESCE(a."sentAt", a."completedAt", a."createdAt") < $2
       UNION ALL
       SELECT pay."method", e."recordedAt", e."amount", 0, 1
         FROM "external_refunds" e JOIN "payments" pay ON pay."id" = e."paymentId"
        WHERE e."recordedAt" >= $1 AND e."recordedAt" < $2)
     SELECT to_char(g."start", $5) AS "period", g."method", g."paymentCount", g."paymentAmount", g."refundCount", g."refundAmount"
       FROM (SELECT date_trunc($4, moved."at" AT TIME ZONE $3) AS "start", moved."method",
                    sum(moved."payments")::int AS "paymentCount", COALESCE(sum(moved."amount") FILTER (WHERE moved."payments" = 1), 0)::float8 AS "paymentAmount",
                    sum(moved."refunds")::int AS "refundCount", COALESCE(sum(moved."amount") FILTER (WHERE moved."refunds" = 1), 0)::float8 AS "refundAmount"
               FROM moved
              GROUP BY 1, 2) g`,
    [periods[0]!.start, periods.at(-1)!.end, zone, monthly ? 'month' : 'day', monthly ? 'YYYY-MM' : 'YYYY-MM-DD'],
  );
  const byPeriod = new Map<string, Row[]>();
  for (const row of rows) byPeriod.set(row.period, [...(byPeriod.get(row.period) ?? []), row]);
  return periods.map((period) => {
    const mine = byPeriod.get(period.label) ?? [];
    const byMethod = Object.fromEntries(METHODS.map((method) => [method, figures(mine.filter((row) => row.method === method))])) as RevenuePeriod['byMethod'];
    return { period: period.label, ...figures(mine), byMethod };
  });
}
