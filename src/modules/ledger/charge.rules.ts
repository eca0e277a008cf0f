// What a charge of one subscription may do now (docs/architecture.md, invariants 6, 9, 10, 11, 13 and "Recurring charging"): due or not, the
// amount, the MOBILE window and chain, consents, downtime; the scheduling rules it builds on are in
// schedule.rules.ts. Pure functions of the subscription, its open payment and the time, so the scheduler, the admin
// charge, operators' actions and the tests share one answer. Nothing here talks to the database or the gateway.
import { cycleContaining, cycleDueAt, mobileWindowOffsetDays, MOBILE_WINDOW_DAYS } from '../../lib/calendar.ts';
import { isLive, LIVE, mobileDueAt, intervalOf, type ChargeableSubscription } from './schedule.rules.ts';

/** The payment of `subscription.cycle`, when one was started. */
export interface OpenPayment {
  cycle: number;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'UNKNOWN' | 'CANCELED';
  amount: number;
  dueAt: Date;
  /** Attempts the gateway declined. */
  declines: number;
}

export type RefusalCode =
  | 'NOT_DUE'
  | 'SUBSCRIPTION_NOT_ACTIVE'
  | 'BILLING_KEY_REVOKED'
  | 'PAYMENT_OUTCOME_UNKNOWN'
  | 'NEEDS_ATTENTION'
  | 'MOBILE_CHAIN_MISSING'
  | 'MOBILE_AMOUNT_MISMATCH'
  | 'MOBILE_WINDOW_CLOSED'
  | 'CONSENT_REQUIRED';

export type ChargePlan =
  | {
      action: 'CHARGE';
      cycle: number;
      dueAt: Date;
      amount: number;
      /** Earlier cycles passed over after downtime (invariant 10): never charged. */
      skippedCycles: number;
      /** MOBILE: the chain head the gateway checks. */
      lastTransactionId?: string;
    }
  | { action: 'CANCEL_AT_PERIOD_END' }
  /** A trial ended without a counting TRIAL_CONVERSION consent (invariant 13): cancelled, never charged. */
  | { action: 'CANCEL_CONSENT_MISSING' }
  | {
      action: 'REFUSE';
      code: RefusalCode;
      message: string;
      /** The refusal needs a person (and, for MOBILE, usually a new registration). */
      attention: boolean;
      /** The subscription becomes PAST_DUE (a MOBILE window that closed without a success). */
      pastDue: boolean;
    };

export interface PlanContext {
  now: Date;
  timezone: string;
  /** A scheduled pass charges only what is due; an operator's charge may also be early for CARD retries. */
  trigger: 'SCHEDULER' | 'ADMIN';
  /** The subscription's consents (invariant 13). */
  consents: readonly ConsentRecord[];
  /** CONSENT_REQUIRED: false only for a merchant exempt from invariant 13. */
  consentRequired: boolean;
}

export interface ConsentRecord {
  kind: 'TRIAL_CONVERSION' | 'PRICE_INCREASE';
  obtainedAt: Date;
}

/** docs/architecture.md, invariant 13: how long before a charge's attempt a consent counts. */
export const CONSENT_WINDOW_MS = 30 * 24 * 3600_000;

/**
 * Whether a consent of `kind` counts for a charge attempted at `at`: obtained within the 30 × 24 hours before it
 * (never after), and after `since` when given (a price increase's consent must follow the request).
 */
export function hasCountingConsent(consents: readonly ConsentRecord[], kind: ConsentRecord['kind'], at: Date, since?: Date | null): boolean {
  return consents.some(
    (c) => c.kind === kind && c.obtainedAt <= at && at.getTime() - c.obtainedAt.getTime() <= CONSENT_WINDOW_MS && (!since || c.obtainedAt >= since),
  );
}

/**
 * Whether planCharge can need the consents (so a charge reads them only then): a trial, a pending increase, or an
 * amount above the last charge.
 */
