// What the portal's pages are given by src/app.ts (index.ts registers them with it): the services' own dependencies,
// the portal's sessions, the idempotency store, the customer's actions and reads (portal-actions), and the admin
// routes' payment list (the records CSV shows exactly its rows).
import type { Idempotency } from '../idempotency/idempotency.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import type { serializePayment } from '../payments/payments.service.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import type { PortalActor } from './portal-page.ts';
import type { PortalSessions } from './portal-sessions.ts';

export type Subscription = ReturnType<typeof serializeSubscription>;
export type Payment = ReturnType<typeof serializePayment>;

export type WithdrawalOffer =
  | {
      available: true;
      until: Date;
      refundTotal: number;
      payments: Array<{ id: string; amount: number; approvedAt: Date | null; refundable: 'GATEWAY' | 'EXTERNAL' }>;
    }
  | { available: false; reason: 'OFF' | 'NOT_PAID' | 'WINDOW_PASSED' | 'USED' | 'CANCELED' | 'NEEDS_ATTENTION' };

/** The customer's actions and reads, each audited as `customer:<userId>` with the portal session by the service. */
export interface PortalActions {
  cancel(who: PortalActor, subscriptionId: string, input: { reason?: string }): Promise<unknown>;
  keep(who: PortalActor, subscriptionId: string): Promise<unknown>;
  withdrawalOffer(userId: string, subscriptionId: string): Promise<WithdrawalOffer>;
  withdraw(who: PortalActor, subscriptionId: string): Promise<unknown>;
  consent(who: PortalActor, subscriptionId: string, kind: 'PRICE_INCREASE' | 'TRIAL_CONVERSION'): Promise<unknown>;
  decline(who: PortalActor, subscriptionId: string): Promise<unknown>;
  subscriptionsOf(userId: string): Promise<Subscription[]>;
  paymentsOf(userId: string, limit: number): Promise<Payment[]>;
}

export interface PortalDeps {
  service: ServiceDeps;
  sessions: PortalSessions;
  idempotency: Idempotency;
  actions: PortalActions;
  /** The admin routes' payment list (GET /admin/payments?userId=): the records CSV pages through it. */
  payments: PaymentActions;
}
