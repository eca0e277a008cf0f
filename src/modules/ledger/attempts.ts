// Write before you call, record after (docs/architecture.md, invariants 1, 3, 4): an attempt row is committed IN_FLIGHT with
// its orderId and a lease before the gateway is called, and its outcome is written afterwards, fenced on the
// row still being IN_FLIGHT under the same lease so a stale writer changes nothing.
// The database adds (prisma/functions/): event refunds (events.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { PaymentAttempt, Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import { NotFoundError, StateConflictError, withDetails } from '../../lib/errors.ts';
import { REFUND_OUTCOME_UNKNOWN, transitionPayment } from './payment.state.ts';
import { moveCheckout } from './checkout.state.ts';
import { createAttempt, transitionAttempt } from './attempt.state.ts';

type Tx = Prisma.TransactionClient;

export class StaleLeaseError extends Error {
  override name = 'StaleLeaseError';
  constructor(what: string) {
    super(`${what} is no longer held by this request; its outcome was not recorded`);
  }
}

/** Records the gateway's answer on an IN_FLIGHT attempt held by `leaseOwner`; throws StaleLeaseError otherwise. */
export async function recordAttemptOutcome(tx: Tx, input: { attemptId: string; leaseOwner: string; result: GatewayResult; now: Date }): Promise<void> {
  const { status, ...values } = attemptOutcomeValues(input.result, input.now);
  const recorded = await transitionAttempt(
    tx,
    input.attemptId,
    'answer',
    status,
    { ...values, leaseOwner: null, leaseExpiresAt: null },
    { leaseOwner: input.leaseOwner },
  );
  if (!recorded) throw new StaleLeaseError(`attempt ${input.attemptId}`);
}

/** What an attempt's row records of the gateway's answer (recordAttemptOutcome, and the one-statement charge record). */
export function attemptOutcomeValues(result: GatewayResult, now: Date) {
  return {
    status: result.outcome,
    sentAt: result.reason === 'INVALID_REQUEST' || result.reason === 'NOT_CALLED' ? null : now,
    completedAt: now,
    gatewayCode: result.code ?? null,
    gatewayMessage: result.message ?? result.detail ?? null,
    transactionId: result.fields.transactionId ?? null,
    approvedAt: result.outcome === 'SUCCEEDED' ? (result.fields.transactionDateTime ?? now) : null,
    rawResponse: {
      reason: result.reason,
      detail: result.detail ?? null,
      httpStatus: result.httpStatus ?? null,
      body: (result.raw ?? null) as Prisma.InputJsonValue,
    },
  };
}

/** An attempt left IN_FLIGHT past its lease by a process that died: money may have moved (invariant 4). */
export async function expireAttempt(tx: Tx, attemptId: string, now: Date): Promise<boolean> {
  const expired = await transitionAttempt(
    tx,
    attemptId,
    'expire',
    'UNKNOWN',
    {
      leaseOwner: null,
      leaseExpiresAt: null,
      completedAt: now,
      gatewayMessage: 'the process calling the gateway stopped before recording the answer (lease expired)',
      rawResponse: { reason: 'LEASE_EXPIRED' },
    },
    { leaseExpiresAt: { lt: now } },
  );
  return expired;
}

interface StaleAttempt {
  id: string;
  paymentId: string;
  operation: 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'PAYMENT_CONFIRM' | 'CANCEL';
  payment: { subscriptionId: string | null; registrationId: string | null; oneTimeOrderId: string | null };
}

/**
 * One attempt left IN_FLIGHT past its lease becomes UNKNOWN (invariant 4), and what it belongs to is raised for an
 * operator: a refund marks its payment REFUND_OUTCOME_UNKNOWN (the payment itself stays SUCCEEDED); any other
 * operation makes its payment UNKNOWN and raises the subscription, or puts the registration or order whose lease
 * has also run out in NEEDS_ATTENTION. False when the attempt was no longer in flight.
 */