export function consentsMatter(
  sub: Pick<ChargeableSubscription, 'status' | 'amount' | 'pendingAmount' | 'lastAmount'>,
  open: Pick<OpenPayment, 'amount'> | undefined,
  consentRequired: boolean,
): boolean {
  if (!consentRequired) return false;
  if (sub.status === 'TRIALING' || sub.pendingAmount !== null) return true;
  return sub.lastAmount !== null && Math.max(sub.amount, open?.amount ?? 0) > sub.lastAmount;
}

/**
 * The amount the next new cycle is charged: the pending increase once its consent counts (or at once where invariant 13
 * is off), else the current amount.
 */
export function amountToCharge(
  sub: Pick<ChargeableSubscription, 'amount' | 'pendingAmount' | 'pendingAmountRequestedAt'>,
  ctx: Pick<PlanContext, 'now' | 'consents' | 'consentRequired'>,
): number {
  if (sub.pendingAmount === null) return sub.amount;
  if (!ctx.consentRequired || hasCountingConsent(ctx.consents, 'PRICE_INCREASE', ctx.now, sub.pendingAmountRequestedAt)) return sub.pendingAmount;
  return sub.amount;
}

/**
 * When a cancel at period end takes effect, which dates its churn (docs/operating.md "Revenue reports": a cancel "at period end"
 * churns at that period's end), whenever the pass that ends it runs. The period's end for a subscription still in
 * it; for a PAST_DUE one, whose period ended unpaid and which counted on through its retries, the retry it is
 * cancelled instead of (its next charge). Never before the subscription's last change (changedAt: the decline, a
 * price change, the cancel's request itself), so its movements stay in the order they happened and none lands in a
 * month already reported with the subscription counting; never after now (an operator's early charge ends it).
 */
export function periodEndCancelAt(sub: { status: string; currentPeriodEnd: Date; nextChargeAt: Date | null; changedAt: Date }, now: Date): Date {
  const boundary = sub.status === 'PAST_DUE' && sub.nextChargeAt ? sub.nextChargeAt : sub.currentPeriodEnd;
  const at = Math.max(boundary.getTime(), sub.changedAt.getTime());
  return new Date(Math.min(at, now.getTime()));
}

const refuse = (code: RefusalCode, message: string, options: { attention?: boolean; pastDue?: boolean } = {}): ChargePlan => ({
  action: 'REFUSE',
  code,
  message,
  attention: options.attention ?? false,
  pastDue: options.pastDue ?? false,
});

export function planCharge(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): ChargePlan {
  const { now } = ctx;
  if (!isLive(sub.status)) {
    return refuse('SUBSCRIPTION_NOT_ACTIVE', `A ${sub.status} subscription is not charged`);
  }
  if (sub.needsAttention) return refuse('NEEDS_ATTENTION', 'The subscription is waiting for an operator');
  if (sub.cancelAtPeriodEnd && now >= sub.currentPeriodEnd) return { action: 'CANCEL_AT_PERIOD_END' };
  if (sub.billingKeyStatus !== 'ACTIVE') return refuse('BILLING_KEY_REVOKED', 'The billing key was revoked', { attention: true });
  if (open?.status === 'UNKNOWN') {
    return refuse('PAYMENT_OUTCOME_UNKNOWN', `The outcome of cycle ${open.cycle} is unknown; an operator must resolve it first`, { attention: true });
  }
  if (open?.status === 'SUCCEEDED') {
    // Cannot happen through this service (a success advances the cycle in the same transaction); refused so the
    // database's one-success-per-cycle rule is never even tried.
    return refuse('NEEDS_ATTENTION', `Cycle ${open.cycle} is already paid but the subscription did not advance`, { attention: true });
  }
  if (sub.nextChargeAt === null) return refuse('NOT_DUE', 'The subscription has no next charge date');
  // An operator may charge a PAST_DUE subscription before its retry time, never an ACTIVE one before its due date.
  if (sub.nextChargeAt > now && (ctx.trigger === 'SCHEDULER' || sub.status !== 'PAST_DUE')) {
    return refuse('NOT_DUE', `The next charge is due at ${sub.nextChargeAt.toISOString()}`);
  }
  // Invariant 13: a free trial converts to a paid charge only with the customer's consent; without it, it ends.
  if (sub.status === 'TRIALING' && ctx.consentRequired && !hasCountingConsent(ctx.consents, 'TRIAL_CONVERSION', now)) {
    return { action: 'CANCEL_CONSENT_MISSING' };
  }
  const plan = sub.method === 'MOBILE' ? planMobile(sub, open, ctx) : planCard(sub, open, ctx);
  // Invariant 13, whatever path set the amount: more than the last charge needs a counting PRICE_INCREASE consent.
  if (
    plan.action === 'CHARGE' &&
    ctx.consentRequired &&
    sub.lastAmount !== null &&
    plan.amount > sub.lastAmount &&
    !hasCountingConsent(ctx.consents, 'PRICE_INCREASE', now)
  ) {
    return refuse('CONSENT_REQUIRED', `${plan.amount} is more than the last charge (${sub.lastAmount}) and no PRICE_INCREASE consent counts for it`, {
      attention: true,
    });
  }
  return plan;
}

