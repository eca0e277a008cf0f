// Operators' actions on payments (DESIGN.md §5): list, resolve an UNKNOWN outcome, and refund through the
// gateway's cancellation. Rule 4: only a person turns UNKNOWN into an outcome; the subscription then moves exactly
// as if the gateway had answered so (charge.outcomes.ts), and a MOBILE success becomes the chain head.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { utf8Bytes } from '../../gateway/fields.ts';
import { sameCalendarMonth, GATEWAY_ZONE } from '../../lib/calendar.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError, StateConflictError, ValidationError, withDetails } from '../../lib/errors.ts';
import { afterCursor, createdWithin, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { lockAttempts, sweepExpiredAttempts } from '../ledger/attempts.ts';
import { createGatewayOperations } from '../ledger/gateway-operation.ts';
import { applyChargeDecline, applyChargeSuccess } from '../ledger/charge.outcomes.ts';
import { NEEDS_ATTENTION_WHERE, readPayment, serializePayment, type PaymentStatus } from './payments.service.ts';
import { REFUND_OUTCOME_UNKNOWN, SETTLEMENT_MISMATCH } from '../ledger/payment.state.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { moveCheckout } from '../ledger/checkout.state.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RefundRefusedError } from '../ledger/payment.errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';

type Tx = Prisma.TransactionClient;
/** What `resolve` settles: an UNKNOWN outcome, or a FAILED payment that a settlement file shows approved. */
const RESOLVABLE = [{ status: 'UNKNOWN' as const }, { status: 'FAILED' as const, attentionReason: SETTLEMENT_MISMATCH }];
const WITH_ATTEMPTS = { attempts: { orderBy: { attemptNumber: 'asc' as const } } };

export interface PaymentFilter {
  status?: PaymentStatus;
  needsAttention?: boolean;
  kind?: 'INITIAL' | 'RECURRING' | 'MANUAL' | 'ONE_TIME';
  method?: 'CARD' | 'MOBILE';
  subscriptionId?: string;
  userId?: string;
  createdFrom?: string;
  createdTo?: string;
  limit: number;
  cursor?: string;
}

