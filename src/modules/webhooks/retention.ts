// EVENT_RETENTION (docs/api.md "Events and webhooks"; docs/production.md "Event partitions"): a month of events goes
// with its delivery log as a whole, its two partitions dropped by the partitions pass (events/event-partitions.ts)
// once the whole month is older than EVENT_RETENTION. What waits in the default partitions (events of a month not
// made, which the pass moves out when it makes that month) is deleted here by the row as before: in bounded
// statements, by the dispatcher's loop, each event with its deliveries. Only numbered events go: an unnumbered one has not been fed yet.
// Their age is by the service's clock, which dates them (the events trigger takes the row's updatedAt): by the real
// clock, a simulated clock set in the past would make every new event look older than EVENT_RETENTION.
import type { Logger } from 'pino';
import type { ServiceDeps } from '../shared/service-deps.ts';

export function createRetention(db: ServiceDeps['db'], clock: ServiceDeps['clock'], retentionMs: number, log: Pick<Logger, 'info'>) {
  let last = 0;

  /**
   * Deletes up to 10,000 events past EVENT_RETENTION from the default partition, with their deliveries (found by
   * eventId, wherever they are); at most every ten minutes unless `force`.
   */
  return async function applyRetention(force = false): Promise<void> {
    if (!force && Date.now() - last < 600_000) return;
    last = Date.now();
    const before = new Date(clock.now().getTime() - retentionMs);
    const deleted = await db.$executeRaw`
      WITH doomed AS (
        SELECT "id", "createdAt" FROM "events_default" WHERE "sequence" IS NOT NULL AND "createdAt" < ${before} LIMIT 10000
      ), deliveries AS (
        DELETE FROM "webhook_deliveries" d USING doomed WHERE d."eventId" = doomed."id"
      )
      DELETE FROM "events_default" e USING doomed WHERE e."id" = doomed."id" AND e."createdAt" = doomed."createdAt"`;
    if (deleted > 0) log.info({ deleted }, 'events past EVENT_RETENTION deleted');
  };
}