function planCard(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): ChargePlan {
  const interval = intervalOf(sub);
  if (open) {
    // A retry (or a NOT_SENT attempt sent again) stays with its cycle and its amount.
    return { action: 'CHARGE', cycle: open.cycle, dueAt: open.dueAt, amount: open.amount, skippedCycles: 0 };
  }
  const firstDue = cycleDueAt(sub.anchorAt, interval, sub.cycle, ctx.timezone);
  if (firstDue > ctx.now) return refuse('NOT_DUE', `Cycle ${sub.cycle} is due at ${firstDue.toISOString()}`);
  // After downtime, charge the period that contains now, once; the periods missed are not back-charged.
  const cycle = cycleContaining(sub.anchorAt, interval, ctx.now, ctx.timezone, sub.cycle);
  return {
    action: 'CHARGE',
    cycle,
    dueAt: cycleDueAt(sub.anchorAt, interval, cycle, ctx.timezone),
    amount: amountToCharge(sub, ctx),
    skippedCycles: cycle - sub.cycle,
  };
}

function planMobile(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): ChargePlan {
  if (!sub.lastTransactionId || sub.lastAmount === null || !sub.lastTransactionAt) {
    return refuse('MOBILE_CHAIN_MISSING', 'No previous MOBILE transaction to chain from; a new registration is needed', { attention: true, pastDue: true });
  }
  const amount = open?.amount ?? sub.amount;
  if (amount !== sub.lastAmount) {
    return refuse('MOBILE_AMOUNT_MISMATCH', `A MOBILE charge must repeat the last amount ${sub.lastAmount}, not ${amount}; a new registration is needed`, {
      attention: true,
    });
  }
  const offset = mobileWindowOffsetDays(sub.lastTransactionAt, ctx.now, ctx.timezone);
  if (offset > MOBILE_WINDOW_DAYS) {
    return refuse(
      'MOBILE_WINDOW_CLOSED',
      `The ±${MOBILE_WINDOW_DAYS}-day window around ${mobileDueAt(sub.lastTransactionAt, ctx.timezone).toISOString()} closed ${offset - MOBILE_WINDOW_DAYS} day(s) ago; a new registration is needed`,
      { attention: true, pastDue: true },
    );
  }
  if (offset < -MOBILE_WINDOW_DAYS) {
    return refuse('MOBILE_WINDOW_CLOSED', `The ±${MOBILE_WINDOW_DAYS}-day window opens ${-offset - MOBILE_WINDOW_DAYS} day(s) from now`);
  }
  return {
    action: 'CHARGE',
    cycle: open?.cycle ?? sub.cycle,
    dueAt: open?.dueAt ?? mobileDueAt(sub.lastTransactionAt, ctx.timezone),
    amount,
    skippedCycles: 0,
    lastTransactionId: sub.lastTransactionId,
  };
}

