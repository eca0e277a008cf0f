// GET /admin/reports/recovery (docs/reconciliation.md "Revenue reports"): a recurring cycle whose charge was declined at least once
// counts in the Korea month of its first decline; it is `recovered` once a payment of that cycle succeeded (a retry,
// an operator's charge, a new payment method), `lost` when its subscription was cancelled or its MOBILE window
// closed without a success, `open` otherwise.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import { type Period, rate } from './periods.ts';
import { splitRange } from './rollups.ts';

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

/** Whole Korea months, from recovery_months (their shards summed). */
const KEPT = `SELECT to_char(r."month", 'YYYY-MM') AS "month", sum(r."failedCycles")::int AS "failedCycles", sum(r."recovered")::int AS "recovered",
                     sum(r."lost")::int AS "lost", sum(r."recoveredAmount")::float8 AS "recoveredAmount"
                FROM "recovery_months" r WHERE r."month" >= $1::date AND r."month" < $2::date
               GROUP BY r."month"`;

/** The cycles first declined in [$1, $2), grouped by the month in zone $3, from their rows (through their index). */
const LIVE = `SELECT to_char(date_trunc('month', c."firstDeclineAt" AT TIME ZONE $3), 'YYYY-MM') AS "month", count(*)::int AS "failedCycles",
                     count(c."paidAmount")::int AS "recovered", count(*) FILTER (WHERE c."lost")::int AS "lost",
                     COALESCE(sum(c."paidAmount"), 0)::float8 AS "recoveredAmount"
                FROM "recovery_cycles" c WHERE c."firstDeclineAt" >= $1 AND c."firstDeclineAt" < $2
               GROUP BY date_trunc('month', c."firstDeclineAt" AT TIME ZONE $3)`;

/**
 * Reads what the database keeps with every attempt, payment and subscription change (prisma/functions/
 * report-rollups.sql): one row per declined recurring cycle (recovery_cycles: its first decline, what was
 * paid for it, whether it is lost by its subscription now) and their sums by Korea month (recovery_months). Whole
 * months come from the sums, the month that holds now (cut at now) from the cycles' rows (rollups.ts).
 */
export async function buildRecoveryReport(db: Db, periods: Period[], zone: string): Promise<RecoveryMonth[]> {
  if (periods.length === 0) return [];
  const { whole, live } = splitRange(periods[0]!.start, periods.at(-1)!.end, 'month', zone);
  const [kept, recent] = await Promise.all([
    whole ? sqlQuery<Row>(db, KEPT, [whole.from, whole.to]) : [],
    live ? sqlQuery<Row>(db, LIVE, [live.start, live.end, zone]) : [],
  ]);
  // A month is read from one side only: the sums hold whole months before the cut, the rows the rest.
  const found = [...kept, ...recent];
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
