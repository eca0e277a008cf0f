// What the scheduler claims and what a charge decides from: the claim of due subscriptions under a lease (one
// statement that also reads what the one-statement prepare decides from), an operator's claim of one subscription,
// and the planner's inputs for the transactional prepare and the operator's dry run. "Due" and "lease free" are the ledger's predicates
// (ledger/subscription.queries.ts).
import { sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { countDeclines } from '../ledger/charge.outcomes.ts';
import type { PlanContext } from '../ledger/charge.rules.ts';
import { consentsMatter } from '../ledger/consent.rules.ts';
import { LIVE, type ChargeableSubscription } from '../ledger/schedule.rules.ts';
import { dueClaimSql, dueSql } from '../ledger/subscription.queries.ts';
import { leaseFreeSql, leaseFreeWhere } from '../ledger/lease.queries.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';

type Tx = Prisma.TransactionClient;

/**
 * What the planner decides from, loaded the same way for a charge and for an operator's dry run: the subscription
 * with its key, the current cycle's payment with its declines, and the consents.
 */
export async function loadChargeInputs(tx: Tx | Db, id: string, context: Omit<PlanContext, 'consents'>, known?: SubscriptionWithKey) {
  const sub = known ?? (await tx.subscription.findUnique({ where: { id }, include: { billingKey: true } }));
  if (!sub) return undefined;
  const open = await tx.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId: id, cycle: sub.cycle } } });
  const declines = open ? await countDeclines(tx, open) : 0;
  const consents = consentsMatter(sub, open ?? undefined, context.consentRequired)
    ? await tx.consent.findMany({ where: { subscriptionId: id }, select: { kind: true, obtainedAt: true } })
    : [];
  return {
    sub,
    open,
    planSub: { ...sub, billingKeyStatus: sub.billingKey.status },
    openInput: open?.dueAt ? { cycle: sub.cycle, status: open.status, amount: open.amount, dueAt: open.dueAt, declines } : undefined,
    ctx: { ...context, consents } satisfies PlanContext,
  };
}

type SubscriptionWithKey = Prisma.SubscriptionGetPayload<{ include: { billingKey: true } }>;

/**
 * What the scheduler's claim reads of each subscription it leases, for the one-statement prepare: the subscription,
 * its key and whether its cycle has a payment already.
 */
export interface ClaimedRow extends Omit<ChargeableSubscription, 'billingKeyStatus'> {
  billingKeyStatus: 'ACTIVE' | 'REVOKED';
  userId: string;
  orderName: string;
  itemCode: string | null;
  /**
   * The row's version as the claim left it (its xmin): any later write of the row changes it. Not updatedAt, which
   * the service's clock dates and a frozen simulated clock leaves equal across writes.
   */
  version: string;
  keyId: string;
  keyGateway: 'DANAL' | 'TOSS';
  customerKey: string | null;
  encryptionKeyId: string;
  keyIv: Uint8Array;
  keyTag: Uint8Array;
  keyCiphertext: Uint8Array;
  hasPayment: boolean;
}

/**
 * Each field of a ClaimedRow and the SQL that reads it (subscriptions `s`, billing keys `k`): `satisfies` makes a
 * field added to the type a compile error here until the claim reads it, so no path sees it undefined.
 */
