// The consent rule (docs/architecture.md, invariant 13): which consents count for a charge, when a charge needs them
// at all, and the amount a pending price increase charges. Pure; planCharge (charge.rules.ts) applies them.
import type { ChargeableSubscription } from './schedule.rules.ts';

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
  open: { amount: number } | undefined,
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
  ctx: { now: Date; consents: readonly ConsentRecord[]; consentRequired: boolean },
): number {
  if (sub.pendingAmount === null) return sub.amount;
  if (!ctx.consentRequired || hasCountingConsent(ctx.consents, 'PRICE_INCREASE', ctx.now, sub.pendingAmountRequestedAt)) return sub.pendingAmount;
  return sub.amount;
}

/** The first moment a consent counts for a charge at `chargeAt`: the consent window before it. */
export const consentOpensAt = (chargeAt: Date): Date => new Date(chargeAt.getTime() - CONSENT_WINDOW_MS);

/** What consentState reads of a subscription. */
export interface ConsentSubject {
  status: string;
  cancelAtPeriodEnd: boolean;
  nextChargeAt: Date | null;
  pendingAmount: number | null;
  pendingAmountRequestedAt: Date | null;
  trialEnd: Date | null;
}

/**
 * Whether a consent of `kind` waits for the customer's decision at `now` (the portal's agree and decline), judged at
 * the charge it is for (a price increase: the next charge; a trial: its end; now if that is past): WAITING, a consent
 * obtained now would count there and none recorded does; TOO_EARLY, that charge is more than the consent window away,
 * so a consent obtained now would not count at it (a trial's merchant is told when the window opens, trials.ts; a
 * price increase may still be declined); DECIDED, nothing waits (none pending, a counting consent recorded, the
 * subscription CANCELED, or a trial the customer cancelled, which ends at trialEnd and is never charged). The portal's
 * pages offer "agree" only where this says WAITING.
 */
export function consentState(
  sub: ConsentSubject,
  kind: ConsentRecord['kind'],
  consents: readonly ConsentRecord[],
  now: Date,
): 'WAITING' | 'DECIDED' | 'TOO_EARLY' {
  if (sub.status === 'CANCELED') return 'DECIDED';
  if (kind === 'PRICE_INCREASE' && sub.pendingAmount === null) return 'DECIDED';
  if (kind === 'TRIAL_CONVERSION' && (sub.status !== 'TRIALING' || !sub.trialEnd || sub.cancelAtPeriodEnd)) return 'DECIDED';
  const chargeAt = kind === 'PRICE_INCREASE' ? sub.nextChargeAt : sub.trialEnd;
  const at = chargeAt && chargeAt > now ? chargeAt : now;
  if (hasCountingConsent(consents, kind, at, kind === 'PRICE_INCREASE' ? sub.pendingAmountRequestedAt : null)) return 'DECIDED';
  return at.getTime() - now.getTime() > CONSENT_WINDOW_MS ? 'TOO_EARLY' : 'WAITING';
}