export function createPaymentActions(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db, gateway, clock, config, log } = deps;
  const runOperation = createGatewayOperations({ db, clock, log });

  async function load(tx: Tx | Db, id: string) {
    const row = await tx.payment.findUnique({ where: { id }, include: WITH_ATTEMPTS });
    if (!row) throw new NotFoundError('Payment');
    return row;
  }

  async function listPayments(filter: PaymentFilter) {
    const rows = await db.payment.findMany({
      where: {
        status: filter.status,
        kind: filter.kind,
        method: filter.method,
        subscriptionId: filter.subscriptionId,
        ...(filter.userId ? { subscription: { userId: filter.userId } } : {}),
        ...createdWithin(filter),
        ...(filter.needsAttention === true ? NEEDS_ATTENTION_WHERE : {}),
        ...(filter.needsAttention === false ? { NOT: NEEDS_ATTENTION_WHERE } : {}),
        ...afterCursor(decodeCursor(filter.cursor)),
      },
      orderBy: PAGE_ORDER,
      take: filter.limit + 1,
    });
    const page = toPage(rows, filter.limit);
    return { items: page.items.map((row) => serializePayment(row)), nextCursor: page.nextCursor };
  }

  /** Clears the subscription's flag when no other payment of it is still UNKNOWN or a settlement mismatch. */
  async function clearAttention(tx: Tx, subscriptionId: string) {
    const stillOpen = await tx.payment.count({ where: { subscriptionId, OR: RESOLVABLE } });
    if (stillOpen === 0) {
      await tx.subscription.updateMany({
        where: { id: subscriptionId, attentionReason: { in: ['PAYMENT_OUTCOME_UNKNOWN', SETTLEMENT_MISMATCH] } },
        data: { needsAttention: false, attentionReason: null },
      });
    }
  }

  /**
   * UNKNOWN → SUCCEEDED (with the gateway's transactionId) or FAILED (handled like a decline: retry rules apply).
   * The UNKNOWN attempt takes the resolved outcome, so history and retries count it like a real answer. A FAILED
   * payment that a settlement file shows approved (SETTLEMENT_MISMATCH) resolves too: SUCCEEDED pays its cycle as a
   * success would; FAILED leaves our record as it stands (its retries go on as scheduled).
   */
  async function resolve(id: string, input: { outcome: 'SUCCEEDED' | 'FAILED'; transactionId?: string; approvedAt?: string }, who: Actor) {
    if (input.outcome === 'SUCCEEDED' && !input.transactionId) throw new ValidationError('transactionId is required to resolve as SUCCEEDED');
    if (input.outcome === 'FAILED' && input.transactionId) throw new ValidationError('transactionId is only for SUCCEEDED');
    const now = clock.now();
    return db.$transaction(async (tx) => {
      const before = await load(tx, id);
      // Fenced on the payment still being resolvable: two operators cannot both resolve it.
      const fenced = await tx.payment.updateMany({ where: { id, OR: RESOLVABLE }, data: { attentionReason: null } });
      if (fenced.count === 0) {
        throw new StateConflictError(
          `Only an UNKNOWN payment, or a FAILED one a settlement file shows approved, can be resolved; this one is ${before.status}`,
        );
      }
      const settling = before.status === 'FAILED';
      const unknownAttempt = [...before.attempts].reverse().find((a) => a.status === 'UNKNOWN');
      // Default: the time of the attempt the outcome is for (the UNKNOWN one, or the last charge of a settled FAILED one).
      const timed = unknownAttempt ?? (settling ? before.attempts.filter((a) => a.operation !== 'CANCEL').at(-1) : undefined);
      const approvedAt = input.approvedAt ? new Date(input.approvedAt) : (timed?.sentAt ?? timed?.createdAt ?? now);
      const note = `resolved by operator: ${who.reason}`.slice(0, 500);
      if (unknownAttempt) {
        await tx.paymentAttempt.update({
          where: { id: unknownAttempt.id },
          data:
            input.outcome === 'SUCCEEDED'
              ? { status: 'SUCCEEDED', transactionId: input.transactionId, approvedAt, gatewayMessage: note }
              : { status: 'DECLINED', gatewayCode: 'RESOLVED_FAILED', gatewayMessage: note },
        });
      }

      if (before.subscriptionId && before.cycle !== null && before.kind !== 'INITIAL') {
        if (settling && input.outcome === 'FAILED') {
          // Our record stands: the payment stays FAILED, its retry keeps its time.
        } else if (input.outcome === 'SUCCEEDED') {
          await applyChargeSuccess(tx, {
            subscriptionId: before.subscriptionId,
            paymentId: id,
            cycle: before.cycle,
            dueAt: before.dueAt ?? approvedAt,
            amount: before.amount,
            transactionId: input.transactionId!,
            approvedAt,
            timezone: config.timezone,
            move: settling ? 'settle' : 'succeed',
          });
        } else {
          await applyChargeDecline(tx, {
            subscriptionId: before.subscriptionId,
            paymentId: id,
            dueAt: before.dueAt ?? now,
            failureCode: 'RESOLVED_FAILED',
            failureMessage: note,
            retryDelaysMs: config.retryDelaysMs,
            now,
            timezone: config.timezone,
          });
        }
        // After the payment left UNKNOWN; a MOBILE_WINDOW_CLOSED flag set just now stays.
        await clearAttention(tx, before.subscriptionId);
      } else {
        await resolveCheckoutPayment(tx, before, input.outcome, input.transactionId, approvedAt, note);
      }
      const after = await load(tx, id);
      await writeAudit(tx, {
        ...who,
        action: `payment.resolve_${input.outcome.toLowerCase()}`,
        entityType: 'payment',
        entityId: id,
        before: serializePayment(before),
        after: serializePayment(after),
      });
      return serializePayment(after);
    });
  }

  /**
   * A registration's or one-time order's payment. An order completes or fails with it. A registration whose key
   * issuance was UNKNOWN cannot complete even if the money moved (the billing key never reached us): it fails with
   * KEY_NOT_RECEIVED, and the operator refunds the payment and asks the customer to register again.
   */
  async function resolveCheckoutPayment(
    tx: Tx,
    payment: Awaited<ReturnType<typeof load>>,
    outcome: 'SUCCEEDED' | 'FAILED',
    transactionId: string | undefined,
    approvedAt: Date,
    note: string,
  ) {
    if (outcome === 'SUCCEEDED') await transitionPayment(tx, payment.id, 'succeed', { transactionId, approvedAt });
    else await transitionPayment(tx, payment.id, 'fail', { failureCode: 'RESOLVED_FAILED', failureMessage: note });
    if (payment.oneTimeOrderId) {
      if (outcome === 'SUCCEEDED') {
        await moveCheckout(tx, 'order', payment.oneTimeOrderId, 'complete', { data: { completedAt: approvedAt, failureCode: null, failureMessage: null } });
      } else {
        await moveCheckout(tx, 'order', payment.oneTimeOrderId, 'fail', { data: { failureCode: 'RESOLVED_FAILED', failureMessage: note } });
      }
    } else if (payment.registrationId) {
      await moveCheckout(tx, 'registration', payment.registrationId, 'fail', {
        data: { failureCode: outcome === 'SUCCEEDED' ? 'KEY_NOT_RECEIVED' : 'RESOLVED_FAILED', failureMessage: note },
      });
    }
  }

  /**
   * Refund through the gateway's cancellation. Checked before calling: the payment succeeded and has something
   * left; MOBILE only in full and only within the payment's calendar month in Korea time; CARD partial refunds up
   * to what remains. Write before call: a CANCEL attempt is committed (with the audit event) before the call, and
   * an earlier refund whose outcome is unknown blocks another.
   */
  async function refund(id: string, input: { amount?: number }, who: Actor) {
    const now = clock.now();
    const leaseOwner = randomUUID();
    if (utf8Bytes(who.reason) > 200) throw new ValidationError('reason is over the gateway’s 200 bytes for a cancellation reason');
    // Committed on its own: a refund refused below still leaves a dead process's refund visible as unknown.
    await sweepExpiredAttempts(db, now, log, id);
    const { result, after } = await runOperation({
      prepare: async () => ({ ready: await prepareRefund(id, input, who, leaseOwner, now) }),
      call: (ready) =>
        gateway.cancelPayment({
          method: ready.payment.method,
          transactionId: ready.payment.transactionId!,
          amount: ready.amount,
          cancelType: ready.cancelType,
          cancelReason: who.reason,
          cancelRequester: 'MERCHANT_OPERATOR',
        }),
      record: async (tx, ready, answer, at) => {
        if (answer.outcome === 'SUCCEEDED') {
          const updated = await tx.payment.update({ where: { id }, data: { canceledAmount: { increment: ready.amount }, canceledAt: at } });
          if (updated.canceledAmount === updated.amount) await transitionPayment(tx, id, 'refund');
        } else if (answer.outcome === 'UNKNOWN') {
          await tx.payment.update({ where: { id }, data: { attentionReason: REFUND_OUTCOME_UNKNOWN } });
        }
        return { result: answer, after: await load(tx, id) };
      },
      // The cancellation may have gone through: the attempt stays for the sweeper, the operator learns so.
      unrecorded: (ready, _answer, reason) => {
        throw withDetails(new PaymentOutcomeUnknownError(`the refund's answer could not be recorded (${reason})`), {
          paymentId: id,
          refundAttemptId: ready.attemptId,
          reason,
        });
      },
    });
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
   * The refund's checks and its CANCEL attempt, committed with the audit event before the call (rule 1). All of it
   * under the payment's row lock (lockAttempts): a concurrent refund waits, then finds this one in flight (409).
   */
  function prepareRefund(id: string, input: { amount?: number }, who: Actor, leaseOwner: string, now: Date) {
    return db.$transaction(async (tx) => {
      const attempts = await lockAttempts(tx, id);
      const payment = await load(tx, id);
      if (payment.status !== 'SUCCEEDED' || !payment.transactionId) {
        throw new RefundRefusedError.PAYMENT_NOT_REFUNDABLE(`Only a SUCCEEDED payment can be refunded; this one is ${payment.status}`);
      }
      const pendingRefund = payment.attempts.find((a) => a.operation === 'CANCEL' && (a.status === 'UNKNOWN' || a.status === 'IN_FLIGHT'));
      if (pendingRefund) {
        const why =
          pendingRefund.status === 'IN_FLIGHT'
            ? 'A refund of this payment is in progress'
            : 'An earlier refund of this payment has an unknown outcome; resolve it first';
        throw withDetails(new StateConflictError(why), { paymentId: id });
      }
      const remaining = payment.amount - payment.canceledAmount;
      const amount = input.amount ?? remaining;
      if (payment.method === 'MOBILE') {
        if (amount !== payment.amount || payment.canceledAmount > 0)
          throw new RefundRefusedError.MOBILE_PARTIAL_CANCEL('A MOBILE payment can only be refunded in full');
        if (!sameCalendarMonth(payment.approvedAt ?? payment.createdAt, now, GATEWAY_ZONE)) {
          throw new RefundRefusedError.MOBILE_CANCEL_MONTH_CLOSED('A MOBILE payment can only be refunded within its calendar month (Korea time)');
        }
      }
      if (amount > remaining) throw new RefundRefusedError.AMOUNT_EXCEEDS_REMAINING(`At most ${remaining} can be refunded`);
      const attempt = await attempts.append({
        operation: 'CANCEL',
        orderId: (attemptNumber) => `X${id.replace(/-/g, '')}-${attemptNumber}`,
        amount,
        leaseOwner,
        leaseExpiresAt: new Date(now.getTime() + config.scheduler.leaseMs),
      });
      await writeAudit(tx, {
        ...who,
        action: 'payment.refund',
        entityType: 'payment',
        entityId: id,
        before: serializePayment(payment),
        after: { refundAttemptId: attempt.id, amount },
      });
      return { payment, attemptId: attempt.id, leaseOwner, amount, cancelType: amount === remaining ? ('C' as const) : ('P' as const) };
    });
  }

  /**
   * Settles a refund whose outcome is unknown, after the operator asked the gateway: SUCCEEDED counts its amount as
   * refunded (the payment is CANCELED when nothing remains), FAILED records that nothing was refunded. Either way
   * the payment can be refunded again. Fenced on the refund still being UNKNOWN.
   */
  async function resolveRefund(id: string, input: { outcome: 'SUCCEEDED' | 'FAILED' }, who: Actor) {
    const now = clock.now();
    await sweepExpiredAttempts(db, now, log, id);
    return db.$transaction(async (tx) => {
      const before = await load(tx, id);
      const refund = before.attempts.find((a) => a.operation === 'CANCEL' && a.status === 'UNKNOWN');
      if (!refund) throw new StateConflictError('No refund of this payment has an unknown outcome');
      const note = `resolved by operator: ${who.reason}`.slice(0, 500);
      const fenced = await tx.paymentAttempt.updateMany({
        where: { id: refund.id, status: 'UNKNOWN' },
        data:
          input.outcome === 'SUCCEEDED'
            ? { status: 'SUCCEEDED', gatewayMessage: note, completedAt: now }
            : { status: 'DECLINED', gatewayCode: 'RESOLVED_FAILED', gatewayMessage: note, completedAt: now },
      });
      if (fenced.count === 0) throw new StateConflictError('This refund was settled meanwhile');
      const stillUnknown = before.attempts.some((a) => a.id !== refund.id && a.operation === 'CANCEL' && a.status === 'UNKNOWN');
      const canceledAmount = before.canceledAmount + (input.outcome === 'SUCCEEDED' ? refund.amount : 0);
      await tx.payment.update({
        where: { id },
        data: {
          canceledAmount,
          canceledAt: input.outcome === 'SUCCEEDED' ? now : before.canceledAt,
          attentionReason: stillUnknown ? REFUND_OUTCOME_UNKNOWN : null,
        },
      });
      if (canceledAmount === before.amount) await transitionPayment(tx, id, 'refund');
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

  return { listPayments, getPayment: async (id: string) => serializePayment(await readPayment(db, id)), resolve, refund, resolveRefund };
}

export type PaymentActions = ReturnType<typeof createPaymentActions>;
