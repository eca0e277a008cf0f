// What the customer portal does for the person who pays (docs/api.md "Subscription lifecycle"): read their
// subscriptions and payments, cancel, keep a scheduled cancellation, withdraw (청약철회), agree to or decline what waits
// for their consent. Each action is the same service as its API or admin route (subscriptions/cancel.ts,
// payments/withdraw.ts, subscriptions/consents.ts, subscriptions/change-price.ts; payments through
// payment-actions.service.ts), so the rules, events and idempotency are
// theirs; here only whose it is: a subscription of another customer, or none, is the same 404, and every action is
// audited as `customer:<userId>` with the portal session it came through. Whose it is is checked once per request, by
// ownedSubscriptionId: an action takes only the OwnedSubscriptionId it answers.
import { type Db, sqlQuery } from '../../db/prisma.ts';
import { type ConsentRecord, type ConsentSubject, consentState } from '../ledger/consent.rules.ts';
import { createPaymentActions } from '../payments/payment-actions.service.ts';
import { type Actor, CUSTOMER_ACTOR_PREFIX } from '../audit/audit.ts';
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

declare const owned: unique symbol;
/** A subscription id that ownedSubscriptionId found to be the customer's: the only id the actions below take. */
export type OwnedSubscriptionId = string & { readonly [owned]: true };

/**
 * The customer's subscription `id`, or undefined: malformed, missing and another customer's all answer alike (the
 * pages show the same 404 for each). The one ownership check of a portal request.
 */
export async function ownedSubscriptionId(db: Db, userId: string, id: string): Promise<OwnedSubscriptionId | undefined> {
  if (!UUID.test(id)) return undefined;
  const row = await db.subscription.findUnique({ where: { id }, select: { id: true, userId: true } });
  return row && row.userId === userId ? (row.id as OwnedSubscriptionId) : undefined;
}

/** The audit trail's actor of a customer: `customer:<userId>`, with the portal session in the entry. */
export const customerActor = (who: PortalActor, reason: string): Actor => ({
  actor: `${CUSTOMER_ACTOR_PREFIX}${who.userId}`,
  reason,
  portalSessionId: who.portalSessionId,
});

/** What consentState reads of each live subscription of a customer, with its consents, in one statement. */
const WAITING_SQL = `SELECT s."id", s."status", s."cancelAtPeriodEnd", s."nextChargeAt", s."pendingAmount", s."pendingAmountRequestedAt", s."trialEnd",
    coalesce((SELECT jsonb_agg(jsonb_build_object('kind', c."kind", 'obtainedAt', c."obtainedAt")) FROM "consents" c WHERE c."subscriptionId" = s."id"), '[]') AS "consents"
  FROM "subscriptions" s WHERE s."userId" = $1 AND s."status" <> 'CANCELED'`;

interface WaitingRow extends ConsentSubject {
  id: string;
  consents: Array<{ kind: ConsentRecord['kind']; obtainedAt: string }>;
}

/** jsonb carries instants as strings (with their offset: the columns are timestamptz). */
const consentsOf = (row: WaitingRow): ConsentRecord[] => row.consents.map((c) => ({ kind: c.kind, obtainedAt: new Date(c.obtainedAt) }));

export function createPortalActions(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db } = deps;
  const cancels = createCancel(deps);
  const prices = createPriceChange(deps);
  const consents = createConsents(deps);
  const withdrawals = createWithdrawal(deps);
  const payments = createPaymentActions(deps);

  return {
    /** ACTIVE and TRIALING end at the period's (trial's) end, PAST_DUE and PAUSED now; twice acts once (cancel.ts customerCancel). */
    async cancel(who: PortalActor, subscriptionId: OwnedSubscriptionId, input: { reason?: string }): Promise<Subscription> {
      return cancels.cancelForCustomer(subscriptionId, customerActor(who, input.reason?.trim().slice(0, 500) || 'customer cancelled in the portal'));
    },
    /** Undoes a cancellation scheduled for the period's end while the period lasts; else 409 STATE_CONFLICT. */
    async keep(who: PortalActor, subscriptionId: OwnedSubscriptionId): Promise<Subscription> {
      return cancels.keep(subscriptionId, customerActor(who, 'customer kept the subscription in the portal'));
    },
    async withdrawalOffer(subscriptionId: OwnedSubscriptionId): Promise<WithdrawalOffer> {
      return withdrawals.withdrawalOffer(subscriptionId);
    },
    /** 409 WITHDRAWAL_NOT_AVAILABLE (details.reason: the offer's reason) when the offer is not available. */
    async withdraw(who: PortalActor, subscriptionId: OwnedSubscriptionId): Promise<{ subscription: Subscription; refunded: number; refundDue: number }> {
      return withdrawals.withdraw(subscriptionId, customerActor(who, 'customer withdrew (청약철회) in the portal'));
    },
    /** Records a consent with channel PORTAL; 409 CONSENT_ALREADY_DECIDED when none of its kind waits. */
    async consent(who: PortalActor, subscriptionId: OwnedSubscriptionId, kind: 'PRICE_INCREASE' | 'TRIAL_CONVERSION'): Promise<Subscription> {
      return consents.consentFromCustomer(subscriptionId, kind, customerActor(who, kind));
    },
    /** Drops the pending increase (the old amount goes on); 409 CONSENT_ALREADY_DECIDED when none is pending. */
    async decline(who: PortalActor, subscriptionId: OwnedSubscriptionId): Promise<Subscription> {
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
      const rows = await sqlQuery<WaitingRow>(db, WAITING_SQL, [userId]);
      const waiting = new Map<string, Partial<Record<ConsentRecord['kind'], 'WAITING' | 'TOO_EARLY'>>>();
      for (const row of rows) {
        const open: Partial<Record<ConsentRecord['kind'], 'WAITING' | 'TOO_EARLY'>> = {};
        for (const kind of ['PRICE_INCREASE', 'TRIAL_CONVERSION'] as const) {
          const state = consentState(row, kind, consentsOf(row), now);
          if (state !== 'DECIDED') open[kind] = state;
        }
        if (Object.keys(open).length > 0) waiting.set(row.id, open);
      }
      return waiting;
    },
    /**
     * The customer's latest payments with their refunds, newest first: the rows GET /admin/payments?userId= lists.
     */
    async paymentsOf(userId: string, limit: number): Promise<Payment[]> {
      return (await payments.listPayments({ userId, limit })).items;
    },
  };
}

export type PortalActions = ReturnType<typeof createPortalActions>;
