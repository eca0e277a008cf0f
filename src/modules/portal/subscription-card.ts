// One subscription as the overview and its own page show it (docs/operating.md "Customer portal"): the facts in the
// customer's language and the actions the subscription's state allows, each a form made now (its idempotency key).
// Which actions show follows the rules of the services behind them; the services still refuse what they refuse.
import type { Translate } from '../i18n/messages.ts';
import type { Subscription } from './portal-deps.ts';
import { portalForm, type PortalForm } from './portal-page.ts';

/** A consent counts for a charge when obtained within the 30 × 24 hours before it (docs/architecture.md, invariant 13). */
const CONSENT_WINDOW_MS = 30 * 24 * 3600_000;

export interface SubscriptionCard {
  subscription: Subscription;
  /** The masked card or phone: "신한카드 1234-****-****-5678", "SKT 010-****-5678". */
  instrument: string;
  /** The trial waits for the customer's consent to its conversion (ends within 30 days, no counting consent). */
  trialNeedsConsent: boolean;
  /** Where "Cancel subscription" goes (the confirmation page), when it can be cancelled. */
  cancelHref?: string;
  forms: Partial<Record<'keep' | 'agree' | 'decline' | 'trialAgree' | 'changeMethod', PortalForm>>;
}

export function instrumentOf(s: Subscription, t: Translate): string {
  const key = s.billingKey;
  if (key.method === 'CARD') return t('portal.overview.card', { name: key.cardName ?? '', number: key.cardNumber ?? '' }).trim();
  return t('portal.overview.phone', { carrier: key.carrier ?? '', number: key.phoneNumber ?? '' }).trim();
}

/** A trial ending within 30 days of `now` without a TRIAL_CONVERSION consent that would count at its end. */
export function trialNeedsConsent(s: Subscription, now: Date): boolean {
  if (s.status !== 'TRIALING' || !s.trialEnd || s.cancelAtPeriodEnd) return false;
  const end = new Date(s.trialEnd).getTime();
  if (end - now.getTime() > CONSENT_WINDOW_MS) return false;
  return !s.consents.some((c) => c.kind === 'TRIAL_CONVERSION' && new Date(c.obtainedAt).getTime() >= end - CONSENT_WINDOW_MS);
}

export function cardOf(s: Subscription, now: Date, t: Translate): SubscriptionCard {
  const page = `/portal/subscriptions/${s.id}`;
  const live = s.status !== 'CANCELED';
  const forms: SubscriptionCard['forms'] = {};
  // No choice the merchant would prefer is drawn more prominently than its opposite (the Fair Trade Commission's
  // 2025 guideline on dark patterns: a "false hierarchy"): agree and decline, keep and cancel's confirmation, look alike.
  if (live && s.cancelAtPeriodEnd) forms.keep = portalForm(`${page}/keep`, t('portal.overview.keep'));
  if (live && s.pendingAmount !== undefined) {
    forms.agree = portalForm(`${page}/consent`, t('portal.overview.agree'));
    forms.decline = portalForm(`${page}/decline`, t('portal.overview.decline'));
  }
  const trial = trialNeedsConsent(s, now);
  if (trial) forms.trialAgree = portalForm(`${page}/trial-consent`, t('portal.overview.trialAgree'));
  if (live) forms.changeMethod = portalForm(`${page}/payment-method`, t('portal.overview.changeMethod'));
  return {
    subscription: s,
    instrument: instrumentOf(s, t),
    trialNeedsConsent: trial,
    cancelHref: live && !s.cancelAtPeriodEnd ? `${page}/cancel` : undefined,
    forms,
  };
}
