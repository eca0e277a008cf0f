// Payments and their attempts, read through the merchant API (DESIGN.md §5 payment shape).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';

type PaymentRow = Prisma.PaymentGetPayload<object>;
type AttemptRow = Prisma.PaymentAttemptGetPayload<object>;
export type PaymentStatus = PaymentRow['status'];

/** A payment's attentionReason while one of its refunds has an unknown outcome. */
export const REFUND_OUTCOME_UNKNOWN = 'REFUND_OUTCOME_UNKNOWN';

/**
 * A payment-method window approved (and charged) after its subscription was cancelled: the money moved for nothing,
 * and the payment waits for an operator to refund it.
 */
export const CHARGED_AFTER_CANCEL = 'SUBSCRIPTION_CANCELED';

/**
 * Payments an operator must act on: UNKNOWN outcomes, refunds whose outcome is unknown, and charges made after their
 * subscription was cancelled that are not refunded yet.
 */
export const NEEDS_ATTENTION_WHERE = {
  OR: [{ status: 'UNKNOWN' as const }, { attentionReason: REFUND_OUTCOME_UNKNOWN }, { attentionReason: CHARGED_AFTER_CANCEL, status: 'SUCCEEDED' as const }],
};

export function serializeAttempt(row: AttemptRow) {
  return {
    id: row.id,
    attemptNumber: row.attemptNumber,
    operation: row.operation,
    orderId: row.orderId,
    amount: row.amount,
    outcome: row.status,
    gatewayCode: row.gatewayCode ?? undefined,
    gatewayMessage: row.gatewayMessage ?? undefined,
    transactionId: row.transactionId ?? undefined,
    approvedAt: row.approvedAt?.toISOString(),
    sentAt: row.sentAt?.toISOString(),
    completedAt: row.completedAt?.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

export function serializePayment(row: PaymentRow & { attempts?: AttemptRow[] }) {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId ?? undefined,
    registrationId: row.registrationId ?? undefined,
    oneTimeOrderId: row.oneTimeOrderId ?? undefined,
    cycle: row.cycle ?? undefined,
    orderId: row.orderId,
    kind: row.kind,
    method: row.method,
    amount: row.amount,
    status: row.status,
    transactionId: row.transactionId ?? undefined,
    approvedAt: row.approvedAt?.toISOString(),
    failureCode: row.failureCode ?? undefined,
    failureMessage: row.failureMessage ?? undefined,
    canceledAmount: row.canceledAmount,
    attentionReason: row.attentionReason ?? undefined,
    needsAttention: row.status === 'UNKNOWN' || row.attentionReason === REFUND_OUTCOME_UNKNOWN || (row.attentionReason === CHARGED_AFTER_CANCEL && row.status === 'SUCCEEDED'),
    refundOutcomeUnknown: row.attentionReason === REFUND_OUTCOME_UNKNOWN,
    attempts: row.attempts?.map(serializeAttempt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function createPaymentsService(deps: { db: Db }) {
  const { db } = deps;

  async function getPayment(id: string) {
    const row = await db.payment.findUnique({ where: { id }, include: { attempts: { orderBy: { attemptNumber: 'asc' } } } });
    if (!row) throw new NotFoundError('Payment');
    return row;
  }

  async function listPayments(filter: { subscriptionId?: string; status?: PaymentStatus; limit: number; cursor?: string }) {
    const rows = await db.payment.findMany({
      where: { subscriptionId: filter.subscriptionId, status: filter.status, ...afterCursor(decodeCursor(filter.cursor)) },
      orderBy: PAGE_ORDER,
      take: filter.limit + 1,
    });
    return toPage(rows, filter.limit);
  }

  return { getPayment, listPayments };
}
