// /payments/success and /payments/fail (docs/api.md "Registrations and orders"): the customer is back from an order's
// window. The success redirect is confirmed with /payments/confirm, always with the amount we stored (docs/architecture.md, invariant 7): a
// redirect whose amount differs is refused before anything is sent.
//
// completeOrder reads top-down: load by state, decide (pure), write the attempt, call the gateway, classify, record,
// answer. Invariants kept: a replay of a finished order answers the same without calling the gateway; the ONE_TIME
// payment and its IN_FLIGHT attempt are committed before the call (invariant 1) under the order's lease, and the outcome
// is written fenced on it (invariant 5); an UNKNOWN confirmation leaves the order NEEDS_ATTENTION and it is never
// confirmed again automatically (invariant 4).
// The database adds (prisma/functions/): events (events.sql), revenue roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { failure, success, type CheckoutResult } from '../checkout/checkout.result.ts';
import {
  decideSuccess,
  holdForOperator,
  pendingAnswer,
  recordOrUnknown,
  transactionHeldElsewhere,
  waitForLease,
  windowFailedAnswer,
  windowFailure,
  type CheckoutLease,
  type RedirectInput,
  unlessAttachedElsewhere,
} from '../checkout/checkout.steps.ts';
import { applyCheckoutOutcome, CHECKOUT_OUTCOMES, declinedCheckout, declinedPayment, lostPayment, unknownCheckout } from '../checkout/checkout.outcomes.ts';
import { prepareAttempt } from '../ledger/attempts.ts';
import { moveCheckout } from '../ledger/checkout.state.ts';
import { leaseFreeWhere } from '../ledger/lease.queries.ts';
import { orderByState, type OrderRow } from './orders.service.ts';

type Tx = Prisma.TransactionClient;
type Deps = Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>;

const idsOf = (row: OrderRow) => ({ orderId: row.id, paymentId: row.payment?.id, returnUrl: row.returnUrl });

/** What a finished, waiting or busy order answers; undefined when a request may go ahead. */
function settledAnswer(row: OrderRow, now: Date): CheckoutResult | undefined {
  const ids = idsOf(row);
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
      const busy = row.leaseOwner !== null && row.leaseExpiresAt !== null && row.leaseExpiresAt > now;
      return busy ? failure('STATE_CONFLICT', 'The payment is still being confirmed; try again shortly', ids) : undefined;
    }
  }
}

/** Invariant 7: the amount is ours. A redirect saying otherwise was tampered with or is for another order. */
function amountRefusal(row: OrderRow, input: RedirectInput): CheckoutResult | undefined {
  if (input.amount === undefined || input.amount === String(row.amount)) return undefined;
  return failure('AMOUNT_MISMATCH', 'The amount in the redirect differs from the order; nothing was confirmed', { orderId: row.id, returnUrl: row.returnUrl });
}

/** GET|POST /payments/success */
export async function completeOrder(deps: Deps, input: RedirectInput): Promise<CheckoutResult> {
  const { db, gateway, clock, config, log } = deps;
  if (!input.state) return failure('INVALID_STATE', 'state is missing');
  const row = await orderByState(db, input.state);
  if (!row) return failure('INVALID_STATE', 'Unknown state');
  const ids = idsOf(row);

  const now = clock.now();
  const decision = decideSuccess('order', row, input, now, { ids, settled: settledAnswer(row, now), refused: amountRefusal(row, input) });
  if (decision.next === 'answer') return decision.answer;
  if (decision.next === 'expire') {
    await moveCheckout(db, 'order', row.id, 'expire', { fence: { transactionId: null } });
    return decision.answer;
  }
  if (decision.next === 'window-failed') return failOrder(deps, input);
  const { transactionId } = decision;
  if (await transactionHeldElsewhere(db, transactionId, { orderId: row.id })) return holdForOperator(db, log, 'order', row.id, ids);

  // Write the attempt: the order's lease, its ONE_TIME payment and an IN_FLIGHT attempt, committed before the call.
  const lease: CheckoutLease = { leaseOwner: randomUUID(), leaseExpiresAt: new Date(now.getTime() + config.scheduler.leaseMs), now };
  const claim = await unlessAttachedElsewhere(claimConfirmation(db, row, transactionId, lease));
  if (claim === 'ELSEWHERE') return holdForOperator(db, log, 'order', row.id, ids);
  if (!claim) {
    // Another request holds the lease: wait for its answer and give the same one.
    const final = await waitForLease(
      () => orderByState(db, input.state!),
      (r) => r?.leaseOwner === null,
      config.gateway.timeoutMs + 5_000,
    );
    return (final && settledAnswer(final, clock.now())) ?? pendingAnswer('order', final ?? row, idsOf(final ?? row));
  }

  // An approval answering another orderId is someone else's payment: UNKNOWN, never this order's success.
  const result = await gateway.confirmPayment({ method: row.method, transactionId, amount: row.amount, expectedOrderId: row.orderId });

  // Classify and record, fenced on the attempt's and the order's lease; answer.
  const record = (tx: Tx, at: Date) => recordConfirmation(deps, tx, row, claim, result, lease.leaseOwner, at);
  return recordOrUnknown(deps, { attemptId: claim.attemptId, leaseOwner: lease.leaseOwner }, result, record, { ...ids, paymentId: claim.paymentId });
}

