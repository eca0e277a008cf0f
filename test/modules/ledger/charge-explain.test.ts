// The operator's dry run and the charge itself decide alike (docs/api.md "Routes": POST
// /admin/subscriptions/:id/charge?dryRun=true): over generated subscriptions, open payments, consents and times,
// explainCharge lists a failing rule exactly when planCharge does not charge, and the first failing rule names the
// refusal planCharge gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { explainCharge, planCharge, type OpenPayment, type PlanContext } from '../../../src/modules/ledger/charge.rules.ts';
import type { ConsentRecord } from '../../../src/modules/ledger/consent.rules.ts';
import type { ChargeableSubscription } from '../../../src/modules/ledger/schedule.rules.ts';

const DAY = 86_400_000;

/** An instant `days` (fractional) from `now`: every date of a case sits around its now, where the rules change. */
const around = (now: Date, days: number) => new Date(now.getTime() + Math.round(days * DAY));
const days = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
const amounts = fc.constantFrom(9900, 12_000, 15_000);

const cases = fc
  .record({
    now: fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true }),
    method: fc.constantFrom('CARD' as const, 'MOBILE' as const),
    status: fc.constantFrom('ACTIVE' as const, 'TRIALING' as const, 'PAST_DUE' as const, 'PAUSED' as const, 'CANCELED' as const),
    amount: amounts,
    pendingAmount: fc.option(amounts),
    pendingAmountRequestedAt: days(-40, 1),
    intervalUnit: fc.constantFrom('day' as const, 'week' as const, 'month' as const, 'year' as const),
    intervalCount: fc.integer({ min: 1, max: 3 }),
    anchorAt: days(-400, 10),
    cycle: fc.integer({ min: 1, max: 6 }),
    currentPeriodEnd: days(-40, 40),
    nextChargeAt: fc.option(days(-40, 40), { freq: 6 }),
    cancelAtPeriodEnd: fc.boolean(),
    needsAttention: fc.boolean(),
    lastTransactionId: fc.option(fc.constant('T-last'), { freq: 5 }),
    lastAmount: fc.option(amounts, { freq: 5 }),
    lastTransactionAt: fc.option(days(-45, -15), { freq: 5 }),
    billingKeyStatus: fc.constantFrom('ACTIVE' as const, 'ACTIVE' as const, 'REVOKED' as const),
    open: fc.option(
      fc.record({
        status: fc.constantFrom('PENDING' as const, 'SUCCEEDED' as const, 'FAILED' as const, 'UNKNOWN' as const, 'CANCELED' as const),
        amount: amounts,
        dueAt: days(-40, 10),
        declines: fc.integer({ min: 0, max: 3 }),
      }),
    ),
    trigger: fc.constantFrom('SCHEDULER' as const, 'ADMIN' as const),
    consents: fc.array(fc.record({ kind: fc.constantFrom('TRIAL_CONVERSION' as const, 'PRICE_INCREASE' as const), obtainedAt: days(-40, 1) }), {
      maxLength: 2,
    }),
    consentRequired: fc.boolean(),
  })
  .map((c) => {
    const { now } = c;
    const sub: ChargeableSubscription = {
      id: '00000000-0000-4000-8000-000000000001',
      method: c.method,
      status: c.status,
      amount: c.amount,
      pendingAmount: c.pendingAmount,
      pendingAmountRequestedAt: c.pendingAmount === null ? null : around(now, c.pendingAmountRequestedAt),
      intervalUnit: c.intervalUnit,
      intervalCount: c.intervalCount,
      anchorAt: around(now, c.anchorAt),
      cycle: c.cycle,
      currentPeriodEnd: around(now, c.currentPeriodEnd),
      nextChargeAt: c.nextChargeAt === null ? null : around(now, c.nextChargeAt),
      cancelAtPeriodEnd: c.cancelAtPeriodEnd,
      needsAttention: c.needsAttention,
      lastTransactionId: c.lastTransactionId,
      lastAmount: c.lastAmount,
      lastTransactionAt: c.lastTransactionAt === null ? null : around(now, c.lastTransactionAt),
      billingKeyStatus: c.billingKeyStatus,
    };
    const open: OpenPayment | undefined = c.open ? { ...c.open, cycle: c.cycle, dueAt: around(now, c.open.dueAt) } : undefined;
    const consents: ConsentRecord[] = c.consents.map((consent) => ({ kind: consent.kind, obtainedAt: around(now, consent.obtainedAt) }));
    const ctx: PlanContext = { now, timezone: 'Asia/Seoul', trigger: c.trigger, consents, consentRequired: c.consentRequired };
    return { sub, open, ctx };
  });

/** The code a refused plan answers with, as the dry run names it. */
const refusalOf = (plan: ReturnType<typeof planCharge>) =>
  plan.action === 'REFUSE' ? plan.code : plan.action === 'CANCEL_CONSENT_MISSING' ? 'CONSENT_REQUIRED' : plan.action;

describe('explainCharge', () => {
  it('property: lists a failing rule exactly when planCharge refuses, and its first failing rule is the refusal', () => {
    fc.assert(
      fc.property(cases, ({ sub, open, ctx }) => {
        const plan = planCharge(sub, open, ctx);
        const explained = explainCharge(sub, open, ctx);
        expect(explained.plan).toEqual(plan);
        const failing = explained.rules.filter((rule) => !rule.passed);
        expect(failing.length > 0).toBe(plan.action !== 'CHARGE');
        if (plan.action !== 'CHARGE') expect(failing[0]!.code).toBe(refusalOf(plan));
      }),
      { numRuns: 5000 },
    );
  });

  it('property: the generated cases reach every outcome of planCharge', () => {
    // The property above proves nothing about outcomes it never meets: each is met within the same number of runs.
    const seen = new Set<string>();
    fc.assert(
      fc.property(cases, ({ sub, open, ctx }) => {
        seen.add(refusalOf(planCharge(sub, open, ctx)));
      }),
      { numRuns: 5000 },
    );
    expect([...seen].sort()).toEqual(
      [
        'CHARGE',
        'CANCEL_AT_PERIOD_END',
        'CONSENT_REQUIRED',
        'SUBSCRIPTION_NOT_ACTIVE',
        'NEEDS_ATTENTION',
        'BILLING_KEY_REVOKED',
        'PAYMENT_OUTCOME_UNKNOWN',
        'NOT_DUE',
        'MOBILE_CHAIN_MISSING',
        'MOBILE_AMOUNT_MISMATCH',
        'MOBILE_WINDOW_CLOSED',
      ].sort(),
    );
  });
});
