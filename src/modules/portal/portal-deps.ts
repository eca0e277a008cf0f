// What the portal's pages are given by src/app.ts (index.ts registers them with it): the services' own dependencies,
// the portal's sessions, the idempotency store, the customer's actions and reads (portal-actions), and the admin
// routes' payment list (the records CSV shows exactly its rows).
import type { Idempotency } from '../idempotency/idempotency.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { PortalActions } from './portal-actions.ts';
import type { PortalSessions } from './portal-sessions.ts';

export type { ConsentsWaiting, Payment, PortalActions, Subscription, WithdrawalOffer } from './portal-actions.ts';

export interface PortalDeps {
  service: ServiceDeps;
  sessions: PortalSessions;
  idempotency: Idempotency;
  actions: PortalActions;
  /** The admin routes' payment list (GET /admin/payments?userId=): the records CSV pages through it. */
  payments: PaymentActions;
}
