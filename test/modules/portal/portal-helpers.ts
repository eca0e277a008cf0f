// What the portal's action tests share: the portal's service built on the running app's own dependencies (the same
// database, gateway client and simulated clock as its routes), a customer acting, the subscription's events and audit.
import type { App } from '../../../src/app.ts';
import { renderEvent } from '../../../src/modules/events/events.render.ts';
import { loadEvents } from '../../../src/modules/events/events.service.ts';
import { createPortalActions, type PortalActor } from '../../../src/modules/portal/portal-actions.ts';

export const kst = (local: string) => new Date(`${local}+09:00`);
export const DAY = 24 * 3600_000;

export const portalOf = (app: App) => createPortalActions({ db: app.db, gateway: app.gateway, clock: app.clock, config: app.config, log: app.log });

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
