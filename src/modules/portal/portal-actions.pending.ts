// Until the portal-actions service is merged: the reads the pages need, from the existing reads (the customer's
// subscriptions, current first; their latest payments through the admin list), and actions that refuse.
import { defineError } from '../../lib/errors.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { pageSubscriptions } from '../subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import type { PortalActions } from './portal-deps.ts';

const NotYet = defineError('NOT_AVAILABLE', 'The portal’s actions are not available yet', 503);

export function pendingPortalActions(deps: Pick<ServiceDeps, 'db'>, payments: PaymentActions): PortalActions {
  const refuse = async (): Promise<never> => {
    throw new NotYet();
  };
  return {
    cancel: refuse,
    keep: refuse,
    withdraw: refuse,
    consent: refuse,
    decline: refuse,
    withdrawalOffer: async () => ({ available: false, reason: 'OFF' }),
    async subscriptionsOf(userId) {
      const page = await pageSubscriptions(deps.db, { userId, limit: 100 });
      const all = page.items.map(serializeSubscription);
      return [...all.filter((s) => s.status !== 'CANCELED'), ...all.filter((s) => s.status === 'CANCELED')];
    },
    async paymentsOf(userId, limit) {
      return (await payments.listPayments({ userId, limit })).items;
    },
  };
}
