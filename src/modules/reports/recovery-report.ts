// GET /admin/reports/recovery (DESIGN.md §5 "Reports"): a recurring cycle whose charge was declined at least once
// counts in the Korea month of its first decline; it is `recovered` once a payment of that cycle succeeded (a retry,
// an operator's charge, a new payment method), `lost` when its subscription was cancelled or its MOBILE window
// closed without a success, `open` otherwise. One set-based query over every month.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import { type Period, rate } from './periods.ts';

export interface RecoveryMonth {
  month: string;
  failedCycles: number;
  recovered: number;
  lost: number;
  open: number;
  recoveryRate: number | null;
  recoveredAmount: number;
}

interface Row {
  month: string;
  failedCycles: number;
  recovered: number;
  lost: number;
  recoveredAmount: number;
}

/**
 * Cycles are grouped under the Korea month of their first decline (computed in SQL) rather than joined with every
 * month by range; the months are contiguous, so one bound on the whole range and the label are the same grouping.
 * Declines are read through their partial index (migration 20261124180000_report_indexes), never by scanning attempts.
 */
export async function buildRecoveryReport(db: Db, periods: Period[], zone: string): Promise<RecoveryMonth[]> {
  if (periods.length === 0) return [];
  const found = await sqlQuery<Row>(
    db,
    `WITH declined AS (
       SELECT pay."subscriptionId", pay."cycle", min(a."completedAt") AS "at"
         FROM "payments" pay JOIN "payment_attempts" a ON a."paymentId" = pay."id"
        WHERE pay."subscriptionId" IS NOT NULL AND pay."cycle" IS NOT NULL AND pay."kind" <> 'INITIAL'
          AND a."operation" = 'BILLING_CONFIRM' AND a."status" = 'DECLINED' AND a."completedAt" < $2
        GROUP BY pay."subscriptionId", pay."cycle"
       HAVING min(a."completedAt") >= $1),
     paid AS (
       SELECT pay."subscriptionId", pay."cycle", sum(pay."amount") AS "amount"
         FROM "payments" pay JOIN declined d ON d."subscriptionId" = pay."subscriptionId" AND d."cycle" = pay."cycle"
        WHERE pay."status" IN ('SUCCEEDED', 'CANCELED') AND pay."approvedAt" IS NOT NULL
        GROUP BY pay."subscriptionId", pay."cycle"),
     cycles AS (
       SELECT d."at", paid."amount" AS "paidAmount",
              paid."amount" IS NULL AND (s."status" = 'CANCELED' OR (s."attentionReason" = 'MOBILE_WINDOW_CLOSED' AND s."cycle" = d."cycle")) AS "lost"
         FROM declined d JOIN "subscriptions" s ON s."id" = d."subscriptionId"
         LEFT JOIN paid ON paid."subscriptionId" = d."subscriptionId" AND paid."cycle" = d."cycle")
     SELECT to_char(date_trunc('month', c."at" AT TIME ZONE $3), 'YYYY-MM') AS "month", count(*)::int AS "failedCycles",
            count(c."paidAmount")::int AS "recovered", count(*) FILTER (WHERE c."lost")::int AS "lost",
            COALESCE(sum(c."paidAmount"), 0)::float8 AS "recoveredAmount"
       FROM cycles c
      GROUP BY date_trunc('month', c."at" AT TIME ZONE $3)`,
    [periods[0]!.start, periods.at(-1)!.end, zone],
  );
  const byMonth = new Map(found.map((row) => [row.month, row]));
  return periods.map((period) => {
    const row = byMonth.get(period.label) ?? { failedCycles: 0, recovered: 0, lost: 0, recoveredAmount: 0 };
    const recoveredAmount = Number(row.recoveredAmount);
    return {
      month: period.label,
      failedCycles: row.failedCycles,
      recovered: row.recovered,
      lost: row.lost,
      open: row.failedCycles - row.recovered - row.lost,
      recoveryRate: rate(row.recovered, row.failedCycles),
      recoveredAmount,
    };
  });
}
