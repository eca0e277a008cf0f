// What a charge's final outcome does to its payment and subscription. Shared by the charging engine (the
// gateway's answer) and by an operator resolving an UNKNOWN payment, so both move a subscription the same way.
// Callers run these inside the transaction that fences the write (lease, or the payment still being UNKNOWN).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';
import { isLive, periodAfterSuccess, planAfterDecline, type DeclinePlan } from './schedule.rules.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { transitionPayment } from './payment.state.ts';
import { transitionSubscription } from './subscription.state.ts';

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
  /** The subscription as this transaction already read and locked it (the engine's lease release), if it did. */
  current?: Prisma.SubscriptionGetPayload<object>;
}

/**
 * The payment SUCCEEDED; the subscription moves to the next cycle: CARD on its anchor (past the period that contains
 * the payment), MOBILE one month after this success, whose transactionId becomes the chain head in this same
 * transaction (rule 6).
 */
export async function applyChargeSuccess(tx: Tx, input: SuccessInput): Promise<void> {
  await transitionPayment(tx, input.paymentId, 'succeed', {
    transactionId: input.transactionId,
    approvedAt: input.approvedAt,
    failureCode: null,
    failureMessage: null,
    attentionReason: null,
    nextRetryAt: null,
  });
  const sub = input.current ?? (await tx.subscription.findUniqueOrThrow({ where: { id: input.subscriptionId } }));
  const { nextCycle, period } = periodAfterSuccess(sub, input);
  const pendingCharged = sub.pendingAmount !== null && sub.pendingAmount === input.amount;
  await tx.subscription.update({
    where: { id: sub.id },
    data: {
      cycle: Math.max(sub.cycle, nextCycle),
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      // Paused or cancelled while the call was out: the success is recorded, nothing is scheduled.
      nextChargeAt: isLive(sub.status) ? period.end : sub.status === 'PAUSED' ? sub.nextChargeAt : null,
      lastTransactionId: input.transactionId,
      lastAmount: input.amount,
      lastTransactionAt: input.approvedAt,
      // A pending increase charged (its consent counted, planCharge) is now the amount.
      amount: pendingCharged ? input.amount : undefined,
      pendingAmount: pendingCharged ? null : undefined,
      pendingAmountRequestedAt: pendingCharged ? null : undefined,
    },
  });
  // A converted trial and a recovered subscription are ACTIVE again.
  if (sub.status === 'PAST_DUE' || sub.status === 'TRIALING') await transitionSubscription(tx, sub.id, 'recover');
}

/** The declines that count for a payment's retries: those since a new payment method reset them (retriesFrom). */
export function countDeclines(tx: Tx | Db, payment: { id: string; retriesFrom: Date | null }): Promise<number> {
  return tx.paymentAttempt.count({
    where: { paymentId: payment.id, status: 'DECLINED', completedAt: payment.retriesFrom ? { gte: payment.retriesFrom } : undefined },
  });
}

export interface DeclineInput {
  subscriptionId: string;
  paymentId: string;
  dueAt: Date;
  failureCode: string | null;
  failureMessage: string | null;
  retryDelaysMs: number[];
  now: Date;
  timezone: string;
}

/**
 * The payment FAILED (rule 11): retry at the next delay (PAST_DUE), or CANCELED with RETRIES_EXHAUSTED when the
 * delays have run out, or — MOBILE — PAST_DUE with MOBILE_WINDOW_CLOSED when the next retry would fall outside
 * the window. Declines are counted from the payment's DECLINED attempts.
 */
export async function applyChargeDecline(tx: Tx, input: DeclineInput): Promise<{ plan: DeclinePlan; declines: number }> {
  const { retriesFrom } = await tx.payment.findUniqueOrThrow({ where: { id: input.paymentId }, select: { retriesFrom: true } });
  const declines = await countDeclines(tx, { id: input.paymentId, retriesFrom });
  await transitionPayment(tx, input.paymentId, 'fail', { failureCode: input.failureCode, failureMessage: input.failureMessage });
  const payment = await tx.payment.findUniqueOrThrow({ where: { id: input.paymentId }, select: { cycle: true } });
  const sub = await tx.subscription.findUniqueOrThrow({ where: { id: input.subscriptionId } });
  const plan = planAfterDecline({
    method: sub.method,
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
    await transitionSubscription(tx, sub.id, 'decline', { nextChargeAt: plan.retryAt });
  } else if (plan.action === 'CANCEL') {
    await transitionSubscription(tx, sub.id, 'cancel', { canceledAt: input.now, nextChargeAt: null, cancelReason: plan.reason });
    await revokeBillingKey(tx, sub.billingKeyId, input.now);
  } else {
    await transitionSubscription(tx, sub.id, 'decline', { nextChargeAt: null, needsAttention: true, attentionReason: 'MOBILE_WINDOW_CLOSED' });
  }
  return { plan, declines };
}
