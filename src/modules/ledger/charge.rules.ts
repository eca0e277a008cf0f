// What a charge of one subscription may do now (docs/architecture.md, invariants 6, 9, 10, 11, 13 and "Recurring charging"): due or not, the
// amount, the MOBILE window and chain, consents, downtime; the scheduling rules it builds on are in
// schedule.rules.ts. Pure functions of the subscription, its open payment and the time, so the scheduler, the admin
// charge, operators' actions and the tests share one answer. Nothing here talks to the database or the gateway.
import { cycleContaining, cycleDueAt, mobileWindowOffsetDays, MOBILE_WINDOW_DAYS } from '../../lib/calendar.ts';
import { amountToCharge, hasCountingConsent, type ConsentRecord } from './consent.rules.ts';
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

/**
 * When a cancel at period end takes effect, which dates its churn (docs/reconciliation.md "Revenue reports": a cancel "at period end"
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

type Refusal = Exclude<ChargePlan, { action: 'CHARGE' }>;

const refuse = (code: RefusalCode, message: string, options: { attention?: boolean; pastDue?: boolean } = {}): Refusal => ({
  action: 'REFUSE',
  code,
  message,
  attention: options.attention ?? false,
  pastDue: options.pastDue ?? false,
});

/** What every check of a charge reads. */
interface ChargeInput {
  sub: ChargeableSubscription;
  open: OpenPayment | undefined;
  ctx: PlanContext;
}

/**
 * One rule a charge must pass. planCharge applies them in this order and the first that fails decides (its
 * `refusal`); the operator's dry run (explainCharge) lists each with its verdict. A rule that has nothing to check for
 * this subscription (`applies` false) is neither applied nor listed.
 */
interface ChargeCheck {
  rule: string;
  code: RuleCheck['code'];
  applies?: (input: ChargeInput) => boolean;
  passes: (input: ChargeInput) => boolean;
  refusal: (input: ChargeInput) => Refusal;
  detail?: (input: ChargeInput) => string;
}

/** The amount a charge would take: the open payment's (a retry keeps it), else MOBILE's current, else amountToCharge. */
const chargeAmount = ({ sub, open, ctx }: ChargeInput) => open?.amount ?? (sub.method === 'MOBILE' ? sub.amount : amountToCharge(sub, ctx));
const firstDueAt = ({ sub, ctx }: ChargeInput) => cycleDueAt(sub.anchorAt, intervalOf(sub), sub.cycle, ctx.timezone);
const windowOffset = ({ sub, ctx }: ChargeInput) => mobileWindowOffsetDays(sub.lastTransactionAt!, ctx.now, ctx.timezone);

