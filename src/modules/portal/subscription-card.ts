// One subscription as the overview and its own page show it (docs/portal.md "Customer portal"): the facts in the
// customer's language and the actions the subscription's state allows, each a form made now (its idempotency key).
// Which actions show follows the rules of the services behind them; the services still refuse what they refuse.
// Whether a consent waits for the customer is not decided here: portal-actions.ts consentsWaiting answers it with the
// rule the consent and decline actions refuse by (ledger/consent.rules.ts consentState), so no button is offered that
// the service would refuse.
import type { Translate } from '../i18n/messages.ts';
import { consentOpensAt } from '../ledger/consent.rules.ts';
import type { ConsentsWaiting, Subscription } from './portal-deps.ts';
import { portalForm, type PortalForm } from './portal-page.ts';

export interface SubscriptionCard {
  subscription: Subscription;
  /** The masked card or phone: "신한카드 1234-****-****-5678", "SKT 010-****-5678". */
  instrument: string;
  /** The trial waits for the customer's consent to its conversion (consentState: WAITING). */
  trialNeedsConsent: boolean;
  /**
   * A pending price increase as the customer may decide it (consentState): WAITING, agree or decline; TOO_EARLY, the
   * next charge is beyond the consent window, so only decline, and agreeing opens at `increaseOpensAt`; DECIDED, agreed.
   */
  increase?: 'WAITING' | 'TOO_EARLY' | 'DECIDED';
  increaseOpensAt?: string;
  /** Where "Cancel subscription" goes (the confirmation page), when it can be cancelled. */
  cancelHref?: string;
  forms: Partial<Record<'keep' | 'agree' | 'decline' | 'trialAgree' | 'changeMethod', PortalForm>>;
}

export function instrumentOf(s: Subscription, t: Translate): string {
  const key = s.billingKey;
  if (key.method === 'CARD') return t('portal.overview.card', { name: key.cardName ?? '', number: key.cardNumber ?? '' }).trim();
  return t('portal.overview.phone', { carrier: key.carrier ?? '', number: key.phoneNumber ?? '' }).trim();
}

export function cardOf(s: Subscription, waiting: ConsentsWaiting, t: Translate): SubscriptionCard {
  const page = `/portal/subscriptions/${s.id}`;
  const live = s.status !== 'CANCELED';
  const forms: SubscriptionCard['forms'] = {};
  // No choice the merchant would prefer is drawn more prominently than its opposite (the Fair Trade Commission's
  // 2025 guideline on dark patterns: a "false hierarchy"): agree and decline, keep and cancel's confirmation, look alike.
  if (live && s.cancelAtPeriodEnd) forms.keep = portalForm(`${page}/keep`, t('portal.overview.keep'));
  const increase = live && s.pendingAmount !== undefined ? (waiting.get(s.id)?.PRICE_INCREASE ?? 'DECIDED') : undefined;
  const trial = waiting.get(s.id)?.TRIAL_CONVERSION === 'WAITING';
  if (increase === 'WAITING') forms.agree = portalForm(`${page}/consent`, t('portal.overview.agree'));
  if (increase === 'WAITING' || increase === 'TOO_EARLY') forms.decline = portalForm(`${page}/decline`, t('portal.overview.decline'));
  if (trial) forms.trialAgree = portalForm(`${page}/trial-consent`, t('portal.overview.trialAgree'));
  if (live) forms.changeMethod = portalForm(`${page}/payment-method`, t('portal.overview.changeMethod'));
  return {
    subscription: s,
    instrument: instrumentOf(s, t),
    trialNeedsConsent: trial,
    increase,
    increaseOpensAt: increase === 'TOO_EARLY' && s.nextChargeAt ? consentOpensAt(new Date(s.nextChargeAt)).toISOString() : undefined,
    cancelHref: live && !s.cancelAtPeriodEnd ? `${page}/cancel` : undefined,
    forms,
  };
}
