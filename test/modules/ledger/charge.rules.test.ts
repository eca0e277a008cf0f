// The charge rules as pure functions: what a charge may do now, and what follows a decline.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { periodEndCancelAt, planCharge } from '../../../src/modules/ledger/charge.rules.ts';
import type { ConsentRecord } from '../../../src/modules/ledger/consent.rules.ts';
import { planAfterDecline, type ChargeableSubscription } from '../../../src/modules/ledger/schedule.rules.ts';
import { chargeOrderId } from '../../../src/modules/payments/charge.service.ts';

const SEOUL = 'Asia/Seoul';
const kst = (local: string) => new Date(`${local}+09:00`);
const DAY = 86_400_000;
const DELAYS = [1, 3, 5].map((d) => d * DAY);

function subscription(overrides: Partial<ChargeableSubscription> = {}): ChargeableSubscription {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    method: 'CARD',
    status: 'ACTIVE',
    amount: 9900,
    pendingAmount: null,
    pendingAmountRequestedAt: null,
    intervalUnit: 'month',
    intervalCount: 1,
    anchorAt: kst('2027-01-31T10:00:00'),
    cycle: 1,
    currentPeriodEnd: kst('2027-02-28T10:00:00'),
    nextChargeAt: kst('2027-02-28T10:00:00'),
    cancelAtPeriodEnd: false,
    needsAttention: false,
    lastTransactionId: null,
    lastAmount: null,
    lastTransactionAt: null,
    billingKeyStatus: 'ACTIVE',
    ...overrides,
  };
}

const ctx = (now: Date, consents: ConsentRecord[] = [], consentRequired = true) => ({
  now,
  timezone: SEOUL,
  trigger: 'SCHEDULER' as const,
  consents,
  consentRequired,
});

describe('planCharge', () => {
  it('refuses before the due date and charges from it', () => {
    expect(planCharge(subscription(), undefined, ctx(kst('2027-02-28T09:59:59')))).toMatchObject({ action: 'REFUSE', code: 'NOT_DUE' });
    expect(planCharge(subscription(), undefined, ctx(kst('2027-02-28T10:00:00')))).toEqual({
      action: 'CHARGE',
      cycle: 1,
      dueAt: kst('2027-02-28T10:00:00'),
      amount: 9900,
      skippedCycles: 0,
    });
  });

  it('keeps a retry on its cycle and amount even after the amount changed', () => {
    const open = { cycle: 1, status: 'FAILED' as const, amount: 8800, dueAt: kst('2027-02-28T10:00:00'), declines: 1 };
    expect(planCharge(subscription({ status: 'PAST_DUE', nextChargeAt: kst('2027-03-01T10:00:00') }), open, ctx(kst('2027-03-01T10:00:00')))).toMatchObject({
      action: 'CHARGE',
      cycle: 1,
      amount: 8800,
    });
  });

  it.each([
    [{ status: 'PAUSED' as const }, 'SUBSCRIPTION_NOT_ACTIVE'],
    [{ status: 'CANCELED' as const }, 'SUBSCRIPTION_NOT_ACTIVE'],
    [{ needsAttention: true }, 'NEEDS_ATTENTION'],
    [{ billingKeyStatus: 'REVOKED' as const }, 'BILLING_KEY_REVOKED'],
    [{ method: 'MOBILE' as const }, 'MOBILE_CHAIN_MISSING'],
    [{ method: 'MOBILE' as const, lastTransactionId: 'T1', lastAmount: 5000, lastTransactionAt: kst('2027-01-31T10:00:00') }, 'MOBILE_AMOUNT_MISMATCH'],
  ])('refuses %o with %s', (overrides, code) => {
    expect(planCharge(subscription(overrides), undefined, ctx(kst('2027-03-01T00:00:00')))).toMatchObject({ action: 'REFUSE', code });
  });

  it('refuses an UNKNOWN cycle until an operator resolves it', () => {
    const open = { cycle: 1, status: 'UNKNOWN' as const, amount: 9900, dueAt: kst('2027-02-28T10:00:00'), declines: 0 };
    expect(planCharge(subscription(), open, ctx(kst('2027-03-01T00:00:00')))).toMatchObject({
      action: 'REFUSE',
      code: 'PAYMENT_OUTCOME_UNKNOWN',
      attention: true,
    });
  });

  it('MOBILE: inside ±5 calendar days of last success + 1 month, and not after', () => {
    const mobile = subscription({
      method: 'MOBILE',
      lastTransactionId: 'T1',
      lastAmount: 9900,
      lastTransactionAt: kst('2027-03-10T23:30:00'),
      nextChargeAt: kst('2027-04-10T23:30:00'),
    });
    expect(planCharge(mobile, undefined, ctx(kst('2027-04-15T23:59:59')))).toMatchObject({
      action: 'CHARGE',
      lastTransactionId: 'T1',
      dueAt: kst('2027-04-10T23:30:00'),
    });
    expect(planCharge(mobile, undefined, ctx(kst('2027-04-16T00:00:00')))).toMatchObject({
      action: 'REFUSE',
      code: 'MOBILE_WINDOW_CLOSED',
      pastDue: true,
      attention: true,
    });
  });

  it('cancels at the period end instead of charging', () => {
    expect(planCharge(subscription({ cancelAtPeriodEnd: true }), undefined, ctx(kst('2027-02-28T10:00:00')))).toEqual({ action: 'CANCEL_AT_PERIOD_END' });
  });
});

