// A subscription's MRR (docs/reconciliation.md "Revenue reports"): its amount per month — `month` amount / count, `year` amount /
// (12 × count), `week` amount × 52 / (12 × count), `day` amount × 365 / (12 × count) — rounded half up to a whole won
// per subscription, counted only while ACTIVE or PAST_DUE. The database's twin is subscription_mrr() in
// prisma/functions/mrr.sql, whose trigger dates every movement; test/modules/reports/mrr.test.ts
// compares the two on the migrated database.
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';

export type IntervalUnit = 'day' | 'week' | 'month' | 'year';

/** The statuses whose subscriptions count in MRR. */
export const COUNTING: readonly string[] = ['ACTIVE', 'PAST_DUE'];

export interface MrrTerms {
  status: string;
  amount: number;
  intervalUnit: IntervalUnit;
  intervalCount: number;
}

/** round(n / d) half up, in integers: (2n + d) div 2d. */
function roundHalfUp(n: number, d: number): number {
  return Math.floor((2 * n + d) / (2 * d));
}

export function subscriptionMrr(terms: MrrTerms): number {
  if (!COUNTING.includes(terms.status)) return 0;
  const { amount, intervalCount: count } = terms;
  switch (terms.intervalUnit) {
    case 'month':
      return roundHalfUp(amount, count);
    case 'year':
      return roundHalfUp(amount, 12 * count);
    case 'week':
      return roundHalfUp(amount * 52, 12 * count);
    case 'day':
      return roundHalfUp(amount * 365, 12 * count);
  }
}

/** The MRR now and the subscriptions counting in it, from the subscriptions themselves (the metrics' gauges). */
export async function readCurrentMrr(db: Db): Promise<{ mrr: number; subscriptions: number }> {
  const [row] = await sqlQuery<{ mrr: number; subscriptions: number }>(
    db,
    `SELECT COALESCE(sum("subscription_mrr"("status", "amount", "intervalUnit", "intervalCount")), 0)::bigint::float8 AS "mrr",
            count(*)::int AS "subscriptions"
       FROM "subscriptions" WHERE "status" IN ('ACTIVE', 'PAST_DUE')`,
    [],
  );
  return { mrr: Number(row?.mrr ?? 0), subscriptions: row?.subscriptions ?? 0 };
}
