// GET /admin/reports/recovery (DESIGN.md §5 "Reports"): a recurring cycle whose charge was declined at least once
// counts in the Korea month of its first decline; it is `recovered` once a payment of that cycle succeeded (a retry,
// an operator's charge, a new payment method), `lost` when its subscription was cancelled or its MOBILE window
// closed without a success, `open` otherwise. One set-based query over every month, of the declined cycles kept
// by the database (recovery_cycles).
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
 * Reads recovery_cycles (one row per declined recurring cycle: its first decline and what was paid for it, kept by
 * the database with every attempt and payment; migration 20261124210000_report_rollups) through its index on the
 * first decline, grouped under the Korea month's label (the months are contiguous: one bound on the whole range).
 * Whether an unpaid cycle is lost depends on its subscription now, so only those look it up, by primary key.
 */
export async function buildRecoveryReport(db: Db, periods: Period[], zone: string): Promise<RecoveryMonth[]> {
  if (periods.length === 0) return [];
  const found = await sqlQuery<Row>(
    db,
    `SELECT to_char(date_trunc('month', c."firstDeclineAt" AT TIME ZONE $3), 'YYYY-MM') AS "month", count(*)::int AS "failedCycles",
            count(c."paidAmount")::int AS "recovered",
            count(*) FILTER (WHERE c."paidAmount" IS NULL AND EXISTS (
              SELECT 1 FROM "subscriptions" s
               WHERE s."id" = c."subscriptionId"
                 AND (s."status" = 'CANCELED' OR (s."attentionReason" = 'MOBILE_WINDOW_CLOSED' AND s."cycle" = c."cycle"))))::int AS "lost",
            COALESCE(sum(c."paidAmount"), 0)::float8 AS "recoveredAmount"
       FROM "recovery_cycles" c
      WHERE c."firstDeclineAt" >= $1 AND c."firstDeclineAt" < $2
      GROUP BY date_trunc('month', c."firstDeclineAt" AT TIME ZONE $3)`,
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