export interface RuleCheck {
  rule: string;
  passed: boolean;
  code?: RefusalCode | 'CANCEL_AT_PERIOD_END';
  detail?: string;
}

/**
 * Every rule an operator's charge must pass, each with its verdict (POST /admin/subscriptions/:id/charge?dryRun).
 * The decision itself is planCharge's; this lists the reasons next to it.
 */
export function explainCharge(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): { plan: ChargePlan; rules: RuleCheck[] } {
  const plan = planCharge(sub, open, ctx);
  const check = (rule: string, passed: boolean, code: RuleCheck['code'], detail?: string): RuleCheck =>
    passed ? { rule, passed } : { rule, passed, code, detail };
  const rules: RuleCheck[] = [
    check(`subscription is ${LIVE.join(', ')}`, isLive(sub.status), 'SUBSCRIPTION_NOT_ACTIVE', sub.status),
    check('no operator task is open', !sub.needsAttention, 'NEEDS_ATTENTION'),
    check('billing key is active', sub.billingKeyStatus === 'ACTIVE', 'BILLING_KEY_REVOKED'),
    check('no earlier outcome is unknown', open?.status !== 'UNKNOWN', 'PAYMENT_OUTCOME_UNKNOWN'),
    check('not cancelled at the end of this period', !(sub.cancelAtPeriodEnd && ctx.now >= sub.currentPeriodEnd), 'CANCEL_AT_PERIOD_END'),
    check(
      'due or past due',
      sub.nextChargeAt !== null && (sub.nextChargeAt <= ctx.now || (ctx.trigger === 'ADMIN' && sub.status === 'PAST_DUE')),
      'NOT_DUE',
      sub.nextChargeAt ? `next charge ${sub.nextChargeAt.toISOString()}` : 'no next charge',
    ),
  ];
  if (ctx.consentRequired && sub.status === 'TRIALING') {
    rules.push(
      check('a TRIAL_CONVERSION consent counts (the consent rule)', hasCountingConsent(ctx.consents, 'TRIAL_CONVERSION', ctx.now), 'CONSENT_REQUIRED'),
    );
  }
  if (ctx.consentRequired && plan.action !== 'CANCEL_CONSENT_MISSING') {
    const amount = open?.amount ?? amountToCharge(sub, ctx);
    const increase = sub.lastAmount !== null && amount > sub.lastAmount;
    rules.push(
      check(
        'no increase over the last charge without a counting PRICE_INCREASE consent (the consent rule)',
        !increase || hasCountingConsent(ctx.consents, 'PRICE_INCREASE', ctx.now),
        'CONSENT_REQUIRED',
        `${amount} vs ${sub.lastAmount}`,
      ),
    );
  }
  if (sub.method === 'MOBILE') {
    const head = Boolean(sub.lastTransactionId && sub.lastAmount !== null && sub.lastTransactionAt);
    rules.push(check('MOBILE chain head present', head, 'MOBILE_CHAIN_MISSING'));
    const amount = open?.amount ?? sub.amount;
    rules.push(check('MOBILE amount equals the last amount', amount === sub.lastAmount, 'MOBILE_AMOUNT_MISMATCH', `${amount} vs ${sub.lastAmount}`));
    if (sub.lastTransactionAt) {
      const offset = mobileWindowOffsetDays(sub.lastTransactionAt, ctx.now, ctx.timezone);
      rules.push(check(`MOBILE within ±${MOBILE_WINDOW_DAYS} days`, Math.abs(offset) <= MOBILE_WINDOW_DAYS, 'MOBILE_WINDOW_CLOSED', `day ${offset}`));
    }
  }
  return { plan, rules };
}
