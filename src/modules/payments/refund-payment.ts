// Refunds (docs/operating.md "Admin routes", POST /admin/payments/:id/cancel and cancel/resolve): through the gateway's
// cancellation, written before the call (a CANCEL attempt numbered under the payment's lock, ledger/attempts.ts),
// recorded fenced; an unknown outcome raises the payment (REFUND_OUTCOME_UNKNOWN) and no other refund of it is sent
// until an operator settles it.
// The database adds (prisma/functions/): event refunds (events.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { utf8Bytes } from '../../lib/input.ts';
import { REFUND_REASON_BYTES, refundWindowOpen, type GatewayCapabilities } from '../../gateway/gateway.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError, StateConflictError, ValidationError, withDetails } from '../../lib/errors.ts';
import { lockAttempts, sweepExpiredAttempts } from '../ledger/attempts.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import { PAYMENT_DETAIL, serializePayment } from './payments.service.ts';
import { REFUND_OUTCOME_UNKNOWN } from '../ledger/payment.state.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RefundRefusedError } from '../ledger/payment.errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { transitionAttempt } from '../ledger/attempt.state.ts';
import { applyRefundSuccess } from '../ledger/refund.outcomes.ts';

type Tx = Prisma.TransactionClient;
type RefundedPayment = { id: string; amount: number; canceledAmount: number; attempts: Array<{ operation: string; status: string }> };

/**
 * A refund of a payment (through the gateway or made outside it) waits while a gateway refund of it is in flight or
 * has an unknown outcome: that one may yet refund what the next would count (409). Read under the payment's row lock.
 */
export function refusePendingRefund(payment: RefundedPayment): void {
  const pending = payment.attempts.find((a) => a.operation === 'CANCEL' && (a.status === 'UNKNOWN' || a.status === 'IN_FLIGHT'));
  if (!pending) return;
  const why =
    pending.status === 'IN_FLIGHT' ? 'A refund of this payment is in progress' : 'An earlier refund of this payment has an unknown outcome; resolve it first';
  throw withDetails(new StateConflictError(why), { paymentId: payment.id });
}

/** No refund counts more than what remains of the payment (nothing, once it is CANCELED): 422. */
export function refuseBeyondRemaining(payment: RefundedPayment, amount: number): void {
  const remaining = payment.amount - payment.canceledAmount;
  if (amount > remaining) throw withDetails(new RefundRefusedError.AMOUNT_EXCEEDS_REMAINING(`At most ${remaining} can be refunded`), { remaining });
}

/**
 * Whether the payment's gateway still cancels it at `now`, by its capabilities' refund window for the method (Danal:
 * a MOBILE payment only within its calendar month in Korea time, as the carriers bill monthly; a CARD payment
 * always); after it, a refund is made outside the gateway (record-external-refund.ts).
 */
export function gatewayCancelsAt(
  capabilities: Pick<GatewayCapabilities, 'refundWindow'>,
  payment: { method: 'CARD' | 'MOBILE'; approvedAt: Date | null; createdAt: Date },
  now: Date,
): boolean {
  return refundWindowOpen(capabilities.refundWindow[payment.method], payment.approvedAt ?? payment.createdAt, now);
}

/**
 * What the payment's gateway refuses, checked before any attempt is written or call made: a part of a payment whose
 * method it refunds only whole (capabilities.partialRefund), a payment past its refund window (refundWindow).
 */
export function refuseBeyondGateway(
  capabilities: Pick<GatewayCapabilities, 'partialRefund' | 'refundWindow'>,
  payment: { method: 'CARD' | 'MOBILE'; amount: number; canceledAmount: number; approvedAt: Date | null; createdAt: Date },
  amount: number,
  now: Date,
): void {
  if (!capabilities.partialRefund[payment.method] && (amount !== payment.amount || payment.canceledAmount > 0)) {
    throw new RefundRefusedError.MOBILE_PARTIAL_CANCEL(`A ${payment.method} payment can only be refunded in full`);
  }
  if (!gatewayCancelsAt(capabilities, payment, now)) {
    throw new RefundRefusedError.MOBILE_CANCEL_MONTH_CLOSED(`A ${payment.method} payment can only be refunded within its calendar month (Korea time)`);
  }
}

