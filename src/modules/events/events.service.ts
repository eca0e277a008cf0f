// The event feed and one event with its deliveries (docs/api.md "Events and webhooks"). Only numbered events are shown: a committed
// event gets its sequence once no older transaction is in flight (assign_event_sequences, prisma/functions/events.sql), so a
// reader that continues from the last sequence it saw never misses one. Reads number what is ready first.
import { Prisma as P } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { EVENT_COLUMNS_SQL, renderEvent, type EventRow } from './events.render.ts';
import { sqlParams, sqlQuery } from '../../db/prisma.ts';
import { limitSql } from '../../lib/pagination.ts';
import { endpointSubscribes, REQUEUE_DELIVERY } from './delivery.state.ts';

type Db = ServiceDeps['db'];

/** Numbers the committed events that are ready (and queues their deliveries); returns how many. */
export async function assignEventSequences(db: Db, batch = 1000): Promise<number> {
  const [row] = await sqlQuery<{ n: number }>(db, 'SELECT assign_event_sequences($1::int) AS n', [batch]);
  return row?.n ?? 0;
}

/** Events read through the pg pool as named statements (docs/benchmarks.md "Measurements behind choices in the code"); `where` and `tail` use $1… for `values`. */
export async function loadEvents(db: Db, where: string, values: unknown[], tail = ''): Promise<EventRow[]> {
  return sqlQuery<EventRow>(db, `SELECT ${EVENT_COLUMNS_SQL} FROM "events" e WHERE ${where} ${tail}`, values);
}

export function createEventsService(deps: Pick<ServiceDeps, 'db' | 'config'>) {
  const { db, config } = deps;

  /**
   * A page of the feed. The numbering writes, so it runs on the primary; the page is read from `reader` (the replica
   * when there is one), asked only after the numbering committed: it answers a server that has replayed it, and every
   * numbering before it (the sequencer's lock orders their commits), so a reader continuing from its last sequence
   * misses nothing there either.
   */
  async function list(query: { after?: number; type?: string; limit: number }, reader: () => Promise<Db> = async () => db) {
    await assignEventSequences(db);
    const { values, param } = sqlParams();
    const where = `e."sequence" > ${param(String(query.after ?? 0))}::bigint${query.type ? ` AND e."type" = ${param(query.type)}` : ''}`;
    const rows = await loadEvents(await reader(), where, values, `ORDER BY e."sequence" ${limitSql(query.limit)}`);
    const items = rows.map((row) => renderEvent(row, config));
    const last = items[items.length - 1];
    return { items, nextCursor: items.length === query.limit && last ? String(last.sequence) : null };
  }

  async function get(id: string) {
    await assignEventSequences(db);
    const [row] = await loadEvents(db, 'e."id" = $1::uuid AND e."sequence" IS NOT NULL', [id]);
    if (!row) throw new NotFoundError('Event');
    const deliveries = await db.webhookDelivery.findMany({ where: { eventId: id }, orderBy: { createdAt: 'asc' } });
    return {
      ...renderEvent(row, config),
      deliveries: deliveries.map((d) => ({
        endpointId: d.endpointId,
        status: d.status,
        attempts: d.attempts,
        lastStatusCode: d.lastStatusCode ?? undefined,
        lastError: d.lastError ?? undefined,
        nextAttemptAt: d.nextAttemptAt?.toISOString(),
        deliveredAt: d.deliveredAt?.toISOString(),
      })),
    };
  }

  /**
   * Sends one event again: to one endpoint, or to every enabled endpoint that subscribes to its type. A copy still on
   * its way does not stand in for the new one (REQUEUE_DELIVERY).
   */
  async function resend(id: string, endpointId?: string): Promise<{ queued: number }> {
    await assignEventSequences(db);
    const event = await db.event.findFirst({ where: { id, sequence: { not: null } }, select: { id: true, type: true } });
    if (!event) throw new NotFoundError('Event');
    if (endpointId && !(await db.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { id: true } }))) {
      throw new NotFoundError('Webhook endpoint');
    }
    const target = endpointId
      ? P.sql`w."id" = ${endpointId}::uuid`
      : P.sql`w."status" = 'ENABLED' AND ${endpointSubscribes(P.sql`w."eventTypes"`, P.sql`${event.type}::text`)}`;
    // The delivery takes its event's createdAt, read in the same statement: it lives in its event's month.
    const queued = await db.$executeRaw`
      INSERT INTO "webhook_deliveries" ("eventId", "eventCreatedAt", "endpointId", "nextAttemptAt")
      SELECT e."id", e."createdAt", w."id", clock_timestamp() FROM "events" e JOIN "webhook_endpoints" w ON ${target}
       WHERE e."id" = ${id}::uuid AND e."sequence" IS NOT NULL
      ON CONFLICT ("eventId", "endpointId", "eventCreatedAt") DO UPDATE SET ${REQUEUE_DELIVERY}`;
    return { queued };
  }

  return { list, get, resend };
}

export type EventsService = ReturnType<typeof createEventsService>;
