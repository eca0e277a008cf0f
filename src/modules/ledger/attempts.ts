// Write before you call, record after (DESIGN.md §3 rules 1, 3, 4): an attempt row is committed IN_FLIGHT with
// its orderId and a lease before the gateway is called, and its outcome is written afterwards, fenced on the
// row still being IN_FLIGHT under the same lease so a stale writer changes nothing.
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import { REFUND_OUTCOME_UNKNOWN, transitionPayment } from './payment.state.ts';
import { moveCheckout } from './checkout.state.ts';

type Tx = Prisma.TransactionClient;

export class StaleLeaseError extends Error {
  override name = 'StaleLeaseError';
  constructor(what: string) {
    super(`${what} is no longer held by this request; its outcome was not recorded`);
  }
}

/** Records the gateway's answer on an IN_FLIGHT attempt held by `leaseOwner`; throws StaleLeaseError otherwise. */
export async function recordAttemptOutcome(tx: Tx, input: { attemptId: string; leaseOwner: string; result: GatewayResult; now: Date }): Promise<void> {
  const fenced = await tx.paymentAttempt.updateMany({
    where: { id: input.attemptId, status: 'IN_FLIGHT', leaseOwner: input.leaseOwner },
    data: { ...attemptOutcomeValues(input.result, input.now), leaseOwner: null, leaseExpiresAt: null },
  });
  if (fenced.count === 0) throw new StaleLeaseError(`attempt ${input.attemptId}`);
}

/** What an attempt's row records of the gateway's answer (recordAttemptOutcome, and the engine's one-statement success). */
export function attemptOutcomeValues(result: GatewayResult, now: Date) {
  return {
    status: result.outcome,
    sentAt: result.reason === 'INVALID_REQUEST' ? null : now,
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

/** An attempt left IN_FLIGHT past its lease by a process that died: money may have moved (rule 4). */
export async function expireAttempt(tx: Tx, attemptId: string, now: Date): Promise<boolean> {
  const expired = await tx.paymentAttempt.updateMany({
    where: { id: attemptId, status: 'IN_FLIGHT', leaseExpiresAt: { lt: now } },
    data: {
      status: 'UNKNOWN',
      leaseOwner: null,
      leaseExpiresAt: null,
      completedAt: now,
      gatewayMessage: 'the process calling the gateway stopped before recording the answer (lease expired)',
      rawResponse: { reason: 'LEASE_EXPIRED' },
    },
  });
  return expired.count === 1;
}

interface StaleAttempt {
  id: string;
  paymentId: string;
  operation: 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'PAYMENT_CONFIRM' | 'CANCEL';
  payment: { subscriptionId: string | null; registrationId: string | null; oneTimeOrderId: string | null };
}

/**
 * One attempt left IN_FLIGHT past its lease becomes UNKNOWN (rule 4), and what it belongs to is raised for an
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
 * The one sweeper (issue #12): every attempt of every operation (key issuance, confirmation, charge, refund) left
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
  /** A dead process's IN_FLIGHT attempt was just turned UNKNOWN by this call. */
  expiredInFlight: boolean;
}

/**
 * The IN_FLIGHT attempt a call is about to make for `paymentId` (rule 1). An attempt left IN_FLIGHT past its
 * lease becomes UNKNOWN first (rule 4). When any attempt is UNKNOWN, no new call is prepared unless
 * `allowAfterUnknown` (only a key-issuance replay, which the gateway's single-use window transaction makes
 * safe). A NOT_SENT attempt is sent again as the same row with the same orderId; otherwise a new attempt is
 * numbered after the last.
 */
/**
 * The first attempt of a payment created in this same transaction (its attemptCount already 1 and its orderId this
 * one): nothing to look up, since a new payment has no attempts. One statement where prepareAttempt takes five.
 */
export async function firstAttempt(
  tx: Tx,
  input: { paymentId: string; operation: 'BILLING_CONFIRM'; orderId: string; amount: number; leaseOwner: string; leaseExpiresAt: Date },
): Promise<PreparedAttempt> {
  const attempt = await tx.paymentAttempt.create({ data: { ...input, attemptNumber: 1 } });
  return { attemptId: attempt.id, orderId: input.orderId, hadUnknown: false, expiredInFlight: false };
}

export async function prepareAttempt(
  tx: Tx,
  input: {
    paymentId: string;
    operation: 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'PAYMENT_CONFIRM' | 'CANCEL';
    /** The attempt's orderId, or a function of its attempt number (billing charges: rule 2). */
    orderId: string | ((attemptNumber: number) => string);
    amount: number;
    leaseOwner: string;
    leaseExpiresAt: Date;
    now: Date;
    allowAfterUnknown: boolean;
  },
): Promise<PreparedAttempt> {
  let latest = await tx.paymentAttempt.findFirst({ where: { paymentId: input.paymentId }, orderBy: { attemptNumber: 'desc' } });
  let expiredInFlight = false;
  if (latest?.status === 'IN_FLIGHT' && (await expireAttempt(tx, latest.id, input.now))) {
    expiredInFlight = true;
    await transitionPayment(tx, input.paymentId, 'lose', { attentionReason: 'LEASE_EXPIRED' });
    latest = await tx.paymentAttempt.findUniqueOrThrow({ where: { id: latest.id } });
  }
  const hadUnknown = (await tx.paymentAttempt.count({ where: { paymentId: input.paymentId, status: 'UNKNOWN' } })) > 0;
  if (hadUnknown && !input.allowAfterUnknown) return { attemptId: undefined, orderId: undefined, hadUnknown, expiredInFlight };
  if (latest?.status === 'NOT_SENT') {
    await tx.paymentAttempt.update({
      where: { id: latest.id },
      data: { status: 'IN_FLIGHT', leaseOwner: input.leaseOwner, leaseExpiresAt: input.leaseExpiresAt },
    });
    return { attemptId: latest.id, orderId: latest.orderId, hadUnknown, expiredInFlight };
  }
  const attemptNumber = (latest?.attemptNumber ?? 0) + 1;
  const orderId = typeof input.orderId === 'function' ? input.orderId(attemptNumber) : input.orderId;
  const attempt = await tx.paymentAttempt.create({
    data: {
      paymentId: input.paymentId,
      attemptNumber,
      operation: input.operation,
      orderId,
      amount: input.amount,
      leaseOwner: input.leaseOwner,
      leaseExpiresAt: input.leaseExpiresAt,
    },
  });
  await tx.payment.update({ where: { id: input.paymentId }, data: { attemptCount: { increment: 1 }, orderId } });
  return { attemptId: attempt.id, orderId, hadUnknown, expiredInFlight };
}
