// Subscription states and the moves between them (docs/architecture.md "Domain model"), as data. This is the only code that writes
// subscriptions.status through Prisma (test/architecture.test.ts checks it; the one-statement charge record,
// payments/charge.record.ts, renders `recover` in SQL); a move fails with STATE_CONFLICT on a stale state
// (state-moves.ts). The database adds to a move, in its transaction, whoever writes it (prisma/functions/): the merchant
// event (events.sql), an MRR movement (mrr.sql), its declined cycles' `lost` in the roll-ups (report-rollups.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { applyMove } from './state-moves.ts';

export type SubscriptionStatus = 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'PAUSED' | 'CANCELED';

export const SUBSCRIPTION_TRANSITIONS = {
  /** A declined charge (a trial's conversion included). */
  decline: { from: ['ACTIVE', 'TRIALING', 'PAST_DUE'], to: 'PAST_DUE' },
  /** A successful charge (a trial converted). */
  recover: { from: ['ACTIVE', 'TRIALING', 'PAST_DUE'], to: 'ACTIVE' },
  pause: { from: ['ACTIVE', 'PAST_DUE'], to: 'PAUSED' },
  resume: { from: ['PAUSED'], to: 'ACTIVE' },
  cancel: { from: ['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED'], to: 'CANCELED' },
} as const satisfies Record<string, { from: readonly SubscriptionStatus[]; to: SubscriptionStatus }>;

export type SubscriptionTransition = keyof typeof SUBSCRIPTION_TRANSITIONS;

/**
 * The service's clock at a write of status or terms: the time of the MRR movement the database records for it
 * (record_mrr_movement, prisma/functions/mrr.sql). Every move and creation carries it; so does every other write
 * of amount or interval.
 */
export interface ChangedAt {
  changedAt: Date;
}

/** A new subscription starts ACTIVE, or TRIALING for a trial: the only other write of a subscription's status. */
export function createSubscription(
  tx: Prisma.TransactionClient,
  initial: 'ACTIVE' | 'TRIALING',
  data: Omit<Prisma.SubscriptionUncheckedCreateInput, 'status' | 'changedAt'> & ChangedAt,
) {
  return tx.subscription.create({ data: { ...data, status: initial } });
}

export async function transitionSubscription(
  tx: Prisma.TransactionClient,
  id: string,
  transition: SubscriptionTransition,
  data: Omit<Prisma.SubscriptionUpdateManyMutationInput, 'changedAt'> & ChangedAt,
): Promise<void> {
  await applyMove(
    'Subscription',
    transition,
    SUBSCRIPTION_TRANSITIONS[transition],
    (from, to) => tx.subscription.updateMany({ where: { id, status: { in: from } }, data: { ...data, status: to } }),
    () => tx.subscription.findUnique({ where: { id }, select: { status: true } }),
  );
}
