// The subscription predicates every reader and writer shares, each named once with its Prisma and SQL forms side by
// side (like lib/pagination.ts): a subscription is due (and releasing the lease we hold on one).
// test/modules/ledger/subscription.queries.test.ts checks each SQL form against its Prisma form on the migrated
// database.
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { LIVE } from './schedule.rules.ts';

type Tx = Prisma.TransactionClient;

/** Due by `dueBy`: live (LIVE), not waiting for an operator, and its next charge at or before `dueBy`. */
export const dueWhere = (dueBy: Date) =>
  ({ status: { in: [...LIVE] }, needsAttention: false, nextChargeAt: { lte: dueBy } }) satisfies Prisma.SubscriptionWhereInput;
/**
 * dueWhere in SQL over alias `s`, `dueBy` and `live` parameters (live = [...LIVE]). The claim spells LIVE as a literal
 * list instead (dueClaimSql, below) so that the partial index subscriptions_due_claim_idx serves it.
 */
export const dueSql = (s: string, dueBy: string, live: string) =>
  `${s}"status"::text = ANY(${live}::text[]) AND ${s}"needsAttention" = false AND ${s}"nextChargeAt" <= ${dueBy}`;
/** dueWhere with LIVE as literals, the partial index's own predicate (checked against the index in the test). */
export const dueClaimSql = (dueBy: string) =>
  `"status" IN (${LIVE.map((status) => `'${status}'`).join(', ')}) AND "needsAttention" = false AND "nextChargeAt" <= ${dueBy}`;

/**
 * Releases our lease on a subscription, raising it for an operator when `attention` names why; false when the lease
 * was no longer ours. Status moves go through subscription.state.ts before it.
 */
export async function releaseSubscription(tx: Tx | Db, id: string, owner: string, attention?: string) {
  const released = await tx.subscription.updateMany({
    where: { id, leaseOwner: owner },
    data: { leaseOwner: null, leaseExpiresAt: null, needsAttention: attention ? true : undefined, attentionReason: attention },
  });
  return released.count === 1;
}