export async function expireAndRaise(tx: Tx, attempt: StaleAttempt, now: Date): Promise<boolean> {
  if (!(await expireAttempt(tx, attempt.id, now))) return false;
  if (attempt.operation === 'CANCEL') {
    await tx.payment.update({ where: { id: attempt.paymentId }, data: { attentionReason: REFUND_OUTCOME_UNKNOWN } });
    return true;
  }
  await transitionPayment(tx, attempt.paymentId, 'lose', { attentionReason: 'LEASE_EXPIRED' });
  const { subscriptionId, registrationId, oneTimeOrderId } = attempt.payment;
  const waiting = {
    fence: { leaseExpiredBy: now },
    data: { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: 'the process calling the gateway stopped before recording the answer', releaseLease: true },
  };
  if (attempt.operation === 'BILLING_CONFIRM' && subscriptionId) {
    await tx.subscription.update({ where: { id: subscriptionId }, data: { needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' } });
  } else if (registrationId) {
    await moveCheckout(tx, 'registration', registrationId, 'hold', waiting);
  } else if (oneTimeOrderId) {
    await moveCheckout(tx, 'order', oneTimeOrderId, 'hold', waiting);
  }
  return true;
}

const STALE_SELECT = {
  id: true,
  paymentId: true,
  orderId: true,
  operation: true,
  payment: { select: { subscriptionId: true, registrationId: true, oneTimeOrderId: true } },
} as const;

/**
 * The one sweeper: every attempt of every operation (key issuance, confirmation, charge, refund) left
 * IN_FLIGHT past its lease by a process that died becomes UNKNOWN and raises its owner. Nothing is sent again.
 * `paymentId` limits it to one payment (a refund asked for now need not wait for the next pass).
 */
export async function sweepExpiredAttempts(db: Db, now: Date, log: Pick<Logger, 'warn'>, paymentId?: string): Promise<number> {
  const stale = await db.paymentAttempt.findMany({
    where: { status: 'IN_FLIGHT', leaseExpiresAt: { lt: now }, ...(paymentId ? { paymentId } : {}) },
    select: STALE_SELECT,
    take: 1000,
  });
  let expired = 0;
  for (const attempt of stale) {
    if (await db.$transaction((tx) => expireAndRaise(tx, attempt, now))) {
      expired += 1;
      log.warn(
        { paymentId: attempt.paymentId, orderId: attempt.orderId, operation: attempt.operation },
        'attempt left in flight by a stopped process is now UNKNOWN',
      );
    }
  }
  return expired;
}

export interface PreparedAttempt {
  /** Undefined when no call may be made: an earlier outcome is unknown and allowAfterUnknown is false. */
  attemptId: string | undefined;
  /** The orderId the call must carry (a NOT_SENT attempt keeps its own). */
  orderId: string | undefined;
  /** An earlier attempt's outcome is unknown (money may have moved): a decline now proves nothing. */
  hadUnknown: boolean;
}

export interface NewAttempt {
  operation: 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'PAYMENT_CONFIRM' | 'CANCEL';
  /** The attempt's orderId, or a function of its attempt number (billing charges, refunds: invariant 2). */
  orderId: string | ((attemptNumber: number) => string);
  amount: number;
  leaseOwner: string;
  leaseExpiresAt: Date;
  /** A refund's (CANCEL) reason, as the operator gave it. */
  reason?: string;
}

/** A payment's attempts as read under a lock of its row, and the one way to number its next attempt. */
export interface LockedAttempts {
  /** The attempt with the highest number, or null. */
  latest: PaymentAttempt | null;
  /**
   * Writes the next attempt IN_FLIGHT, numbered after the last. Refused with 409 STATE_CONFLICT while the last is
   * still IN_FLIGHT: a call of this payment is under way (or died, and must become UNKNOWN first: invariant 4), and two
   * calls of one payment are never in flight at once.
   */
  append(input: NewAttempt): Promise<{ id: string; attemptNumber: number; orderId: string }>;
}

/**
 * Locks the payment's row until the transaction ends (SELECT … FOR UPDATE), then reads its last attempt. Every new
 * attempt of an existing payment is numbered through here, and whatever decides it (a call in flight, an outcome
 * unknown, a refund's remainder) is read after it: concurrent callers queue on the row, and each one's later
 * statements see what the one before it committed (READ COMMITTED takes a snapshot per statement, which is why the
 * read is a statement of its own after the lock), so no two take the same number (the unique index on
 * (paymentId, attemptNumber)) and no rule is passed by two at once. NotFoundError when the payment does not exist.
 */
export async function lockAttempts(tx: Tx, paymentId: string): Promise<LockedAttempts> {
  const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "payments" WHERE "id" = ${paymentId}::uuid FOR UPDATE`;
  if (locked.length === 0) throw new NotFoundError('Payment');
  const attempts: LockedAttempts = {
    latest: await tx.paymentAttempt.findFirst({ where: { paymentId }, orderBy: { attemptNumber: 'desc' } }),
    async append(input) {
      const { latest } = attempts;
      if (latest?.status === 'IN_FLIGHT') {
        throw withDetails(new StateConflictError('A gateway call of this payment is in progress'), { paymentId });
      }
      const attemptNumber = (latest?.attemptNumber ?? 0) + 1;
      const orderId = typeof input.orderId === 'function' ? input.orderId(attemptNumber) : input.orderId;
      attempts.latest = await createAttempt(tx, {
        paymentId,
        attemptNumber,
        operation: input.operation,
        orderId,
        amount: input.amount,
        leaseOwner: input.leaseOwner,
        leaseExpiresAt: input.leaseExpiresAt,
        reason: input.reason,
      });
      return { id: attempts.latest.id, attemptNumber, orderId };
    },
  };
  return attempts;
}

/**
 * The first attempt of a payment created in this same transaction (its attemptCount already 1 and its orderId this
 * one): nothing to look up or lock, since no other transaction sees the payment before this one commits. One
 * statement, where prepareAttempt locks and reads first.
 */
export async function firstAttempt(
  tx: Tx,
  input: { paymentId: string; operation: 'BILLING_CONFIRM'; orderId: string; amount: number; leaseOwner: string; leaseExpiresAt: Date },
): Promise<PreparedAttempt> {
  const attempt = await createAttempt(tx, { ...input, attemptNumber: 1 });
  return { attemptId: attempt.id, orderId: input.orderId, hadUnknown: false };
}

/**
 * The IN_FLIGHT attempt a call is about to make for `paymentId` (invariant 1), decided under the payment's row lock
 * (lockAttempts). An attempt left IN_FLIGHT past its lease becomes UNKNOWN first (invariant 4); one still under its lease
 * is another call in progress: 409 STATE_CONFLICT. When any attempt is UNKNOWN, no new call is prepared unless
 * `allowAfterUnknown` (only a key-issuance replay, which the gateway's single-use window transaction makes safe). A
 * NOT_SENT attempt is sent again as the same row with the same orderId; otherwise a new attempt is numbered after
 * the last.
 */
export async function prepareAttempt(tx: Tx, input: NewAttempt & { paymentId: string; now: Date; allowAfterUnknown: boolean }): Promise<PreparedAttempt> {
  const attempts = await lockAttempts(tx, input.paymentId);
  const { latest } = attempts;
  if (latest?.status === 'IN_FLIGHT' && (await expireAttempt(tx, latest.id, input.now))) {
    await transitionPayment(tx, input.paymentId, 'lose', { attentionReason: 'LEASE_EXPIRED' });
    attempts.latest = await tx.paymentAttempt.findUniqueOrThrow({ where: { id: latest.id } });
  }
  const hadUnknown = (await tx.paymentAttempt.count({ where: { paymentId: input.paymentId, status: 'UNKNOWN' } })) > 0;
  if (hadUnknown && !input.allowAfterUnknown) return { attemptId: undefined, orderId: undefined, hadUnknown };
  if (attempts.latest?.status === 'NOT_SENT') {
    const notSent = attempts.latest;
    // Under the payment's lock nobody else moves it; a NOT_SENT attempt that moved anyway is a state conflict, not a resend.
    if (!(await transitionAttempt(tx, notSent.id, 'resend', 'IN_FLIGHT', { leaseOwner: input.leaseOwner, leaseExpiresAt: input.leaseExpiresAt }))) {
      throw new StateConflictError('The attempt to send again is no longer NOT_SENT');
    }
    return { attemptId: notSent.id, orderId: notSent.orderId, hadUnknown };
  }
  const attempt = await attempts.append(input);
  await tx.payment.update({ where: { id: input.paymentId }, data: { attemptCount: { increment: 1 }, orderId: attempt.orderId } });
  return { attemptId: attempt.id, orderId: attempt.orderId, hadUnknown };
}
