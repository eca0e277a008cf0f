// What the portal's action tests share: the portal's service built on the running app's own dependencies (the same
// database, gateway client and simulated clock as its routes), a customer acting, and the subscription's events.
import type { App } from '../../../src/app.ts';
import { createPortalActions, type PortalActor } from '../../../src/modules/portal/portal-actions.ts';

export const kst = (local: string) => new Date(`${local}+09:00`);
export const DAY = 24 * 3600_000;

export const portalOf = (app: App) => createPortalActions({ db: app.db, gateway: app.gateway, clock: app.clock, config: app.config, log: app.log });

export const customer = (userId: string): PortalActor => ({ userId, portalSessionId: `portal-session-of-${userId}` });

/** The subscription's events, oldest first, as the merchant's feed renders them. */
export async function eventsOf(
  app: App,
  subscriptionId: string,
): Promise<Array<{ type: string; data: { object: Record<string, unknown>; previousAttributes?: Record<string, unknown> } }>> {
  const response = await app.inject({
    method: 'GET',
    url: '/api/v1/events?limit=100',
    headers: { authorization: `Bearer ${app.config.apiKeys[0] as string}` },
  });
  const page = response.json() as { items: Array<{ type: string; data: { object: Record<string, unknown>; previousAttributes?: Record<string, unknown> } }> };
  return page.items.filter((event) => event.data.object.id === subscriptionId);
}

/** The audit entries of one subscription or payment, newest first. */
export async function auditOf(app: App, entityType: 'subscription' | 'payment', entityId: string) {
  return app.db.auditEvent.findMany({ where: { entityType, entityId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}
