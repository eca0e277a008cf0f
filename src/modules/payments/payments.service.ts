// Payments and their attempts, read through the merchant API (docs/api.md "Shapes": the payment).
import { Prisma } from '../../generated/prisma/client.ts';
import { columnsOf, sqlQuery, type Db } from '../../db/prisma.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { REFUND_OUTCOME_UNKNOWN } from '../ledger/payment.state.ts';
import { paymentNeedsAttention } from '../ledger/payment.queries.ts';

type PaymentRow = Prisma.PaymentGetPayload<object>;
type AttemptRow = Prisma.PaymentAttemptGetPayload<object>;
type ExternalRefundRow = Prisma.ExternalRefundGetPayload<object>;
export type PaymentStatus = PaymentRow['status'];

/** What a payment is read with for its full shape: its attempts in order and its refunds made outside the gateway. */
export const PAYMENT_DETAIL = {
  attempts: { orderBy: { attemptNumber: 'asc' as const } },
  externalRefunds: { orderBy: [{ recordedAt: 'asc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }] },
};

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
  | 'reason'
>;

/** What the payment's `refunds` list is made of: its CANCEL attempts (gateway refunds) and its external refunds. */
type RefundAttemptView = Pick<AttemptRow, 'id' | 'operation' | 'amount' | 'status' | 'reason' | 'completedAt' | 'createdAt'>;
type ExternalRefundView = Pick<ExternalRefundRow, 'id' | 'amount' | 'reason' | 'reference' | 'recordedAt'>;

/**
 * A gateway refund's status from its attempt's: a call in flight is PENDING; a decline, or a call that never left
 * (NOT_SENT: a refund asked again is a new attempt), refunded nothing: FAILED.
 */
const REFUND_STATUS = { IN_FLIGHT: 'PENDING', SUCCEEDED: 'SUCCEEDED', DECLINED: 'FAILED', NOT_SENT: 'FAILED', UNKNOWN: 'UNKNOWN' } as const;

/**
 * The payment's refunds, oldest first (docs/api.md "Shapes"): each gateway refund (CANCEL attempt; `succeededAt` when its
 * success was recorded, live or settled later) and each refund made outside the gateway, SUCCEEDED when recorded.
 */
export function serializeRefunds(attempts: RefundAttemptView[], externals: ExternalRefundView[]) {
  const gateway = attempts
    .filter((a) => a.operation === 'CANCEL')
    .map((a) => ({
      id: a.id,
      amount: a.amount,
      status: REFUND_STATUS[a.status],
      channel: 'GATEWAY' as const,
      reason: a.reason ?? '',
      reference: undefined as string | undefined,
      requestedAt: a.createdAt.toISOString(),
      succeededAt: a.status === 'SUCCEEDED' ? (a.completedAt ?? a.createdAt).toISOString() : undefined,
    }));
  const external = externals.map((r) => ({
    id: r.id,
    amount: r.amount,
    status: 'SUCCEEDED' as const,
    channel: 'EXTERNAL' as const,
    reason: r.reason,
    reference: r.reference ?? undefined,
    requestedAt: r.recordedAt.toISOString(),
    succeededAt: r.recordedAt.toISOString(),
  }));
  // ISO-8601 UTC strings sort as their instants; the sort is stable, so a payment's own order holds on a tie.
  return [...gateway, ...external].sort((a, b) => (a.requestedAt < b.requestedAt ? -1 : a.requestedAt > b.requestedAt ? 1 : 0));
}

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

/**
 * A payment's public shape. `refunds` is there when the row was read with its external refunds (every API answer
 * about a payment), from its attempts or, for a list read without them, its CANCEL attempts (`refundAttempts`); an
 * event's object is the payment row as it changed with its refunds as of the change (events.render.ts), without attempts.
 */
export function serializePayment(row: PaymentRow & { attempts?: AttemptView[]; refundAttempts?: RefundAttemptView[]; externalRefunds?: ExternalRefundView[] }) {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId ?? undefined,
    registrationId: row.registrationId ?? undefined,
    oneTimeOrderId: row.oneTimeOrderId ?? undefined,
    cycle: row.cycle ?? undefined,
    orderId: row.orderId,
    kind: row.kind,
    method: row.method,
    gateway: row.gateway,
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
    refunds: row.externalRefunds ? serializeRefunds(row.refundAttempts ?? row.attempts ?? [], row.externalRefunds) : undefined,
    attempts: row.attempts?.map(serializeAttempt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const ATTEMPT_INSTANTS = ['approvedAt', 'sentAt', 'completedAt', 'createdAt'] as const;

/**
 * A payment with its attempts (in order) in one statement, straight from the pg pool (NotFoundError when there is
 * none): through Prisma it was two statements and most of the route's CPU (docs/benchmarks.md "Measurements behind choices in the code"). The public shape stays in
 * serializePayment.
 */
export async function readPayment(db: Db, id: string): Promise<PaymentRow & { attempts: AttemptView[]; externalRefunds: ExternalRefundView[] }> {
  const [row] = await sqlQuery<PaymentRow & { attempts: Array<Record<string, unknown>>; externalRefunds: Array<Record<string, unknown>> }>(
    db,
    `SELECT ${columnsOf(Prisma.PaymentScalarFieldEnum, 'p')}, (SELECT coalesce(jsonb_agg(jsonb_build_object('id', a."id", 'attemptNumber', a."attemptNumber", 'operation', a."operation",
              'orderId', a."orderId", 'amount', a."amount", 'status', a."status", 'gatewayCode', a."gatewayCode", 'gatewayMessage', a."gatewayMessage",
              'transactionId', a."transactionId", 'approvedAt', a."approvedAt", 'sentAt', a."sentAt", 'completedAt', a."completedAt", 'createdAt', a."createdAt",
              'reason', a."reason")
              ORDER BY a."attemptNumber"), '[]') FROM "payment_attempts" a WHERE a."paymentId" = p."id") AS "attempts",
            (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r."id", 'amount', r."amount", 'reason', r."reason", 'reference', r."reference", 'recordedAt', r."recordedAt")
              ORDER BY r."recordedAt", r."createdAt", r."id"), '[]') FROM "external_refunds" r WHERE r."paymentId" = p."id") AS "externalRefunds"
       FROM "payments" p WHERE p."id" = $1`,
    [id],
  );
  if (!row) throw new NotFoundError('Payment');
  // jsonb carries instants as strings.
  for (const attempt of row.attempts) for (const field of ATTEMPT_INSTANTS) if (attempt[field] !== null) attempt[field] = new Date(attempt[field] as string);
  for (const refund of row.externalRefunds) refund.recordedAt = new Date(refund.recordedAt as string);
  return row as PaymentRow & { attempts: AttemptView[]; externalRefunds: ExternalRefundView[] };
}

/**
 * The refunds of a page of payments, two set-based reads for the whole page: each row gains its CANCEL attempts and
 * its external refunds, so that a list shows every payment's `refunds` (not its attempts).
 */
export async function withRefunds<T extends { id: string }>(db: Db, rows: T[]) {
  const ids = rows.map((row) => row.id);
  const [attempts, externals] = await Promise.all([
    db.paymentAttempt.findMany({ where: { paymentId: { in: ids }, operation: 'CANCEL' }, orderBy: { attemptNumber: 'asc' } }),
    db.externalRefund.findMany({ where: { paymentId: { in: ids } }, orderBy: [{ recordedAt: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] }),
  ]);
  return rows.map((row) => ({
    ...row,
    refundAttempts: attempts.filter((a) => a.paymentId === row.id),
    externalRefunds: externals.filter((r) => r.paymentId === row.id),
  }));
}

export function createPaymentsService(deps: { db: Db }) {
  const { db } = deps;

  const getPayment = (id: string) => readPayment(db, id);

  /** `from`: the client the list is read from (the route's, shared/read-db.ts); the primary by default. */
  async function listPayments(filter: { subscriptionId?: string; status?: PaymentStatus; limit: number; cursor?: string }, from: Db = db) {
    const rows = await from.payment.findMany({
      where: { subscriptionId: filter.subscriptionId, status: filter.status, ...afterCursor(decodeCursor(filter.cursor)) },
      orderBy: PAGE_ORDER,
      take: filter.limit + 1,
    });
    const page = toPage(rows, filter.limit);
    return { items: await withRefunds(from, page.items), nextCursor: page.nextCursor };
  }

  return { getPayment, listPayments };
}
