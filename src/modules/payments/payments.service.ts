// Payments and their attempts, read through the merchant API (DESIGN.md §5 payment shape).
import { Prisma } from '../../generated/prisma/client.ts';
import { columnsOf, sqlQuery, type Db } from '../../db/prisma.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { REFUND_OUTCOME_UNKNOWN } from '../ledger/payment.state.ts';
import { paymentNeedsAttention } from '../ledger/payment.queries.ts';

type PaymentRow = Prisma.PaymentGetPayload<object>;
type AttemptRow = Prisma.PaymentAttemptGetPayload<object>;
export type PaymentStatus = PaymentRow['status'];

/** The attempt columns the public shape shows. */
type AttemptView = Pick<
  AttemptRow,
  | 'id'
  | 'attemptNumber'
  | 'operation'
  | 'orderId'
  | 'amount'
  | 'status'
  | 'gatewayCode'
  | 'gatewayMessage'
  | 'transactionId'
  | 'approvedAt'
  | 'sentAt'
  | 'completedAt'
  | 'createdAt'
>;

export function serializeAttempt(row: AttemptView) {
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

export function serializePayment(row: PaymentRow & { attempts?: AttemptView[] }) {
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
    needsAttention: paymentNeedsAttention(row),
    refundOutcomeUnknown: row.attentionReason === REFUND_OUTCOME_UNKNOWN,
    attempts: row.attempts?.map(serializeAttempt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const ATTEMPT_INSTANTS = ['approvedAt', 'sentAt', 'completedAt', 'createdAt'] as const;

/**
 * A payment with its attempts (in order) in one statement, straight from the pg pool (NotFoundError when there is
 * none): through Prisma it was two statements and most of the route's CPU (BENCHMARKS.md §4). The public shape stays in
 * serializePayment.
 */
export async function readPayment(db: Db, id: string): Promise<PaymentRow & { attempts: AttemptView[] }> {
  const [row] = await sqlQuery<PaymentRow & { attempts: Array<Record<string, unknown>> }>(
    db,
    `SELECT ${columnsOf(Prisma.PaymentScalarFieldEnum, 'p')}, (SELECT coalesce(jsonb_agg(jsonb_build_object('id', a."id", 'attemptNumber', a."attemptNumber", 'operation', a."operation",
              'orderId', a."orderId", 'amount', a."amount", 'status', a."status", 'gatewayCode', a."gatewayCode", 'gatewayMessage', a."gatewayMessage",
              'transactionId', a."transactionId", 'approvedAt', a."approvedAt", 'sentAt', a."sentAt", 'completedAt', a."completedAt", 'createdAt', a."createdAt")
              ORDER BY a."attemptNumber"), '[]') FROM "payment_attempts" a WHERE a."paymentId" = p."id") AS "attempts"
       FROM "payments" p WHERE p."id" = $1`,
    [id],
  );
  if (!row) throw new NotFoundError('Payment');
  // jsonb carries instants as strings.
  for (const attempt of row.attempts) for (const field of ATTEMPT_INSTANTS) if (attempt[field] !== null) attempt[field] = new Date(attempt[field] as string);
  return row as PaymentRow & { attempts: AttemptView[] };
}

export function createPaymentsService(deps: { db: Db }) {
  const { db } = deps;

  const getPayment = (id: string) => readPayment(db, id);

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