describe('periodEndCancelAt: when a cancel at period end takes effect (its churn)', () => {
  const periodEnd = kst('2027-02-28T10:00:00');
  const asked = kst('2027-02-10T10:00:00');
  it('an ACTIVE subscription: at the period’s end, even when the pass that ends it runs days later', () => {
    const sub = { status: 'ACTIVE', currentPeriodEnd: periodEnd, nextChargeAt: periodEnd, changedAt: asked };
    expect(periodEndCancelAt(sub, kst('2027-03-03T10:00:00'))).toEqual(periodEnd);
  });
  it('a PAST_DUE one: at the retry it is cancelled instead of, not at its period’s end (already past and unpaid)', () => {
    const declined = kst('2027-02-28T10:00:05');
    const retry = new Date(declined.getTime() + DAY);
    const sub = { status: 'PAST_DUE', currentPeriodEnd: periodEnd, nextChargeAt: retry, changedAt: kst('2027-03-01T08:00:00') };
    expect(periodEndCancelAt(sub, kst('2027-04-01T00:00:00'))).toEqual(retry);
  });
  it('never before its last change (a request after an overdue retry), never after now (an operator’s early charge)', () => {
    const request = kst('2027-03-10T09:00:00');
    const overdue = { status: 'PAST_DUE', currentPeriodEnd: periodEnd, nextChargeAt: kst('2027-03-01T10:00:00'), changedAt: request };
    expect(periodEndCancelAt(overdue, kst('2027-03-12T00:00:00'))).toEqual(request);
    const early = { status: 'PAST_DUE', currentPeriodEnd: periodEnd, nextChargeAt: kst('2027-03-01T10:00:00'), changedAt: asked };
    expect(periodEndCancelAt(early, kst('2027-02-28T12:00:00'))).toEqual(kst('2027-02-28T12:00:00'));
  });
});

describe('planAfterDecline', () => {
  const due = kst('2027-02-28T10:00:00');
  const base = { method: 'CARD' as const, dueAt: due, retryDelaysMs: DELAYS, lastTransactionAt: null, timezone: SEOUL };

  it('retries at due + 1, 3 and 5 days, then cancels', () => {
    expect(planAfterDecline({ ...base, declines: 1, now: due })).toEqual({ action: 'RETRY', retryAt: new Date(due.getTime() + DAY) });
    expect(planAfterDecline({ ...base, declines: 2, now: new Date(due.getTime() + DAY) })).toEqual({
      action: 'RETRY',
      retryAt: new Date(due.getTime() + 3 * DAY),
    });
    expect(planAfterDecline({ ...base, declines: 3, now: new Date(due.getTime() + 3 * DAY) })).toEqual({
      action: 'RETRY',
      retryAt: new Date(due.getTime() + 5 * DAY),
    });
    expect(planAfterDecline({ ...base, declines: 4, now: new Date(due.getTime() + 5 * DAY) })).toEqual({ action: 'CANCEL', reason: 'RETRIES_EXHAUSTED' });
  });

  it('after downtime keeps the spacing from now instead of retrying in a burst', () => {
    const late = new Date(due.getTime() + 10 * DAY);
    expect(planAfterDecline({ ...base, declines: 1, now: late })).toEqual({ action: 'RETRY', retryAt: new Date(late.getTime() + DAY) });
    expect(planAfterDecline({ ...base, declines: 2, now: late })).toEqual({ action: 'RETRY', retryAt: new Date(late.getTime() + 2 * DAY) });
  });

  it('MOBILE: a retry outside the window is not scheduled', () => {
    const mobile = { ...base, method: 'MOBILE' as const, lastTransactionAt: kst('2027-01-28T10:00:00'), retryDelaysMs: [1, 3, 7].map((d) => d * DAY) };
    expect(planAfterDecline({ ...mobile, declines: 2, now: new Date(due.getTime() + DAY) })).toMatchObject({ action: 'RETRY' });
    expect(planAfterDecline({ ...mobile, declines: 3, now: new Date(due.getTime() + 3 * DAY) })).toEqual({ action: 'WINDOW_CLOSED' });
  });

  it('property: a scheduled retry is never in the past and never earlier than its place in the schedule', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 60 * DAY }), (declines, lateBy) => {
        const now = new Date(due.getTime() + lateBy);
        const plan = planAfterDecline({ ...base, declines, now });
        if (plan.action !== 'RETRY') throw new Error('expected a retry');
        expect(plan.retryAt.getTime()).toBeGreaterThan(now.getTime());
        expect(plan.retryAt.getTime()).toBeGreaterThanOrEqual(due.getTime() + DELAYS[declines - 1]!);
      }),
    );
  });
});

