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
  i: number;
  failedCycles: number;
  recovered: number;
  lost: number;
  recoveredAmount: number;
}

export async function buildRecoveryReport(db: Db, periods: Period[]): Promise<RecoveryMonth[]> {
  if (periods.length === 0) return [];
  const rows = await sqlQuery<Row>(
    db,
    `WITH p AS (SELECT * FROM unnest($1::timestamptz[], $2::timestamptz[]) WITH ORDINALITY AS p("start", "end", "i")),
     declined AS (
       SELECT pay."subscriptionId", pay."cycle", min(a."completedAt") AS "at"
         FROM "payments" pay JOIN "payment_attempts" a ON a."paymentId" = pay."id"
        WHERE pay."subscriptionId" IS NOT NULL AND pay."cycle" IS NOT NULL AND pay."kind" <> 'INITIAL'
          AND a."operation" = 'BILLING_CONFIRM' AND a."status" = 'DECLINED'
        GROUP BY pay."subscriptionId", pay."cycle"
       HAVING min(a."completedAt") >= $3 AND min(a."completedAt") < $4),
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
     SELECT p."i"::int AS "i", count(c."at")::int AS "failedCycles",
            count(c."paidAmount")::int AS "recovered", count(*) FILTER (WHERE c."lost")::int AS "lost",
            COALESCE(sum(c."paidAmount"), 0)::float8 AS "recoveredAmount"
       FROM p LEFT JOIN cycles c ON c."at" >= p."start" AND c."at" < p."end"
      GROUP BY p."i" ORDER BY p."i"`,
    [periods.map((p) => p.start), periods.map((p) => p.end), periods[0]!.start, periods.at(-1)!.end],
  );
  return periods.map((period, index) => {
    const row = rows[index]!;
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
