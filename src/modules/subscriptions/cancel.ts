// Cancelling a subscription, by the merchant (POST /api/v1/subscriptions/:id/cancel) or by an operator (POST
// /admin/subscriptions/:id/cancel): now, or at the end of the current period.
// The database adds (prisma/functions/): the subscription's event (events.sql), a CHURN movement (mrr.sql), declined cycles' `lost` (report-rollups.sql).
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { SUBSCRIPTION_TRANSITIONS, transitionSubscription } from '../ledger/subscription.state.ts';
import type { Actor } from '../audit/audit.ts';
import { changeSubscription } from './audited-change.ts';
import { readSubscription } from './subscriptions.read.ts';

type Tx = Prisma.TransactionClient;

/**
 * Cancels now (no further charge; the billing key is revoked on our side, since the gateway documents no
 * termination call) or at the end of the current period (charging stops at the boundary). Shared by the merchant
 * API and the admin route, which adds its audit event in the same transaction.
 */
export async function applyCancel(tx: Tx, id: string, options: { atPeriodEnd: boolean; reason: string; now: Date }): Promise<void> {
  if (options.atPeriodEnd) {
    const updated = await tx.subscription.updateMany({
      // Any state a cancel may leave: the cancel itself happens at the period's end (the charging pass).
      where: { id, status: { in: [...SUBSCRIPTION_TRANSITIONS.cancel.from] } },
      // changedAt: the request is a change of the subscription's terms, and its churn is never dated before it
      // (periodEndCancelAt: a PAST_DUE subscription's period has already ended when it is asked).
      data: { cancelAtPeriodEnd: true, cancelReason: options.reason, changedAt: options.now },
    });
    if (updated.count === 0) await transitionSubscription(tx, id, 'cancel', { changedAt: options.now });
    return;
  }
  await transitionSubscription(tx, id, 'cancel', { canceledAt: options.now, nextChargeAt: null, cancelReason: options.reason, changedAt: options.now });
  const row = await tx.subscription.findUniqueOrThrow({ where: { id } });
  await revokeBillingKey(tx, row.billingKeyId, options.now);
}

export function createCancel(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /** The merchant's cancel (reason CANCELED_BY_MERCHANT unless it gives one); answers the subscription. */
  async function cancelForMerchant(id: string, options: { atPeriodEnd: boolean; reason?: string }) {
    await readSubscription(db, id);
    await db.$transaction((tx) =>
      applyCancel(tx, id, { atPeriodEnd: options.atPeriodEnd, reason: options.reason ?? 'CANCELED_BY_MERCHANT', now: clock.now() }),
    );
    return readSubscription(db, id);
  }

  /** An operator's cancel, audited with the operator and the reason. */
  const cancelForOperator = (id: string, options: { atPeriodEnd: boolean }, who: Actor) =>
    changeSubscription(db, id, { ...who, action: options.atPeriodEnd ? 'subscription.cancel_at_period_end' : 'subscription.cancel' }, (tx) =>
      applyCancel(tx, id, { atPeriodEnd: options.atPeriodEnd, reason: 'CANCELED_BY_OPERATOR', now: clock.now() }),
    );

  return { cancelForMerchant, cancelForOperator };
}