export function createRefunds(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'gateways' | 'clock' | 'config' | 'log'>) {
  const { db, clock, config, log } = deps;

  async function load(tx: Tx | Db, id: string) {
    const row = await tx.payment.findUnique({ where: { id }, include: PAYMENT_DETAIL });
    if (!row) throw new NotFoundError('Payment');
    return row;
  }

  /**
   * Refund through the gateway's cancellation. Checked before calling: the payment succeeded and has something
   * left; what its gateway refuses (refuseBeyondGateway: Danal takes MOBILE only in full and only within the
   * payment's calendar month in Korea time); partial refunds up to what remains. Write before call: a CANCEL attempt is committed (with the audit event) before the call, and
   * an earlier refund whose outcome is unknown blocks another.
   */
  async function refund(id: string, input: { amount?: number }, who: Actor) {
    const now = clock.now();
    const leaseOwner = randomUUID();
    if (utf8Bytes(who.reason) > REFUND_REASON_BYTES)
      throw new ValidationError(`reason is over the gateway’s ${REFUND_REASON_BYTES} bytes for a cancellation reason`);
    // Committed on its own: a refund refused below still leaves a dead process's refund visible as unknown.
    await sweepExpiredAttempts(db, now, log, id);
    const ready = await prepareRefund(id, input, who, leaseOwner, now);
    // Refunded where it was charged: the payment's gateway.
    const result = await gatewayFor(deps, ready.payment.gateway).refundPayment({
      method: ready.payment.method,
      transactionId: ready.payment.transactionId!,
      amount: ready.amount,
      whole: ready.whole,
      reason: who.reason,
      idempotencyKey: ready.attemptId,
    });
    const answer = await recordAnswer({ db, clock, log }, ready, result, async (tx, at) => {
      if (result.outcome === 'SUCCEEDED') {
        await applyRefundSuccess(tx, id, ready.amount, at);
      } else if (result.outcome === 'UNKNOWN') {
        await tx.payment.update({ where: { id }, data: { attentionReason: REFUND_OUTCOME_UNKNOWN } });
      }
      return load(tx, id);
    });
    if ('unrecorded' in answer) {
      // The cancellation may have gone through: the attempt stays for the sweeper, the operator learns so.
      throw withDetails(new PaymentOutcomeUnknownError(`the refund's answer could not be recorded (${answer.unrecorded})`), {
        paymentId: id,
        refundAttemptId: ready.attemptId,
        reason: answer.unrecorded,
      });
    }
    const after = answer.recorded;
    const details = { paymentId: id };
    log.info({ paymentId: id, outcome: result.outcome }, 'refund');
    switch (result.outcome) {
      case 'SUCCEEDED':
        return serializePayment(after);
      case 'DECLINED':
        throw withDetails(new GatewayDeclinedError(`${result.code}: ${result.message ?? ''}`), { ...details, gatewayCode: result.code });
      case 'UNKNOWN':
        throw withDetails(new PaymentOutcomeUnknownError(result.reason), details);
      case 'NOT_SENT':
        throw withDetails(new GatewayUnavailableError(result.detail ?? result.reason), details);
    }
  }

  /**
   * The refund's checks and its CANCEL attempt, committed with the audit event before the call (docs/architecture.md, invariant 1). All of it
   * under the payment's row lock (lockAttempts): a concurrent refund waits, then finds this one in flight (409).
   */
  function prepareRefund(id: string, input: { amount?: number }, who: Actor, leaseOwner: string, now: Date) {
    return db.$transaction(async (tx) => {
      const attempts = await lockAttempts(tx, id);
      const payment = await load(tx, id);
      if (payment.status !== 'SUCCEEDED' || !payment.transactionId) {
        throw new RefundRefusedError.PAYMENT_NOT_REFUNDABLE(`Only a SUCCEEDED payment can be refunded; this one is ${payment.status}`);
      }
      refusePendingRefund(payment);
      const remaining = payment.amount - payment.canceledAmount;
      const amount = input.amount ?? remaining;
      refuseBeyondGateway(gatewayFor(deps, payment.gateway).capabilities, payment, amount, now);
      refuseBeyondRemaining(payment, amount);
      const attempt = await attempts.append({
        operation: 'CANCEL',
        orderId: (attemptNumber) => `X${id.replace(/-/g, '')}-${attemptNumber}`,
        amount,
        leaseOwner,
        leaseExpiresAt: new Date(now.getTime() + config.scheduler.leaseMs),
        reason: who.reason,
      });
      await writeAudit(tx, {
        ...who,
        action: 'payment.refund',
        entityType: 'payment',
        entityId: id,
        before: serializePayment(payment),
        after: { refundAttemptId: attempt.id, amount },
      });
      return { payment, attemptId: attempt.id, leaseOwner, amount, whole: amount === remaining };
    });
  }

  /**
   * Settles a refund whose outcome is unknown, after the operator asked the gateway: SUCCEEDED counts its amount as
   * refunded (the payment is CANCELED when nothing remains), FAILED records that nothing was refunded. Either way
   * the payment can be refunded again. Fenced on the refund still being UNKNOWN.
   */
  /** `expect` (a settlement file's line): the refund's amount; another refund waiting now resolves nothing (409). */
  async function resolveRefund(id: string, input: { outcome: 'SUCCEEDED' | 'FAILED'; expect?: { amount: number } }, who: Actor) {
    const now = clock.now();
    await sweepExpiredAttempts(db, now, log, id);
    return db.$transaction(async (tx) => {
      // Under the payment's row lock, like every other writer of its refunds (lockAttempts).
      await lockAttempts(tx, id);
      const before = await load(tx, id);
      const refund = before.attempts.find((a) => a.operation === 'CANCEL' && a.status === 'UNKNOWN');
      if (!refund) throw new StateConflictError('No refund of this payment has an unknown outcome');
      if (input.expect && refund.amount !== input.expect.amount) {
        throw new StateConflictError('The refund waiting now is not the one this outcome was established for');
      }
      const note = `resolved by operator: ${who.reason}`.slice(0, 500);
      const settled =
        input.outcome === 'SUCCEEDED'
          ? await transitionAttempt(tx, refund.id, 'settle', 'SUCCEEDED', { gatewayMessage: note, completedAt: now })
          : await transitionAttempt(tx, refund.id, 'settle', 'DECLINED', { gatewayCode: 'RESOLVED_FAILED', gatewayMessage: note, completedAt: now });
      if (!settled) throw new StateConflictError('This refund was settled meanwhile');
      // One refund of a payment is in flight or unknown at a time (prepareRefund), so settling it clears the flag.
      await tx.payment.updateMany({ where: { id, attentionReason: REFUND_OUTCOME_UNKNOWN }, data: { attentionReason: null } });
      if (input.outcome === 'SUCCEEDED') await applyRefundSuccess(tx, id, refund.amount, now);
      const after = await load(tx, id);
      await writeAudit(tx, {
        ...who,
        action: `payment.refund_resolve_${input.outcome.toLowerCase()}`,
        entityType: 'payment',
        entityId: id,
        before: serializePayment(before),
        after: serializePayment(after),
      });
      return serializePayment(after);
    });
  }

  return { refund, resolveRefund };
}
