// "An endpoint subscribes to an event type" is spelled twice: by the service (endpointSubscribes, used by resend and
// recover) and by the database's fan-out of new events (assign_event_sequences, a migration's function). On the
// migrated database, for endpoints of every kind of eventTypes and for several event types, the endpoints the
// fan-out gives a delivery are exactly those the service's predicate selects.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Prisma as P } from '../../../src/generated/prisma/client.ts';
import { endpointSubscribes } from '../../../src/modules/events/delivery.state.ts';
import { useTestDatabase } from '../../helpers/database.ts';
import { waitFor } from '../../helpers/service.ts';

const database = useTestDatabase();

const ENDPOINTS: Array<{ eventTypes: string[]; status?: 'ENABLED' | 'DISABLED' }> = [
  { eventTypes: ['*'] },
  { eventTypes: ['payment.succeeded'] },
  { eventTypes: ['payment.failed', 'payment.succeeded'] },
  { eventTypes: ['subscription.updated'] },
  { eventTypes: ['*', 'payment.failed'] },
  { eventTypes: ['*'], status: 'DISABLED' },
  { eventTypes: ['payment.succeeded'], status: 'DISABLED' },
];

describe('endpoint subscribes: the service’s predicate and the database’s fan-out agree', () => {
  it.each(['payment.succeeded', 'payment.failed', 'subscription.updated', 'order.completed'])('for %s', async (type) => {
    const { db } = database;
    for (const endpoint of ENDPOINTS) {
      await db.webhookEndpoint.create({ data: { url: 'https://example.test/hook', eventTypes: endpoint.eventTypes, status: endpoint.status, secrets: [] } });
    }
    const eventId = randomUUID();
    // Committed on its own, so that the fan-out (which numbers only events older than every running transaction) sees it.
    await db.$executeRaw`INSERT INTO "events" ("id", "type", "objectType", "objectId", "snapshot") VALUES (${eventId}::uuid, ${type}, 'payment', ${randomUUID()}::uuid, '{}'::jsonb)`;
    // The fan-out numbers an event once no transaction older than it runs in the cluster (other test files' too).
    await waitFor('the event numbered and fanned out', async () => {
      await db.$queryRaw`SELECT "assign_event_sequences"(100)`;
      return (await db.event.count({ where: { id: eventId, sequence: { not: null } } })) === 1;
    });
    const fannedOut = (await db.webhookDelivery.findMany({ where: { eventId }, select: { endpointId: true } })).map((d) => d.endpointId).sort();
    const selected = (
      await db.$queryRaw<Array<{ id: string }>>`
        SELECT w."id" FROM "webhook_endpoints" w WHERE w."status" = 'ENABLED' AND ${endpointSubscribes(P.sql`w."eventTypes"`, P.sql`${type}::text`)}`
    )
      .map((row) => row.id)
      .sort();
    expect(fannedOut.length).toBeGreaterThan(0);
    expect(selected).toEqual(fannedOut);
    // And with the endpoint's types as a parameter, as recover passes them.
    for (const endpoint of await db.webhookEndpoint.findMany({ where: { status: 'ENABLED' } })) {
      const [row] = await db.$queryRaw<
        Array<{ yes: boolean }>
      >`SELECT ${endpointSubscribes(P.sql`${endpoint.eventTypes}::text[]`, P.sql`${type}::text`)} AS "yes"`;
      expect(row!.yes).toBe(fannedOut.includes(endpoint.id));
    }
  });
});
