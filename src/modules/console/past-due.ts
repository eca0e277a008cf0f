// Why a PAST_DUE subscription is past due and when it is tried again (docs/console.md "Operator console"), for the
// Subscription page. The facts come from the charging pass's own rules, never a copy of them: the declines that
// count for the cycle's retries (charge.outcomes.ts countDeclines), the retry already scheduled (the subscription's
// nextChargeAt, which applyChargeDecline set from planAfterDecline), and what the next decline would do, asked of
// planAfterDecline itself with RETRY_DELAYS (schedule.rules.ts: past the last delay it cancels; a MOBILE retry outside
// the ±5-day window is not scheduled).
import type { Db } from '../../db/prisma.ts';
import type { Config } from '../../config.ts';
import { countDeclines } from '../ledger/charge.outcomes.ts';
import { planAfterDecline } from '../ledger/schedule.rules.ts';

export type NextStep =
  /** Retry `retry` of `retries` is scheduled at `at`; a decline then schedules another. */
  | { kind: 'retry'; at: Date; retry: number; retries: number }
  /** The retry at `at` is the last: its decline cancels the subscription (RETRIES_EXHAUSTED) at that time. */
  | { kind: 'lastRetry'; at: Date }
  /** MOBILE: the retry at `at` is the last the window allows; its decline leaves the subscription MOBILE_WINDOW_CLOSED. */
  | { kind: 'retryThenWindowClosed'; at: Date }
  /** MOBILE_WINDOW_CLOSED: nothing is tried until the customer registers a payment method again. */
  | { kind: 'windowClosed' }
  | { kind: 'none' };

export interface PastDueFacts {
  cycle: number;
  /** The last decline of the cycle: when, and the gateway's code and message (null when the payment failed without an answer of the gateway, e.g. resolved as failed). */
  declinedAt: Date | null;
  code: string | null;
  message: string | null;
  next: NextStep;
}

/** The facts of a subscription that is PAST_DUE (or waiting for a new phone registration); undefined otherwise. */
export async function pastDueFacts(
  db: Db,
  config: Pick<Config, 'retryDelaysMs' | 'timezone'>,
  subscription: { id: string; status: string; attentionReason?: string | null },
): Promise<PastDueFacts | undefined> {
  const windowClosed = subscription.attentionReason === 'MOBILE_WINDOW_CLOSED';
  if (subscription.status !== 'PAST_DUE' && !windowClosed) return undefined;
  const sub = await db.subscription.findUniqueOrThrow({
    where: { id: subscription.id },
    select: { method: true, cycle: true, nextChargeAt: true, lastTransactionAt: true },
  });
  const payment = await db.payment.findFirst({
    where: { subscriptionId: subscription.id, cycle: sub.cycle, status: 'FAILED' },
    select: { id: true, dueAt: true, retriesFrom: true, failureCode: true, failureMessage: true, updatedAt: true },
  });
  if (!payment) return undefined;
  const [declines, last] = await Promise.all([
    countDeclines(db, payment),
    db.paymentAttempt.findFirst({
      where: { paymentId: payment.id, status: 'DECLINED' },
      orderBy: { attemptNumber: 'desc' },
      select: { completedAt: true, gatewayCode: true, gatewayMessage: true },
    }),
  ]);
  return {
    cycle: sub.cycle,
    declinedAt: last?.completedAt ?? payment.updatedAt,
    code: last?.gatewayCode ?? payment.failureCode,
    message: last?.gatewayMessage ?? payment.failureMessage,
    next: windowClosed ? { kind: 'windowClosed' } : nextStep(config, sub, payment, declines),
  };
}

/** What the scheduled retry is, by what planAfterDecline would do if it were declined too. */
function nextStep(
  config: Pick<Config, 'retryDelaysMs' | 'timezone'>,
  sub: { method: 'CARD' | 'MOBILE'; nextChargeAt: Date | null; lastTransactionAt: Date | null },
  payment: { dueAt: Date | null; retriesFrom: Date | null },
  declines: number,
): NextStep {
  const at = sub.nextChargeAt;
  const dueAt = payment.retriesFrom ?? payment.dueAt;
  if (!at) return { kind: 'none' };
  const retry: NextStep = { kind: 'retry', at, retry: declines, retries: config.retryDelaysMs.length };
  if (!dueAt) return retry;
  const after = planAfterDecline({
    method: sub.method,
    dueAt,
    declines: declines + 1,
    retryDelaysMs: config.retryDelaysMs,
    lastTransactionAt: sub.lastTransactionAt,
    now: at,
    timezone: config.timezone,
  });
  if (after.action === 'CANCEL') return { kind: 'lastRetry', at };
  if (after.action === 'WINDOW_CLOSED') return { kind: 'retryThenWindowClosed', at };
  return retry;
}