const CHARGE_CHECKS: readonly ChargeCheck[] = [
  {
    rule: `subscription is ${LIVE.join(', ')}`,
    code: 'SUBSCRIPTION_NOT_ACTIVE',
    passes: ({ sub }) => isLive(sub.status),
    refusal: ({ sub }) => refuse('SUBSCRIPTION_NOT_ACTIVE', `A ${sub.status} subscription is not charged`),
    detail: ({ sub }) => sub.status,
  },
  {
    rule: 'no operator task is open',
    code: 'NEEDS_ATTENTION',
    passes: ({ sub }) => !sub.needsAttention,
    refusal: () => refuse('NEEDS_ATTENTION', 'The subscription is waiting for an operator'),
  },
  {
    rule: 'not cancelled at the end of this period',
    code: 'CANCEL_AT_PERIOD_END',
    passes: ({ sub, ctx }) => !(sub.cancelAtPeriodEnd && ctx.now >= sub.currentPeriodEnd),
    refusal: () => ({ action: 'CANCEL_AT_PERIOD_END' }),
  },
  {
    rule: 'billing key is active',
    code: 'BILLING_KEY_REVOKED',
    passes: ({ sub }) => sub.billingKeyStatus === 'ACTIVE',
    refusal: () => refuse('BILLING_KEY_REVOKED', 'The billing key was revoked', { attention: true }),
  },
  {
    rule: 'no earlier outcome is unknown',
    code: 'PAYMENT_OUTCOME_UNKNOWN',
    passes: ({ open }) => open?.status !== 'UNKNOWN',
    refusal: ({ open }) =>
      refuse('PAYMENT_OUTCOME_UNKNOWN', `The outcome of cycle ${open!.cycle} is unknown; an operator must resolve it first`, { attention: true }),
  },
  {
    // Cannot happen through this service (a success advances the cycle in the same transaction); refused so the
    // database's one-success-per-cycle rule is never even tried.
    rule: 'this cycle is not paid already',
    code: 'NEEDS_ATTENTION',
    passes: ({ open }) => open?.status !== 'SUCCEEDED',
    refusal: ({ open }) => refuse('NEEDS_ATTENTION', `Cycle ${open!.cycle} is already paid but the subscription did not advance`, { attention: true }),
  },
  {
    // An operator may charge a PAST_DUE subscription before its retry time, never an ACTIVE one before its due date.
    rule: 'due or past due',
    code: 'NOT_DUE',
    passes: ({ sub, ctx }) => sub.nextChargeAt !== null && (sub.nextChargeAt <= ctx.now || (ctx.trigger === 'ADMIN' && sub.status === 'PAST_DUE')),
    refusal: ({ sub }) =>
      sub.nextChargeAt === null
        ? refuse('NOT_DUE', 'The subscription has no next charge date')
        : refuse('NOT_DUE', `The next charge is due at ${sub.nextChargeAt.toISOString()}`),
    detail: ({ sub }) => (sub.nextChargeAt ? `next charge ${sub.nextChargeAt.toISOString()}` : 'no next charge'),
  },
  {
    // Rule 13: a free trial converts to a paid charge only with the customer's consent; without it, it ends.
    rule: 'a TRIAL_CONVERSION consent counts (the consent rule)',
    code: 'CONSENT_REQUIRED',
    applies: ({ sub, ctx }) => ctx.consentRequired && sub.status === 'TRIALING',
    passes: ({ ctx }) => hasCountingConsent(ctx.consents, 'TRIAL_CONVERSION', ctx.now),
    refusal: () => ({ action: 'CANCEL_CONSENT_MISSING' }),
  },
  {
    // A new cycle (no payment open) is due from its own date on: an early nextChargeAt never charges ahead of it.
    rule: 'the cycle to pay is due',
    code: 'NOT_DUE',
    applies: ({ sub, open }) => sub.method === 'CARD' && !open,
    passes: (input) => firstDueAt(input) <= input.ctx.now,
    refusal: (input) => refuse('NOT_DUE', `Cycle ${input.sub.cycle} is due at ${firstDueAt(input).toISOString()}`),
    detail: (input) => `cycle ${input.sub.cycle} due ${firstDueAt(input).toISOString()}`,
  },
  {
    rule: 'MOBILE chain head present',
    code: 'MOBILE_CHAIN_MISSING',
    applies: ({ sub }) => sub.method === 'MOBILE',
    passes: ({ sub }) => Boolean(sub.lastTransactionId && sub.lastAmount !== null && sub.lastTransactionAt),
    refusal: () =>
      refuse('MOBILE_CHAIN_MISSING', 'No previous MOBILE transaction to chain from; a new registration is needed', { attention: true, pastDue: true }),
  },
  {
    rule: 'MOBILE amount equals the last amount',
    code: 'MOBILE_AMOUNT_MISMATCH',
    applies: ({ sub }) => sub.method === 'MOBILE',
    passes: (input) => chargeAmount(input) === input.sub.lastAmount,
    refusal: (input) =>
      refuse(
        'MOBILE_AMOUNT_MISMATCH',
        `A MOBILE charge must repeat the last amount ${input.sub.lastAmount}, not ${chargeAmount(input)}; a new registration is needed`,
        { attention: true },
      ),
    detail: (input) => `${chargeAmount(input)} vs ${input.sub.lastAmount}`,
  },
  {
    rule: `MOBILE within ±${MOBILE_WINDOW_DAYS} days`,
    code: 'MOBILE_WINDOW_CLOSED',
    applies: ({ sub }) => sub.method === 'MOBILE' && sub.lastTransactionAt !== null,
    passes: (input) => Math.abs(windowOffset(input)) <= MOBILE_WINDOW_DAYS,
    refusal: (input) => {
      const offset = windowOffset(input);
      if (offset < -MOBILE_WINDOW_DAYS)
        return refuse('MOBILE_WINDOW_CLOSED', `The ±${MOBILE_WINDOW_DAYS}-day window opens ${-offset - MOBILE_WINDOW_DAYS} day(s) from now`);
      return refuse(
        'MOBILE_WINDOW_CLOSED',
        `The ±${MOBILE_WINDOW_DAYS}-day window around ${mobileDueAt(input.sub.lastTransactionAt!, input.ctx.timezone).toISOString()} closed ${offset - MOBILE_WINDOW_DAYS} day(s) ago; a new registration is needed`,
        { attention: true, pastDue: true },
      );
    },
    detail: (input) => `day ${windowOffset(input)}`,
  },
  {
    // Rule 13, whatever path set the amount: more than the last charge needs a counting PRICE_INCREASE consent.
    rule: 'no increase over the last charge without a counting PRICE_INCREASE consent (the consent rule)',
    code: 'CONSENT_REQUIRED',
    applies: ({ ctx }) => ctx.consentRequired,
    passes: (input) =>
      input.sub.lastAmount === null || chargeAmount(input) <= input.sub.lastAmount || hasCountingConsent(input.ctx.consents, 'PRICE_INCREASE', input.ctx.now),
    refusal: (input) =>
      refuse('CONSENT_REQUIRED', `${chargeAmount(input)} is more than the last charge (${input.sub.lastAmount}) and no PRICE_INCREASE consent counts for it`, {
        attention: true,
      }),
    detail: (input) => `${chargeAmount(input)} vs ${input.sub.lastAmount}`,
  },
];

