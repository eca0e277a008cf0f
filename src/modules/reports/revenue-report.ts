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
  i: number;
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

export async function buildRevenueReport(db: Db, periods: Period[]): Promise<RevenuePeriod[]> {
  if (periods.length === 0) return [];
  const rows = await sqlQuery<Row>(
    db,
    `WITH p AS (SELECT * FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS p("start", "end", "i")),
     moved AS (
       SELECT pay."method", pay."approvedAt" AS "at", pay."amount", 1 AS "payments", 0 AS "refunds"
         FROM "payments" pay
        WHERE pay."status" IN ('SUCCEEDED', 'CANCELED') AND pay."approvedAt" >= $3 AND pay."approvedAt" < $4
       UNION ALL
       SELECT pay."method", COALESCE(a."sentAt", a."completedAt", a."createdAt"), a."amount", 0, 1
         FROM "payment_attempts" a JOIN "payments" pay ON pay."id" = a."paymentId"
        WHERE a."operation" = 'CANCEL' AND a."status" = 'SUCCEEDED'
          AND COALESCE(a."sentAt", a."completedAt", a."createdAt") >= $3 AND COALESCE(a."sentAt", a."completedAt", a."createdAt") < $4
       UNION ALL
       SELECT pay."method", e."recordedAt", e."amount", 0, 1
         FROM "external_refunds" e JOIN "payments" pay ON pay."id" = e."paymentId"
        WHERE e."recordedAt" >= $3 AND e."recordedAt" < $4)
     SELECT p."i"::int AS "i", moved."method",
            sum(moved."payments")::int AS "paymentCount", COALESCE(sum(moved."amount") FILTER (WHERE moved."payments" = 1), 0)::float8 AS "paymentAmount",
            sum(moved."refunds")::int AS "refundCount", COALESCE(sum(moved."amount") FILTER (WHERE moved."refunds" = 1), 0)::float8 AS "refundAmount"
       FROM moved JOIN p ON moved."at" >= p."start" AND moved."at" < p."end"
      GROUP BY p."i", moved."method"`,
    [periods.map((p) => p.start), periods.map((p) => p.end), periods[0]!.start, periods.at(-1)!.end],
  );
  return periods.map((period, index) => {
    const mine = rows.filter((row) => row.i === index + 1);
    const byMethod = Object.fromEntries(METHODS.map((method) => [method, figures(mine.filter((row) => row.method === method))])) as RevenuePeriod['byMethod'];
    return { period: period.label, ...figures(mine), byMethod };
  });
}