const CLAIMED_FIELDS = {
  id: 's."id"',
  method: 's."method"::text',
  status: 's."status"::text',
  amount: 's."amount"',
  pendingAmount: 's."pendingAmount"',
  pendingAmountRequestedAt: 's."pendingAmountRequestedAt"',
  intervalUnit: 's."intervalUnit"::text',
  intervalCount: 's."intervalCount"',
  anchorAt: 's."anchorAt"',
  cycle: 's."cycle"',
  currentPeriodEnd: 's."currentPeriodEnd"',
  nextChargeAt: 's."nextChargeAt"',
  cancelAtPeriodEnd: 's."cancelAtPeriodEnd"',
  needsAttention: 's."needsAttention"',
  lastTransactionId: 's."lastTransactionId"',
  lastAmount: 's."lastAmount"',
  lastTransactionAt: 's."lastTransactionAt"',
  userId: 's."userId"',
  orderName: 's."orderName"',
  itemCode: 's."itemCode"',
  version: 's."xmin"::text',
  keyId: 'k."id"',
  keyGateway: 'k."gateway"::text',
  customerKey: 'k."customerKey"',
  billingKeyStatus: 'k."status"::text',
  encryptionKeyId: 'k."encryptionKeyId"',
  keyIv: 'k."keyIv"',
  keyTag: 'k."keyTag"',
  keyCiphertext: 'k."keyCiphertext"',
  hasPayment: 'EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = s."id" AND p."cycle" = s."cycle")',
} satisfies Record<keyof ClaimedRow, string>;

const CLAIMED_COLUMNS = Object.entries(CLAIMED_FIELDS)
  .map(([field, sql]) => `${sql} AS "${field}"`)
  .join(', ');

/**
 * Claims up to `limit` subscriptions due by `dueBy` whose lease is free at `now`, oldest due first, skipping rows
 * another replica holds (FOR UPDATE SKIP LOCKED) and the ids in `exclude`; leases them to `owner` until
 * `leaseExpiresAt` and reads each as a ClaimedRow in the same statement.
 */
export function claimDue(
  db: Db,
  input: { owner: string; leaseExpiresAt: Date; dueBy: Date; now: Date; exclude: string[]; limit: number },
): Promise<ClaimedRow[]> {
  return sqlQuery<ClaimedRow>(
    db,
    `
      UPDATE "subscriptions" s SET "leaseOwner" = $1, "leaseExpiresAt" = $2
        FROM "billing_keys" k
      WHERE k."id" = s."billingKeyId" AND s."id" IN (
        SELECT "id" FROM "subscriptions"
        WHERE ${dueClaimSql('$3')} AND ${leaseFreeSql('"leaseExpiresAt"', '$4')} AND NOT ("id" = ANY($5::uuid[]))
        ORDER BY "nextChargeAt"
        LIMIT $6::int
        FOR UPDATE SKIP LOCKED
      )
      RETURNING ${CLAIMED_COLUMNS}`,
    [input.owner, input.leaseExpiresAt, input.dueBy, input.now, input.exclude, input.limit],
  );
}

/**
 * A pass's next batch (SCHEDULER_BATCH_SIZE): the subscriptions due by `dueBy` whose lease is free now, leased to
 * `owner` for SCHEDULER_LEASE_MS, except those in `exclude`.
 */
export function claimBatch(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'>, owner: string, dueBy: Date, exclude: string[]): Promise<ClaimedRow[]> {
  const { leaseMs, batchSize } = deps.config.scheduler;
  const now = deps.clock.now();
  return claimDue(deps.db, { owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), dueBy, now, exclude, limit: batchSize });
}

/** Takes the lease on one subscription for an operator's charge; false when someone else holds it. */
export async function claimSubscription(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'>, id: string, owner: string): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await deps.db.subscription.updateMany({
    where: { id, ...leaseFreeWhere(now) },
    data: { leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + deps.config.scheduler.leaseMs) },
  });
  return claimed.count === 1;
}

/** Of `ids`, those still due by `dueBy` (one text whatever the count: one named statement, db/prisma.ts). */
export async function stillDue(db: Db, ids: string[], dueBy: Date): Promise<string[]> {
  const rows = await sqlQuery<{ id: string }>(db, `SELECT s."id" FROM "subscriptions" s WHERE s."id" = ANY($1::uuid[]) AND ${dueSql('s.', '$2', '$3')}`, [
    ids,
    dueBy,
    [...LIVE],
  ]);
  return rows.map((row) => row.id);
}
