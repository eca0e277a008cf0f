// EVENT_RETENTION (docs/api.md "Events and webhooks"): events older than it are deleted with their delivery log (ON DELETE CASCADE), in
// bounded statements, by the dispatcher's loop. Only numbered events go: an unnumbered one has not been fed yet. Their
// age is by the service's clock, which dates them (the events trigger takes the row's updatedAt): by the real clock, a
// simulated clock set in the past would make every new event look older than EVENT_RETENTION.
import type { Logger } from 'pino';
import type { ServiceDeps } from '../shared/service-deps.ts';

export function createRetention(db: ServiceDeps['db'], clock: ServiceDeps['clock'], retentionMs: number, log: Pick<Logger, 'info'>) {
  let last = 0;

  /** Deletes up to 10,000 events past EVENT_RETENTION; at most every ten minutes unless `force`. */
  return async function applyRetention(force = false): Promise<void> {
    if (!force && Date.now() - last < 600_000) return;
    last = Date.now();
    const before = new Date(clock.now().getTime() - retentionMs);
    const deleted = await db.$executeRaw`
      DELETE FROM "events" WHERE "id" IN (
        SELECT "id" FROM "events" WHERE "sequence" IS NOT NULL AND "createdAt" < ${before} LIMIT 10000)`;
    if (deleted > 0) log.info({ deleted }, 'events past EVENT_RETENTION deleted');
  };
}
