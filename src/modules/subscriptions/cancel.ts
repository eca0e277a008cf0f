// Cancelling a subscription, by the merchant (POST /api/v1/subscriptions/:id/cancel), by an operator (POST
// /admin/subscriptions/:id/cancel) or by the customer in the portal: now, or at the end of the current period; and the
// customer's undo of a cancellation scheduled for the period's end ("keep").
// The database adds (prisma/functions/): the subscription's event (events.sql), a CHURN movement (mrr.sql), declined cycles' `lost` (report-rollups.sql).
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { StateConflictError } from '../../lib/errors.ts';
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

/**
 * What the customer's cancel does (docs/api.md "Subscription lifecycle"): ACTIVE runs to the end of its period; TRIALING
 * to its trial's end, never charged (the charging pass cancels it at trialEnd, its period's end, before any charge);
 * PAST_DUE and PAUSED end now, so no retry is sent after. null: nothing to do, it is CANCELED or already canceling
 * (cancelling twice acts once).
 */
export function customerCancel(row: { status: string; cancelAtPeriodEnd: boolean }): 'AT_PERIOD_END' | 'NOW' | null {
  if (row.status === 'CANCELED') return null;
  if (row.status === 'PAST_DUE' || row.status === 'PAUSED') return 'NOW';
  return row.cancelAtPeriodEnd ? null : 'AT_PERIOD_END';
}

/** The reason a customer's own cancel records. */
export const CANCELED_BY_CUSTOMER = 'CANCELED_BY_CUSTOMER';

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

  /** The customer's cancel (customerCancel says how), audited with the customer and the reason they gave, if any. */
  const cancelForCustomer = (id: string, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.cancel_by_customer' }, async (tx, row) => {
      const mode = customerCancel(row);
      if (mode === null) return 'unchanged';
      await applyCancel(tx, id, { atPeriodEnd: mode === 'AT_PERIOD_END', reason: CANCELED_BY_CUSTOMER, now: clock.now() });
    });

  /**
   * Undoes a cancellation scheduled for the period's end, while the period lasts (the charging pass ends it at the
   * boundary; after that there is nothing left to keep): 409 otherwise.
   */
  const keep = (id: string, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.keep' }, async (tx, row) => {
      const now = clock.now();
      if (row.status === 'CANCELED' || !row.cancelAtPeriodEnd || now >= row.currentPeriodEnd) {
        throw new StateConflictError('This subscription has no cancellation waiting for its period’s end');
      }
      await tx.subscription.update({ where: { id }, data: { cancelAtPeriodEnd: false, cancelReason: null, changedAt: now } });
    });

  return { cancelForMerchant, cancelForOperator, cancelForCustomer, keep };
}