describe('chargeOrderId', () => {
  it('property: deterministic, distinct per (subscription, cycle, attempt), at most 50 bytes', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 1, max: 999_999 }), (id, cycle, attempt) => {
        const orderId = chargeOrderId(id, cycle, attempt);
        expect(Buffer.byteLength(orderId)).toBeLessThanOrEqual(50);
        expect(chargeOrderId(id, cycle, attempt)).toBe(orderId);
        expect(chargeOrderId(id, cycle, attempt + 1)).not.toBe(orderId);
        expect(chargeOrderId(id, cycle + 1, attempt)).not.toBe(orderId);
      }),
    );
  });
});

describe('docs/architecture.md, invariant 13: consent before more money', () => {
  const due = kst('2027-02-28T10:00:00');
  const hoursBefore = (h: number) => new Date(due.getTime() - h * 3600_000);
  const trial = subscription({ status: 'TRIALING', cycle: 0, anchorAt: due, nextChargeAt: due });

  it('a trial converts only with a TRIAL_CONVERSION consent obtained within the 30 × 24 hours before the charge', () => {
    expect(planCharge(trial, undefined, ctx(due))).toEqual({ action: 'CANCEL_CONSENT_MISSING' });
    expect(planCharge(trial, undefined, ctx(due, [{ kind: 'TRIAL_CONVERSION', obtainedAt: hoursBefore(30 * 24) }]))).toMatchObject({
      action: 'CHARGE',
      amount: 9900,
      cycle: 0,
    });
    expect(planCharge(trial, undefined, ctx(due, [{ kind: 'TRIAL_CONVERSION', obtainedAt: hoursBefore(30 * 24 + 1) }]))).toEqual({
      action: 'CANCEL_CONSENT_MISSING',
    });
    // After the charge's time, or of the other kind: does not count.
    expect(planCharge(trial, undefined, ctx(due, [{ kind: 'TRIAL_CONVERSION', obtainedAt: new Date(due.getTime() + 1000) }]))).toEqual({
      action: 'CANCEL_CONSENT_MISSING',
    });
    expect(planCharge(trial, undefined, ctx(due, [{ kind: 'PRICE_INCREASE', obtainedAt: hoursBefore(1) }]))).toEqual({ action: 'CANCEL_CONSENT_MISSING' });
    // CONSENT_REQUIRED=false: converted without one.
    expect(planCharge(trial, undefined, ctx(due, [], false))).toMatchObject({ action: 'CHARGE' });
  });

  it('a pending increase is charged only with a PRICE_INCREASE consent obtained after it was asked for; until then the old amount', () => {
    const asked = hoursBefore(10 * 24);
    const pending = subscription({ lastAmount: 9900, pendingAmount: 12900, pendingAmountRequestedAt: asked });
    expect(planCharge(pending, undefined, ctx(due))).toMatchObject({ action: 'CHARGE', amount: 9900 });
    expect(planCharge(pending, undefined, ctx(due, [{ kind: 'PRICE_INCREASE', obtainedAt: hoursBefore(11 * 24) }]))).toMatchObject({
      action: 'CHARGE',
      amount: 9900,
    });
    expect(planCharge(pending, undefined, ctx(due, [{ kind: 'PRICE_INCREASE', obtainedAt: hoursBefore(5 * 24) }]))).toMatchObject({
      action: 'CHARGE',
      amount: 12900,
    });
    expect(planCharge(pending, undefined, ctx(due, [], false))).toMatchObject({ action: 'CHARGE', amount: 12900 });
  });

  it('whatever set it, an amount above the last charge is refused without a counting consent', () => {
    const raised = subscription({ amount: 15000, lastAmount: 9900 });
    expect(planCharge(raised, undefined, ctx(due))).toMatchObject({ action: 'REFUSE', code: 'CONSENT_REQUIRED', attention: true });
    expect(planCharge(raised, undefined, ctx(due, [{ kind: 'PRICE_INCREASE', obtainedAt: hoursBefore(24) }]))).toMatchObject({
      action: 'CHARGE',
      amount: 15000,
    });
    // A retry of an increased amount whose consent has aged out is refused too.
    const open = { cycle: 1, status: 'FAILED' as const, amount: 15000, dueAt: due, declines: 1 };
    expect(
      planCharge(subscription({ lastAmount: 9900, status: 'PAST_DUE' }), open, ctx(due, [{ kind: 'PRICE_INCREASE', obtainedAt: hoursBefore(31 * 24) }])),
    ).toMatchObject({ code: 'CONSENT_REQUIRED' });
    // A decrease never needs one.
    expect(planCharge(subscription({ amount: 5000, lastAmount: 9900 }), undefined, ctx(due))).toMatchObject({ action: 'CHARGE', amount: 5000 });
  });
});