/** GET|POST /payments/fail, and a success redirect whose window answered another code. */
export async function failOrder(deps: Pick<ServiceDeps, 'db' | 'clock'>, input: RedirectInput): Promise<CheckoutResult> {
  if (!input.state) return failure('INVALID_STATE', 'state is missing');
  const row = await orderByState(deps.db, input.state);
  if (!row) return failure('INVALID_STATE', 'Unknown state');
  const done = settledAnswer(row, deps.clock.now());
  if (done) return done;
  // A window failure never overtakes a confirmation in flight (a lease held).
  if (await moveCheckout(deps.db, 'order', row.id, 'abandon', { fence: { leaseOwner: null }, data: windowFailure(input) })) {
    return windowFailedAnswer(input, idsOf(row));
  }
  const current = (await orderByState(deps.db, input.state))!;
  return settledAnswer(current, deps.clock.now()) ?? pendingAnswer('order', current, idsOf(current));
}

/** Takes the order's lease and writes its payment and an IN_FLIGHT attempt; undefined when it may not call now. */
async function claimConfirmation(db: Deps['db'], row: OrderRow, transactionId: string, lease: CheckoutLease) {
  const { leaseOwner, leaseExpiresAt, now } = lease;
  return db.$transaction(async (tx) => {
    const claimed = await tx.order.updateMany({
      where: { id: row.id, status: 'PENDING', ...leaseFreeWhere(now) },
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
      ...lease,
      allowAfterUnknown: false,
    });
    if (attempt.attemptId === undefined) {
      // The request that was confirming died mid-call: the outcome is unknown and is not guessed, and the order is
      // not confirmed again automatically (invariant 4).
      await moveCheckout(tx, 'order', row.id, 'hold', { data: { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', releaseLease: true } });
      return undefined;
    }
    return { paymentId: payment.id, attemptId: attempt.attemptId };
  });
}

/** An order's confirmation answer, in the transaction that recorded its attempt (CHECKOUT_OUTCOMES.order). */
async function recordConfirmation(
  deps: Pick<Deps, 'log'>,
  tx: Tx,
  row: OrderRow,
  claim: { paymentId: string },
  result: GatewayResult,
  leaseOwner: string,
  now: Date,
): Promise<CheckoutResult> {
  const move = CHECKOUT_OUTCOMES.order[result.outcome];
  const held = { kind: 'order', id: row.id, leaseOwner, paymentId: claim.paymentId } as const;
  const ids = { orderId: row.id, paymentId: claim.paymentId, returnUrl: row.returnUrl };
  switch (result.outcome) {
    case 'SUCCEEDED':
      return applyCheckoutOutcome(tx, held, move, {
        payment: { transactionId: result.fields.transactionId, approvedAt: result.fields.transactionDateTime ?? now },
        checkout: { completedAt: now },
        answer: ids,
      });
    case 'DECLINED':
      return applyCheckoutOutcome(tx, held, move, {
        payment: declinedPayment(result),
        checkout: declinedCheckout(result),
        answer: { ...ids, gatewayCode: result.code },
        message: result.message,
      });
    case 'UNKNOWN': {
      const answer = await applyCheckoutOutcome(tx, held, move, { payment: lostPayment(result), checkout: unknownCheckout(result), answer: ids });
      deps.log.warn({ orderId: row.id, reason: result.reason }, 'order needs attention: confirmation outcome unknown');
      return answer;
    }
    case 'NOT_SENT':
      return applyCheckoutOutcome(tx, held, move, { answer: ids });
  }
}
