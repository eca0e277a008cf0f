// What the customer portal does for the person who pays (docs/api.md "Subscription lifecycle"): read their
// subscriptions and payments, cancel, keep a scheduled cancellation, withdraw (청약철회), agree to or decline what waits
// for their consent. Each action is the same service as its API or admin route (subscriptions/cancel.ts,
// payments/withdraw.ts, subscriptions/consents.ts, subscriptions/change-price.ts; payments through
// payment-actions.service.ts), so the rules, events and idempotency are
// theirs; here only whose it is: a subscription of another customer, or none, is the same 404, and every action is
// audited as `customer:<userId>` with the portal session it came through.
import { NotFoundError } from '../../lib/errors.ts';
import { type ConsentRecord, consentState } from '../ledger/consent.rules.ts';
import { createPaymentActions } from '../payments/payment-actions.service.ts';
import type { Actor } from '../audit/audit.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { createCancel } from '../subscriptions/cancel.ts';
import { createPriceChange } from '../subscriptions/change-price.ts';
import { createConsents } from '../subscriptions/consents.ts';
import { readSubscriptionsOfUser } from '../subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import { createWithdrawal, type WithdrawalOffer } from '../payments/withdraw.ts';
import type { serializePayment } from '../payments/payments.service.ts';

export type { WithdrawalOffer, WithdrawalRefusal } from '../payments/withdraw.ts';
export type Subscription = ReturnType<typeof serializeSubscription>;
export type Payment = ReturnType<typeof serializePayment>;
/**
 * The consents open to the customer's decision now, by subscription id (none: not in the map): WAITING, agree and
 * decline are taken; TOO_EARLY, only a price increase's decline is (consent.rules.ts consentState).
 */
export type ConsentsWaiting = ReadonlyMap<string, Partial<Record<ConsentRecord['kind'], 'WAITING' | 'TOO_EARLY'>>>;

/** The customer acting in the portal: their userId (audit actor `customer:<userId>`) and the portal session's id. */
export interface PortalActor {
  userId: string;
  portalSessionId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The audit trail's actor of a customer: `customer:<userId>`, with the portal session in the entry. */
export const customerActor = (who: PortalActor, reason: string): Actor => ({
  actor: `customer:${who.userId}`,
  reason,
  portalSessionId: who.portalSessionId,
});

export function createPortalActions(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db } = deps;
  const cancels = createCancel(deps);
  const prices = createPriceChange(deps);
  const consents = createConsents(deps);
  const withdrawals = createWithdrawal(deps);
  const payments = createPaymentActions(deps);

  /** The subscription is this customer's, else 404 NOT_FOUND: the same answer as for an id that does not exist. */
  async function own(userId: string, subscriptionId: string): Promise<void> {
    const found = UUID.test(subscriptionId) && (await db.subscription.count({ where: { id: subscriptionId, userId } })) === 1;
    if (!found) throw new NotFoundError('Subscription');
  }

  return {
    /** ACTIVE and TRIALING end at the period's (trial's) end, PAST_DUE and PAUSED now; twice acts once (cancel.ts customerCancel). */
    async cancel(who: PortalActor, subscriptionId: string, input: { reason?: string }): Promise<Subscription> {
      await own(who.userId, subscriptionId);
      return cancels.cancelForCustomer(subscriptionId, customerActor(who, input.reason?.trim().slice(0, 500) || 'customer cancelled in the portal'));
    },
    /** Undoes a cancellation scheduled for the period's end while the period lasts; else 409 STATE_CONFLICT. */
    async keep(who: PortalActor, subscriptionId: string): Promise<Subscription> {
      await own(who.userId, subscriptionId);
      return cancels.keep(subscriptionId, customerActor(who, 'customer kept the subscription in the portal'));
    },
    async withdrawalOffer(userId: string, subscriptionId: string): Promise<WithdrawalOffer> {
      await own(userId, subscriptionId);
      return withdrawals.withdrawalOffer(subscriptionId);
    },
    /** 409 WITHDRAWAL_NOT_AVAILABLE (details.reason: the offer's reason) when the offer is not available. */
    async withdraw(who: PortalActor, subscriptionId: string): Promise<{ subscription: Subscription; refunded: number; refundDue: number }> {
      await own(who.userId, subscriptionId);
      return withdrawals.withdraw(subscriptionId, customerActor(who, 'customer withdrew (청약철회) in the portal'));
    },
    /** Records a consent with channel PORTAL; 409 CONSENT_ALREADY_DECIDED when none of its kind waits. */
    async consent(who: PortalActor, subscriptionId: string, kind: 'PRICE_INCREASE' | 'TRIAL_CONVERSION'): Promise<Subscription> {
      await own(who.userId, subscriptionId);
      return consents.consentFromCustomer(subscriptionId, kind, customerActor(who, kind));
    },
    /** Drops the pending increase (the old amount goes on); 409 CONSENT_ALREADY_DECIDED when none is pending. */
    async decline(who: PortalActor, subscriptionId: string): Promise<Subscription> {
      await own(who.userId, subscriptionId);
      return prices.declineIncrease(subscriptionId, customerActor(who, 'customer declined the price increase in the portal'));
    },
    /** Current ones first (ACTIVE, TRIALING, PAST_DUE, PAUSED), then CANCELED; newest first within each. */
    async subscriptionsOf(userId: string): Promise<Subscription[]> {
      return (await readSubscriptionsOfUser(db, userId)).map(serializeSubscription);
    },
    /**
     * Which consents are open to the customer's decision now, per subscription: consentState, the rule the consent and
     * decline actions refuse by (CONSENT_ALREADY_DECIDED, STATE_CONFLICT), so a page offers only what they take.
     */
    async consentsWaiting(userId: string): Promise<ConsentsWaiting> {
      const now = deps.clock.now();
      const rows = await db.subscription.findMany({
        where: { userId, status: { not: 'CANCELED' } },
        select: {
          id: true,
          status: true,
          cancelAtPeriodEnd: true,
          nextChargeAt: true,
          pendingAmount: true,
          pendingAmountRequestedAt: true,
          trialEnd: true,
          consents: { select: { kind: true, obtainedAt: true } },
        },
      });
      const waiting = new Map<string, Partial<Record<ConsentRecord['kind'], 'WAITING' | 'TOO_EARLY'>>>();
      for (const row of rows) {
        const open: Partial<Record<ConsentRecord['kind'], 'WAITING' | 'TOO_EARLY'>> = {};
        for (const kind of ['PRICE_INCREASE', 'TRIAL_CONVERSION'] as const) {
          const state = consentState(row, kind, row.consents, now);
          if (state !== 'DECIDED') open[kind] = state;
        }
        if (Object.keys(open).length > 0) waiting.set(row.id, open);
      }
      return waiting;
    },
    /**
     * The customer's latest payments with their refunds, newest first: the rows GET /admin/payments?userId= lists.
     * `subscriptions`, when given: every one of the customer's, as subscriptionsOf answered them just now (then not read
     * again); the same payments either way.
     */
    async paymentsOf(userId: string, limit: number, subscriptions?: readonly Pick<Subscription, 'id'>[]): Promise<Payment[]> {
      return (await payments.listPayments({ userId, subscriptionIdsOfUser: subscriptions?.map((s) => s.id), limit })).items;
    },
  };
}

export type PortalActions = ReturnType<typeof createPortalActions>;
