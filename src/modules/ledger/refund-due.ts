// What a withdrawn subscription still owes its customer (docs/api.md "Subscription lifecycle", withdrawal): every
// succeeded payment is refunded in full, through the gateway where it still cancels, else outside it (a MOBILE payment
// after its Korean month, record-external-refund.ts). Until nothing remains the subscription is under attention
// WITHDRAWAL_REFUND_DUE with `refundDue`, the amount still owed; any refund's success (ledger/refund.outcomes.ts, the one
// writer of canceledAmount: gateway, resolved, external) counts here, so the attention clears when the last one lands.
import type { Prisma } from '../../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

export const WITHDRAWAL_REFUND_DUE = 'WITHDRAWAL_REFUND_DUE';

/**
 * What the subscription's payments still owe the customer: what remains of each SUCCEEDED one (a CANCELED one is
 * refunded in full). A payment of unknown outcome is not counted (unknown is never guessed; it has its own attention).
 */
async function owedToCustomer(tx: Tx, subscriptionId: string): Promise<number> {
  const rows = await tx.payment.findMany({ where: { subscriptionId, status: 'SUCCEEDED' }, select: { amount: true, canceledAmount: true } });
  return rows.reduce((sum, row) => sum + row.amount - row.canceledAmount, 0);
}

/**
 * Raises the withdrawal's attention with everything owed, in the transaction that cancels the subscription and before
 * any refund is sent: a process that dies between the refunds leaves the amount in sight, never a silent debt.
 */
export async function raiseRefundDue(tx: Tx, subscriptionId: string): Promise<void> {
  const due = await owedToCustomer(tx, subscriptionId);
  if (due > 0)
    await tx.subscription.update({ where: { id: subscriptionId }, data: { needsAttention: true, attentionReason: WITHDRAWAL_REFUND_DUE, refundDue: due } });
}

/**
 * After a refund's success on one of its payments: a subscription owing a withdrawal's refund owes what remains, and
 * its attention clears at zero. The subscription's row is locked first, so two refunds of two of its payments
 * committing at once each count the other's (the second reads after the first commits).
 */
export async function settleRefundDue(tx: Tx, subscriptionId: string): Promise<void> {
  const owing = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT "id" FROM "subscriptions" WHERE "id" = ${subscriptionId}::uuid AND "attentionReason" = ${WITHDRAWAL_REFUND_DUE} FOR UPDATE`;
  if (owing.length === 0) return;
  const due = await owedToCustomer(tx, subscriptionId);
  const settled = due === 0;
  await tx.subscription.update({
    where: { id: subscriptionId },
    data: { refundDue: settled ? null : due, needsAttention: settled ? false : undefined, attentionReason: settled ? null : undefined },
  });
}
