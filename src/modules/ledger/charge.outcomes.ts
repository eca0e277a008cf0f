// What a charge's final outcome does to its payment and subscription. Shared by the charging engine (the
// gateway's answer) and by an operator resolving an UNKNOWN payment, so both move a subscription the same way.
// Callers run these inside the transaction that fences the write (lease, or the payment still being UNKNOWN).
// The database adds (prisma/functions/): events (events.sql), MRR movements (mrr.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';
import type { DeclineKind } from '../../gateway/gateway.ts';
import { isLive, periodAfterSuccess, planAfterDecline, type ChargeableSubscription, type DeclinePlan } from './schedule.rules.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { transitionPayment } from './payment.state.ts';
import { SUBSCRIPTION_TRANSITIONS, transitionSubscription } from './subscription.state.ts';

type Tx = Prisma.TransactionClient;

export interface SuccessInput {
  subscriptionId: string;
  paymentId: string;
  cycle: number;
  /** When the cycle was due (CARD periods start there). */
  dueAt: Date;
  amount: number;
  transactionId: string;
  approvedAt: Date;
  timezone: string;
  /** The service's clock as the success is recorded: the time of the MRR movement it may cause (a trial converted, an increase applied). */
  now: Date;
  /** The subscription as this transaction already read and locked it (the charge record's lease release), if it did. */
  current?: Prisma.SubscriptionGetPayload<object>;
  /** The payment's move: `succeed` (from PENDING or UNKNOWN), or `settle` (a FAILED one a settlement file shows approved). */
  move?: 'succeed' | 'settle';
}

/** The statuses a success moves to ACTIVE (a converted trial, a recovered subscription): subscription.state.ts's `recover`. */
export const RECOVERING: readonly string[] = SUBSCRIPTION_TRANSITIONS.recover.from.filter((status) => status !== SUBSCRIPTION_TRANSITIONS.recover.to);

/**
 * What a charge's success writes, built once from the rules (docs/architecture.md, invariants 6, 9, 10): the payment's values, and the
 * subscription's next cycle, period and MOBILE chain head. Two renderings apply it: applyChargeSuccess below (Prisma,
 * on the row it read) and the one-statement record of a new cycle (payments/charge.record.ts, SQL, where the status
 * decides in a CASE what `subscriptionAfterSuccess` decides here); test/modules/payments/charge-paths.test.ts runs
 * the same charges down both and compares the rows and the events.
 */
export function chargeSuccessWrite(
  sub: Pick<ChargeableSubscription, 'method' | 'anchorAt' | 'intervalUnit' | 'intervalCount'>,
  paid: Pick<SuccessInput, 'cycle' | 'dueAt' | 'amount' | 'transactionId' | 'approvedAt' | 'timezone' | 'now'>,
) {
  const { nextCycle, period } = periodAfterSuccess(sub, paid);
  return {
    payment: {
      transactionId: paid.transactionId,
      approvedAt: paid.approvedAt,
      failureCode: null,
      failureMessage: null,
      attentionReason: null,
      nextRetryAt: null,
    },
    /** The cycle is at least this one (a later cycle already reached stays). */
    nextCycle,
    period,
    chainHead: { lastTransactionId: paid.transactionId, lastAmount: paid.amount, lastTransactionAt: paid.approvedAt },
    /** The time of the MRR movement the success may cause (a trial converted, an increase applied). */
    changedAt: paid.now,
  };
}

export type ChargeSuccessWrite = ReturnType<typeof chargeSuccessWrite>;

/**
 * The subscription's columns after a success, by the row the success finds: scheduled at the period's end while it
 * is live, its schedule kept while paused, nothing once cancelled (paused or cancelled while the call was out: the
 * success is recorded, nothing is scheduled); a pending increase that was charged (its consent counted) becomes the
 * amount; a recovering status becomes ACTIVE (RECOVERING).
 */
export function subscriptionAfterSuccess(sub: Pick<ChargeableSubscription, 'status' | 'cycle' | 'nextChargeAt' | 'pendingAmount'>, write: ChargeSuccessWrite) {
  const pendingCharged = sub.pendingAmount !== null && sub.pendingAmount === write.chainHead.lastAmount;
  return {
    recover: RECOVERING.includes(sub.status),
    data: {
      cycle: Math.max(sub.cycle, write.nextCycle),
      currentPeriodStart: write.period.start,
      currentPeriodEnd: write.period.end,
      nextChargeAt: isLive(sub.status) ? write.period.end : sub.status === 'PAUSED' ? sub.nextChargeAt : null,
      ...write.chainHead,
      changedAt: write.changedAt,
      ...(pendingCharged ? { amount: write.chainHead.lastAmount, pendingAmount: null, pendingAmountRequestedAt: null } : {}),
    },
  };
}

/**
 * The subscription read under its row lock, for a writer that did not lock it already (an operator's resolve, a
 * settlement file): a concurrent pause or price change waits, instead of being overwritten by what this read.
 */
