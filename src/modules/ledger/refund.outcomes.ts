// What a refund's success writes on its payment, once for every way it is learned (docs/architecture.md, invariant 14): the gateway's live answer
// (payments/refund-payment.ts refund), an operator's cancel/resolve, and a settlement file's cancel line (which calls
// that resolve). The one writer of canceledAmount.
// A withdrawn subscription's refund due follows (refund-due.ts).
// The database adds (prisma/functions/): the payment.canceled event (events.sql), a settlement queue row when its status moves (settlement-queue.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { transitionPayment } from './payment.state.ts';
import { settleRefundDue } from './refund-due.ts';

/**
 * A refund of `amount` succeeded at `at`: counted on the payment (an increment, so two writers cannot lose each
 * other's refund), which is CANCELED once nothing remains (payment.state.ts's `refund`).
 */
export async function applyRefundSuccess(tx: Prisma.TransactionClient, paymentId: string, amount: number, at: Date): Promise<void> {
  const updated = await tx.payment.update({ where: { id: paymentId }, data: { canceledAmount: { increment: amount }, canceledAt: at } });
  if (updated.canceledAmount === updated.amount) await transitionPayment(tx, paymentId, 'refund');
  if (updated.subscriptionId) await settleRefundDue(tx, updated.subscriptionId);
}
