// The scheduling rules (docs/architecture.md, invariants 6, 9, 10, 11): which statuses are charged, the period a success pays
// for, where a resumed schedule starts, and when a declined cycle is retried. Pure functions of the subscription and
// the time; the charge planner (charge.rules.ts) and the ledger's writers (charge.outcomes.ts, the one-statement
// record in payments/charge.record.ts) share them.
import type { DeclineKind } from '../../gateway/gateway.ts';
import { addInterval, cycleContaining, cycleDueAt, mobileWindowOffsetDays, MOBILE_WINDOW_DAYS, type Interval, type IntervalUnit } from '../../lib/calendar.ts';

/**
 * The statuses a charge may be made in (due, a trial's end, or a retry). The scheduler's claim query and the partial
 * index subscriptions_due_claim_idx spell the same list in SQL (test/modules/ledger/subscription.queries.test.ts checks).
 */
export const LIVE = ['ACTIVE', 'TRIALING', 'PAST_DUE'] as const;
export const isLive = (status: string): boolean => (LIVE as readonly string[]).includes(status);

export interface ChargeableSubscription {
  id: string;
  method: 'CARD' | 'MOBILE';
  status: 'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'PAUSED' | 'CANCELED';
  amount: number;
  /** A price increase waiting for a PRICE_INCREASE consent obtained after it was asked for. */
  pendingAmount: number | null;
  pendingAmountRequestedAt: Date | null;
  intervalUnit: IntervalUnit;
  intervalCount: number;
  anchorAt: Date;
  /** The next cycle to be paid. */
  cycle: number;
  currentPeriodEnd: Date;
  nextChargeAt: Date | null;
  cancelAtPeriodEnd: boolean;
  needsAttention: boolean;
  lastTransactionId: string | null;
  lastAmount: number | null;
  lastTransactionAt: Date | null;
  billingKeyStatus: 'ACTIVE' | 'REVOKED';
}

export const intervalOf = (s: Pick<ChargeableSubscription, 'intervalUnit' | 'intervalCount'>): Interval => ({
  unit: s.intervalUnit,
  count: s.intervalCount,
});

/** MOBILE: the next charge sits one month after the last success, the centre of the ±5-day window (invariant 9). */
export function mobileDueAt(lastTransactionAt: Date, timezone: string): Date {
  return addInterval(lastTransactionAt, 'month', 1, timezone);
}

/**
 * The period a successful charge of `cycle` pays for, and the next cycle to charge: CARD on its anchor, MOBILE one
 * month after the success (the centre of the next ±5-day window). Invariant 10 for a late payment too: a CARD cycle paid
 * after later periods began (a retry after downtime) covers the period that contains the payment, and the periods
 * it spans are not charged again.
 */
export function periodAfterSuccess(
  sub: Pick<ChargeableSubscription, 'method' | 'anchorAt' | 'intervalUnit' | 'intervalCount'>,
  paid: { cycle: number; dueAt: Date; approvedAt: Date; timezone: string },
): { nextCycle: number; period: { start: Date; end: Date } } {
  const { cycle, dueAt, approvedAt, timezone } = paid;
  if (sub.method === 'MOBILE') return { nextCycle: cycle + 1, period: { start: approvedAt, end: mobileDueAt(approvedAt, timezone) } };
  const interval = intervalOf(sub);
  const covered = cycleContaining(sub.anchorAt, interval, approvedAt, timezone, cycle);
  return {
    nextCycle: covered + 1,
    period: {
      start: covered === cycle ? dueAt : cycleDueAt(sub.anchorAt, interval, covered, timezone),
      end: cycleDueAt(sub.anchorAt, interval, covered + 1, timezone),
    },
  };
}

/**
 * Where a resumed subscription's schedule starts, never back-charged: CARD at the first cycle boundary after now
 * (the period that began while paused is not charged), MOBILE one month after its last success (the window rule
 * then decides at charge time).
 */
export function scheduleAfterResume(
  sub: Pick<ChargeableSubscription, 'method' | 'anchorAt' | 'intervalUnit' | 'intervalCount' | 'cycle' | 'lastTransactionAt'>,
  now: Date,
  timezone: string,
): { cycle?: number; nextChargeAt: Date } {
  if (sub.method === 'MOBILE' && sub.lastTransactionAt) return { nextChargeAt: mobileDueAt(sub.lastTransactionAt, timezone) };
  const interval = intervalOf(sub);
  let cycle = cycleContaining(sub.anchorAt, interval, now, timezone, sub.cycle);
  if (cycleDueAt(sub.anchorAt, interval, cycle, timezone) <= now) cycle += 1;
  return { cycle, nextChargeAt: cycleDueAt(sub.anchorAt, interval, cycle, timezone) };
}

export type DeclinePlan =
  | { action: 'RETRY'; retryAt: Date }
  | { action: 'CANCEL'; reason: 'RETRIES_EXHAUSTED' }
  | { action: 'WINDOW_CLOSED' }
  /** The gateway's outcome table says the instrument is dead: no retry; it waits for a new payment method. */
  | { action: 'METHOD_INVALID' };

/**
 * After the `declines`-th decline of a cycle due at `dueAt` (invariant 11, docs/architecture.md "Recurring charging"): retry k happens at
 * dueAt + delays[k-1]. After downtime a retry time may already be past; the retries then keep their spacing from
 * now instead of firing in a burst. When the delays run out the subscription is cancelled; a MOBILE retry that
 * would fall outside the ±5-day window is not scheduled. A decline of a dead instrument (the adapter's outcome table,
 * `decline: 'INSTRUMENT_DEAD'`) is never retried, whatever the delays left: no retry can recover it, and only a new
 * payment method starts the retries again.
 */
export function planAfterDecline(input: {
  method: 'CARD' | 'MOBILE';
  /** What the gateway's outcome table says of the instrument (absent: a decline that may recover). */
  decline?: DeclineKind;
  dueAt: Date;
  declines: number;
  retryDelaysMs: number[];
  lastTransactionAt: Date | null;
  now: Date;
  timezone: string;
}): DeclinePlan {
  const { retryDelaysMs: delays, declines } = input;
  if (input.decline === 'INSTRUMENT_DEAD') return { action: 'METHOD_INVALID' };
  if (declines > delays.length) return { action: 'CANCEL', reason: 'RETRIES_EXHAUSTED' };
  const delay = delays[declines - 1]!;
  const gap = delay - (declines >= 2 ? delays[declines - 2]! : 0);
  const retryAt = new Date(Math.max(input.dueAt.getTime() + delay, input.now.getTime() + gap));
  if (input.method === 'MOBILE') {
    if (!input.lastTransactionAt) return { action: 'WINDOW_CLOSED' };
    if (mobileWindowOffsetDays(input.lastTransactionAt, retryAt, input.timezone) > MOBILE_WINDOW_DAYS) return { action: 'WINDOW_CLOSED' };
  }
  return { action: 'RETRY', retryAt };
}