async function lockedSubscription(tx: Tx, id: string) {
  await tx.$queryRaw`SELECT 1 FROM "subscriptions" WHERE "id" = ${id}::uuid FOR UPDATE`;
  return tx.subscription.findUniqueOrThrow({ where: { id } });
}

/**
 * The payment SUCCEEDED; the subscription moves to the next cycle: CARD on its anchor (past the period that contains
 * the payment), MOBILE one month after this success, whose transactionId becomes the chain head in this same
 * transaction (invariant 6). One update of each row, as the one-statement record makes.
 */
export async function applyChargeSuccess(tx: Tx, input: SuccessInput): Promise<void> {
  const sub = input.current ?? (await lockedSubscription(tx, input.subscriptionId));
  const write = chargeSuccessWrite(sub, input);
  await transitionPayment(tx, input.paymentId, input.move ?? 'succeed', write.payment);
  const { recover, data } = subscriptionAfterSuccess(sub, write);
  if (recover) await transitionSubscription(tx, sub.id, 'recover', data);
  else await tx.subscription.update({ where: { id: sub.id }, data });
}

/** The declines that count for a payment's retries: those since a new payment method reset them (retriesFrom). */
export function countDeclines(tx: Tx | Db, payment: { id: string; retriesFrom: Date | null }): Promise<number> {
  return tx.paymentAttempt.count({
    where: { paymentId: payment.id, status: 'DECLINED', completedAt: payment.retriesFrom ? { gte: payment.retriesFrom } : undefined },
  });
}

/**
 * The attention a subscription waits under after its gateway declined the instrument as dead (expired, stopped, a
 * key no longer valid or bound to another customer): PAST_DUE, nothing scheduled, until a new payment method
 * (registrations/replace-payment-method.record.ts clears it and charges the cycle again).
 */
export const PAYMENT_METHOD_INVALID = 'PAYMENT_METHOD_INVALID';

export interface DeclineInput {
  subscriptionId: string;
  paymentId: string;
  dueAt: Date;
  failureCode: string | null;
  failureMessage: string | null;
  /** The answer's decline kind (GatewayResult.decline); absent: a decline that may recover (an operator's FAILED resolve). */
  decline?: DeclineKind;
  retryDelaysMs: number[];
  now: Date;
  timezone: string;
}

/**
 * The payment FAILED (invariant 11): retry at the next delay (PAST_DUE), or CANCELED with RETRIES_EXHAUSTED when the
 * delays have run out, or — MOBILE — PAST_DUE with MOBILE_WINDOW_CLOSED when the next retry would fall outside
 * the window, or — a dead instrument — PAST_DUE with PAYMENT_METHOD_INVALID and no retry. Declines are counted from
 * the payment's DECLINED attempts.
 */
export async function applyChargeDecline(tx: Tx, input: DeclineInput): Promise<{ plan: DeclinePlan; declines: number }> {
  const { retriesFrom } = await tx.payment.findUniqueOrThrow({ where: { id: input.paymentId }, select: { retriesFrom: true } });
  const declines = await countDeclines(tx, { id: input.paymentId, retriesFrom });
  await transitionPayment(tx, input.paymentId, 'fail', { failureCode: input.failureCode, failureMessage: input.failureMessage });
  const payment = await tx.payment.findUniqueOrThrow({ where: { id: input.paymentId }, select: { cycle: true } });
  const sub = await tx.subscription.findUniqueOrThrow({ where: { id: input.subscriptionId } });
  const plan = planAfterDecline({
    method: sub.method,
    ...(input.decline ? { decline: input.decline } : {}),
    dueAt: retriesFrom ?? input.dueAt,
    declines,
    retryDelaysMs: input.retryDelaysMs,
    lastTransactionAt: sub.lastTransactionAt,
    now: input.now,
    timezone: input.timezone,
  });
  // Paused, cancelled, or moved past this cycle (a resume while the call was out starts at the next boundary): the
  // decline is recorded, and nothing is rescheduled for a cycle the subscription no longer owes.
  if (!isLive(sub.status) || payment.cycle !== sub.cycle) return { plan, declines };
  if (plan.action === 'RETRY') {
    await tx.payment.update({ where: { id: input.paymentId }, data: { nextRetryAt: plan.retryAt } });
    await transitionSubscription(tx, sub.id, 'decline', { nextChargeAt: plan.retryAt, changedAt: input.now });
  } else if (plan.action === 'CANCEL') {
    await transitionSubscription(tx, sub.id, 'cancel', { canceledAt: input.now, nextChargeAt: null, cancelReason: plan.reason, changedAt: input.now });
    await revokeBillingKey(tx, sub.billingKeyId, input.now);
  } else {
    // Nothing can be tried until the customer gives a payment method again: PAST_DUE, nothing scheduled, raised.
    await transitionSubscription(tx, sub.id, 'decline', {
      nextChargeAt: null,
      needsAttention: true,
      attentionReason: plan.action === 'METHOD_INVALID' ? PAYMENT_METHOD_INVALID : 'MOBILE_WINDOW_CLOSED',
      changedAt: input.now,
    });
  }
  return { plan, declines };
}
