// One-time orders (DESIGN.md §1.3): the success redirect is confirmed with /payments/confirm, always with the
// amount we stored (rule 7). A redirect whose amount differs is refused before anything is sent. The ONE_TIME
// payment and its IN_FLIGHT attempt are committed before the call (rule 1); an UNKNOWN confirmation leaves the
// order NEEDS_ATTENTION and is never confirmed again automatically (rule 4).
import { randomBytes, randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { Config } from '../../config.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { checkoutUrls, validateTerms, windowParams, withoutCheckoutSecrets, type Method } from '../shared/terms.ts';
import { failure, success, type CheckoutResult } from '../checkout/checkout.result.ts';
import { prepareAttempt, StaleLeaseError } from '../ledger/attempts.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { moveCheckout, releaseCheckout, type CheckoutMoveData, type CheckoutTransition } from '../ledger/checkout.state.ts';
import { createCheckoutFlow } from '../checkout/checkout.flow.ts';
import { checkoutByState } from '../checkout/checkout-by-state.ts';

type OrderRow = Prisma.OrderGetPayload<{ include: { payment: { select: { id: true } } } }>;
type OrderView = Omit<OrderRow, 'payment'> & { payment?: { id: string } | null };

/** An order by its state, with its payment (checkoutByState). */
export const orderByState = checkoutByState<OrderRow>('orders', Prisma.OrderScalarFieldEnum, {
  as: 'payment',
  sql: `(SELECT jsonb_build_object('id', p."id") FROM "payments" p WHERE p."oneTimeOrderId" = c."id")`,
});

export interface CreateOrderInput {
  userId?: string;
  method: Method;
  amount: number;
  orderName: string;
  itemCode?: string;
  returnUrl?: string;
}

export function oneTimeOrderId(id: string): string {
  return `O${id.replace(/-/g, '')}`;
}

/** The public shape (DESIGN.md §5). */
export function serializeOrder(row: OrderView, config: Config) {
  const urls = checkoutUrls(config, 'payments', row.state);
  return {
    id: row.id,
    state: row.state,
    status: row.status,
    orderId: row.orderId,
    amount: row.amount,
    ...urls,
    expiresAt: row.expiresAt.toISOString(),
    window: windowParams(config, {
      method: row.method,
      amount: row.amount,
      orderName: row.orderName,
      userId: row.userId ?? undefined,
      itemCode: row.itemCode ?? undefined,
      orderId: row.orderId,
      issueKeyOnly: false,
      ...urls,
    }),
    paymentId: row.payment?.id,
    failureCode: row.failureCode ?? undefined,
    failureMessage: row.failureMessage ?? undefined,
    createdAt: row.createdAt.toISOString(),
  };
}

/** An order as events show it: without the single-use `state` and the URLs and window that carry it. */
export function orderEventObject(row: OrderView, config: Config) {
  return withoutCheckoutSecrets(serializeOrder(row, config));
}

export function createOrdersService(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db, gateway, clock, config, log } = deps;
  const include = { payment: { select: { id: true } } } as const;

  async function createOrder(input: CreateOrderInput) {
    validateTerms(input, config, { recurring: false });
    const id = randomUUID();
    const row = await db.order.create({
      data: {
        id,
        state: randomBytes(32).toString('base64url'),
        orderId: oneTimeOrderId(id),
        userId: input.userId,
        method: input.method,
        amount: input.amount,
        orderName: input.orderName,
        itemCode: input.itemCode,
        returnUrl: input.returnUrl,
        expiresAt: new Date(clock.now().getTime() + config.registrationTtlMs),
      },
      include,
    });
    return serializeOrder(row, config);
  }

  async function getOrder(id: string) {
    const row = await db.order.findUnique({ where: { id }, include });
    if (!row) throw new NotFoundError('Order');
    return serializeOrder(row, config);
  }

  const findByState = (state: string) => orderByState(db, state);

  /** What a finished, waiting or busy order answers; undefined when a request may go ahead. */
  function settled(row: OrderRow): CheckoutResult | undefined {
    const ids = { orderId: row.id, paymentId: row.payment?.id, returnUrl: row.returnUrl };
    switch (row.status) {
      case 'COMPLETED':
        return success(ids);
      case 'FAILED':
        return failure('INVALID_STATE', 'This order has already failed', ids);
      case 'EXPIRED':
        return failure('STATE_EXPIRED', 'This order has expired', ids);
      case 'NEEDS_ATTENTION':
        return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', ids);
      default: {
        const busy = row.leaseOwner !== null && row.leaseExpiresAt !== null && row.leaseExpiresAt > clock.now();
        return busy ? failure('STATE_CONFLICT', 'The payment is still being confirmed; try again shortly', ids) : undefined;
      }
    }
  }

  type Claim = { paymentId: string; attemptId: string };
  const flow = createCheckoutFlow<OrderRow, Claim>(
    { db, clock, log, leaseWaitMs: config.gateway.timeoutMs + 5_000 },
    {
      kind: 'order',
      findByState,
      ids: (row) => ({ orderId: row.id, paymentId: row.payment?.id, returnUrl: row.returnUrl }),
      settled,
      // A window failure never overtakes a confirmation in flight.
      abandonFence: { leaseOwner: null },
      check: (row, input) =>
        // Rule 7: the amount is ours. A redirect saying otherwise was tampered with or is for another order.
        input.amount !== undefined && input.amount !== String(row.amount)
          ? failure('AMOUNT_MISMATCH', 'The amount in the redirect differs from the order; nothing was confirmed', {
              orderId: row.id,
              returnUrl: row.returnUrl,
            })
          : undefined,
      claim: claimConfirmation,
      attemptOf: (claim) => claim.attemptId,
      // An approval answering another orderId is someone else's payment: UNKNOWN, never this order's success.
      call: (row, transactionId) => gateway.confirmPayment({ method: row.method, transactionId, amount: row.amount, expectedOrderId: row.orderId }),
      record: recordConfirmation,
      paymentOf: (claim) => claim.paymentId,
    },
  );

  async function claimConfirmation(row: OrderRow, transactionId: string, leaseOwner: string, now: Date) {
    const leaseExpiresAt = new Date(now.getTime() + config.scheduler.leaseMs);
    return db.$transaction(async (tx) => {
      const claimed = await tx.order.updateMany({
        where: { id: row.id, status: 'PENDING', OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }] },
        data: { leaseOwner, leaseExpiresAt, transactionId },
      });
      if (claimed.count === 0) return undefined;
      const payment =
        (await tx.payment.findUnique({ where: { oneTimeOrderId: row.id } })) ??
        (await tx.payment.create({
          data: { oneTimeOrderId: row.id, kind: 'ONE_TIME', method: row.method, amount: row.amount, orderId: row.orderId, dueAt: now },
        }));
      const attempt = await prepareAttempt(tx, {
        paymentId: payment.id,
        operation: 'PAYMENT_CONFIRM',
        orderId: row.orderId,
        amount: row.amount,
        leaseOwner,
        leaseExpiresAt,
        now,
        allowAfterUnknown: false,
      });
      if (attempt.attemptId === undefined) {
        // The request that was confirming died mid-call: the outcome is unknown and is not guessed, and the
        // order is not confirmed again automatically (rule 4).
        await moveCheckout(tx, 'order', row.id, 'hold', { data: { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', releaseLease: true } });
        return undefined;
      }
      return { paymentId: payment.id, attemptId: attempt.attemptId };
    });
  }

  /** The order's step after the call, in the engine's transaction that recorded the attempt. */
  async function recordConfirmation(
    tx: Prisma.TransactionClient,
    row: OrderRow,
    claim: { paymentId: string; attemptId: string },
    result: GatewayResult,
    leaseOwner: string,
    now: Date,
  ): Promise<CheckoutResult> {
    const ids = { orderId: row.id, paymentId: claim.paymentId, returnUrl: row.returnUrl };
    // Fenced on our lease, released with the move (or alone, when nothing was decided).
    const release = async (transition?: CheckoutTransition, data?: CheckoutMoveData) => {
      if (!(await releaseCheckout(tx, 'order', row.id, leaseOwner, transition, data))) throw new StaleLeaseError(`order ${row.id}`);
    };
    switch (result.outcome) {
      case 'SUCCEEDED':
        await transitionPayment(tx, claim.paymentId, 'succeed', {
          transactionId: result.fields.transactionId,
          approvedAt: result.fields.transactionDateTime ?? now,
        });
        await release('complete', { completedAt: now });
        return success(ids);
      case 'DECLINED':
        await transitionPayment(tx, claim.paymentId, 'fail', { failureCode: result.code, failureMessage: result.message });
        await release('fail', { failureCode: 'GATEWAY_DECLINED', failureMessage: `${result.code}: ${result.message ?? ''}`.slice(0, 500) });
        return failure('GATEWAY_DECLINED', result.message ?? 'The gateway declined', { ...ids, gatewayCode: result.code });
      case 'UNKNOWN':
        await transitionPayment(tx, claim.paymentId, 'lose', { attentionReason: result.reason });
        await release('hold', { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: result.reason });
        log.warn({ orderId: row.id, reason: result.reason }, 'order needs attention: confirmation outcome unknown');
        return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', ids);
      case 'NOT_SENT':
        await release();
        return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', ids);
    }
  }

  return { createOrder, getOrder, handleSuccess: flow.handleSuccess, handleFail: flow.handleFail };
}
