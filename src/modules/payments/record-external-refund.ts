// Refunds made outside the gateway (docs/reconciliation.md "Reconciling with the gateway", POST /admin/payments/:id/refunds/external): a MOBILE payment after
// its calendar month cannot be cancelled at the gateway, so the merchant pays the customer back by bank transfer and
// an operator records it here. No gateway call is made: the refund is SUCCEEDED when recorded, and counts on the
// payment through the same write as a gateway refund's success (ledger/refund.outcomes.ts: canceledAmount, CANCELED
// when nothing remains, and so the payment.canceled event). Reconciliation expects no gateway line for it.
// The database adds (prisma/functions/): the refund in the payment event (events.sql), its roll-up (report-rollups.sql), the no-edit guard (guards.sql).
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { lockAttempts } from '../ledger/attempts.ts';
import { RefundRefusedError } from '../ledger/payment.errors.ts';
import { PAID_STATUSES } from '../ledger/payment.state.ts';
import { applyRefundSuccess } from '../ledger/refund.outcomes.ts';
import { PAYMENT_DETAIL, readPayment, serializePayment } from './payments.service.ts';
import { refuseBeyondRemaining, refusePendingRefund } from './refund-payment.ts';

export interface ExternalRefundInput {
  amount: number;
  /** Where the money went, e.g. the bank transfer's reference. */
  reference?: string;
}

export function createExternalRefunds(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /**
   * Records a refund made outside the gateway, under the payment's row lock (lockAttempts), the lock every refund
   * writer takes: a gateway refund of this payment in flight or of unknown outcome refuses it (409), as it refuses
   * another gateway refund, and two recordings cannot both count the same remainder. Only a payment the gateway
   * approved can be refunded; one already CANCELED has nothing left (422 AMOUNT_EXCEEDS_REMAINING).
   */
  async function recordExternalRefund(id: string, input: ExternalRefundInput, who: Actor) {
    const now = clock.now();
    await db.$transaction(async (tx) => {
      await lockAttempts(tx, id);
      const before = await tx.payment.findUniqueOrThrow({ where: { id }, include: PAYMENT_DETAIL });
      if (!PAID_STATUSES.includes(before.status)) {
        throw new RefundRefusedError.PAYMENT_NOT_REFUNDABLE(`Only a SUCCEEDED payment can be refunded; this one is ${before.status}`);
      }
      refusePendingRefund(before);
      refuseBeyondRemaining(before, input.amount);
      const refund = await tx.externalRefund.create({
        data: { paymentId: id, amount: input.amount, reason: who.reason, reference: input.reference, actor: who.actor, recordedAt: now },
      });
      await applyRefundSuccess(tx, id, input.amount, now);
      const after = await tx.payment.findUniqueOrThrow({ where: { id }, include: PAYMENT_DETAIL });
      await writeAudit(tx, {
        ...who,
        action: 'payment.refund_external',
        entityType: 'payment',
        entityId: id,
        before: serializePayment(before),
        after: { ...serializePayment(after), externalRefundId: refund.id, amount: input.amount, reference: input.reference },
      });
    });
    return serializePayment(await readPayment(db, id));
  }

  return { recordExternalRefund };
}

export type ExternalRefunds = ReturnType<typeof createExternalRefunds>;