const applies = (check: ChargeCheck, input: ChargeInput) => check.applies?.(input) ?? true;

/** What a charge of one subscription may do now: the first of CHARGE_CHECKS that fails refuses, else the charge. */
export function planCharge(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): ChargePlan {
  const input: ChargeInput = { sub, open, ctx };
  for (const check of CHARGE_CHECKS) if (applies(check, input) && !check.passes(input)) return check.refusal(input);
  return sub.method === 'MOBILE' ? planMobile(input) : planCard(input);
}

/** A CARD charge that passed every check. */
function planCard(input: ChargeInput): ChargePlan {
  const { sub, open, ctx } = input;
  if (open) {
    // A retry (or a NOT_SENT attempt sent again) stays with its cycle and its amount.
    return { action: 'CHARGE', cycle: open.cycle, dueAt: open.dueAt, amount: open.amount, skippedCycles: 0 };
  }
  // After downtime, charge the period that contains now, once; the periods missed are not back-charged.
  const interval = intervalOf(sub);
  const cycle = cycleContaining(sub.anchorAt, interval, ctx.now, ctx.timezone, sub.cycle);
  return {
    action: 'CHARGE',
    cycle,
    dueAt: cycleDueAt(sub.anchorAt, interval, cycle, ctx.timezone),
    amount: chargeAmount(input),
    skippedCycles: cycle - sub.cycle,
  };
}

/** A MOBILE charge that passed every check: its chain head present, its amount the last, inside its window. */
function planMobile(input: ChargeInput): ChargePlan {
  const { sub, open, ctx } = input;
  return {
    action: 'CHARGE',
    cycle: open?.cycle ?? sub.cycle,
    dueAt: open?.dueAt ?? mobileDueAt(sub.lastTransactionAt!, ctx.timezone),
    amount: chargeAmount(input),
    skippedCycles: 0,
    lastTransactionId: sub.lastTransactionId!,
  };
}

export interface RuleCheck {
  rule: string;
  passed: boolean;
  code?: RefusalCode | 'CANCEL_AT_PERIOD_END';
  detail?: string;
}

/**
 * Every rule an operator's charge must pass, each with its verdict (POST /admin/subscriptions/:id/charge?dryRun):
 * planCharge's own checks, in its order, so a rule fails exactly when planCharge refuses, and the first that fails is
 * its refusal (test/modules/ledger/charge-explain.test.ts).
 */
export function explainCharge(sub: ChargeableSubscription, open: OpenPayment | undefined, ctx: PlanContext): { plan: ChargePlan; rules: RuleCheck[] } {
  const input: ChargeInput = { sub, open, ctx };
  const rules = CHARGE_CHECKS.filter((check) => applies(check, input)).map(
    ({ rule, passes, code, detail }): RuleCheck => (passes(input) ? { rule, passed: true } : { rule, passed: false, code, detail: detail?.(input) }),
  );
  return { plan: planCharge(sub, open, ctx), rules };
}
