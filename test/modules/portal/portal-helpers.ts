// What the portal's action tests share: the portal's service built on the running app's own dependencies (the same
// database, gateway client and simulated clock as its routes), a customer acting, the subscription's events and audit.
import type { App } from '../../../src/app.ts';
import { renderEvent } from '../../../src/modules/events/events.render.ts';
import { loadEvents } from '../../../src/modules/events/events.service.ts';
import { NotFoundError } from '../../../src/lib/errors.ts';
import { createPortalActions, type OwnedSubscriptionId, ownedSubscriptionId, type PortalActor } from '../../../src/modules/portal/portal-actions.ts';

export const kst = (local: string) => new Date(`${local}+09:00`);
export const DAY = 24 * 3600_000;

/**
 * The portal's actions as its pages call them: the subscription checked to be the customer's first (ownedSubscriptionId,
 * the one check of a request; the page shows its 404 where this throws 404 NOT_FOUND), then the action.
 */
export function portalOf(app: App) {
  const actions = createPortalActions({ db: app.db, gateway: app.gateway, clock: app.clock, config: app.config, log: app.log });
  const mine = async (userId: string, id: string): Promise<OwnedSubscriptionId> => {
    const owned = await ownedSubscriptionId(app.db, userId, id);
    if (!owned) throw new NotFoundError('Subscription');
    return owned;
  };
  return {
    ...actions,
    cancel: async (who: PortalActor, id: string, input: { reason?: string }) => actions.cancel(who, await mine(who.userId, id), input),
    keep: async (who: PortalActor, id: string) => actions.keep(who, await mine(who.userId, id)),
    withdrawalOffer: async (userId: string, id: string) => actions.withdrawalOffer(await mine(userId, id)),
    withdraw: async (who: PortalActor, id: string) => actions.withdraw(who, await mine(who.userId, id)),
    consent: async (who: PortalActor, id: string, kind: 'PRICE_INCREASE' | 'TRIAL_CONVERSION') => actions.consent(who, await mine(who.userId, id), kind),
    decline: async (who: PortalActor, id: string) => actions.decline(who, await mine(who.userId, id)),
  };
}

export const customer = (userId: string): PortalActor => ({ userId, portalSessionId: `portal-session-of-${userId}` });

/**
 * The subscription's events, oldest first, rendered as the feed renders them (renderEvent), read by the object
 * without waiting for their sequence: the feed numbers an event only once no older transaction is in flight anywhere
 * on the server, and the test files running beside this one keep transactions in flight.
 */
export async function eventsOf(app: App, subscriptionId: string) {
  const rows = await loadEvents(app.db, 'e."objectId" = $1::uuid', [subscriptionId], 'ORDER BY e."xid", e."pos"');
  return rows.map((row) => renderEvent(row, app.config));
}

/** The audit entries of one subscription or payment, newest first. */
export async function auditOf(app: App, entityType: 'subscription' | 'payment', entityId: string) {
  return app.db.auditEvent.findMany({ where: { entityType, entityId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}
