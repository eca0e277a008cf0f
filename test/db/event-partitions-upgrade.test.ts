// Upgrading to monthly partitions (migration 20261201200000_event_partitions; docs/production.md "Event partitions"): a
// database migrated up to the migration before it, holding a history of events and webhook deliveries across several
// months (month edges, a December 1999 that is already January in Korea, a leap day in 2040; numbered events with the
// gaps row-wise retention leaves, events not numbered yet; deliveries of every status, one under a lease), is migrated
// by today's migrator. Every event and delivery is kept as it was (every column; a delivery gains its event's
// createdAt), each in its UTC month's partition with the default partitions empty, the pos sequence goes on from where
// it was, the feed reads the numbered events in the same order, and the events not numbered yet and a new one get
// sequences after them. The history is written by hand: the tables are what main's migrations made them, and the
// functions of that time play no part in the upgrade.
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrator.ts';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import { createSimulatedClock } from '../../src/lib/clock.ts';
import { createPartitionsPass, monthName, utcMonth } from '../../src/modules/events/event-partitions.ts';
import { createEventsService } from '../../src/modules/events/events.service.ts';
import { testConfig } from '../helpers/app.ts';
import { createEmptyDatabase, type TestDatabase } from '../helpers/database.ts';
import { waitFor } from '../helpers/service.ts';

const NAME = '20261201200000_event_partitions';
const quiet = { info: () => {}, warn: () => {} };

// One transaction each (one xid), its events in order (pos); the last two transactions' events are not numbered yet.
const TRANSACTIONS: string[][] = [
  ['1999-12-31T15:00:00.000Z', '1999-12-31T15:00:00.000Z'],
  ['2025-11-30T23:59:59.999Z', '2025-12-01T00:00:00.000Z', '2025-12-15T08:30:00.123Z'],
  ['2026-01-31T23:59:59.999Z'],
  ['2026-02-01T00:00:00.000Z', '2026-02-28T23:59:59.999Z', '2026-03-01T00:00:00.000Z'],
  ['2026-03-15T03:00:00.000Z', '2026-01-10T10:00:00.000Z'],
  ['2040-02-29T12:00:00.000Z'],
  ['2026-03-20T00:00:00.000Z', '2026-04-02T00:00:00.000Z'],
  ['2026-04-30T23:59:59.999Z'],
];
const UNNUMBERED_TRANSACTIONS = 2;

let database: TestDatabase;
let client: pg.Client;
let db: Db;

beforeAll(async () => {
  database = await createEmptyDatabase();
  const before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  try {
    for (const name of readdirSync(MIGRATIONS_DIR).filter((m) => /^\d{14}_/.test(m) && m < NAME)) {
      cpSync(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
    }
    await migrate({ connectionString: database.url, log: quiet, dir: before, functionsDir: null });
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await db?.$disconnect();
  await client.end();
  await database.drop();
});

const rows = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => (await client.query<T>(sql, values)).rows;

/** The history, written as the service of main would have left it. */
async function seed(): Promise<void> {
  const [live, dead] = await rows<{ id: string }>(
    `INSERT INTO "webhook_endpoints" ("url", "eventTypes", "status", "secrets", "updatedAt")
     VALUES ('https://example.test/live', '{*}', 'ENABLED', '[]', now()), ('https://example.test/dead', '{customer.erased}', 'DISABLED', '[]', now())
     RETURNING "id"`,
  );
  for (const [index, dates] of TRANSACTIONS.entries()) {
    const values = dates.map(
      (_, n) => `($${4 * n + 1}::uuid, 'customer.erased', 'customer', $${4 * n + 2}::uuid, $${4 * n + 3}::jsonb, $${4 * n + 4}::timestamptz)`,
    );
    const params = dates.flatMap((at) => {
      const objectId = randomUUID();
      return [
        randomUUID(),
        objectId,
        JSON.stringify({ id: objectId, pseudonym: `p-${index}-${at}`, erasedAt: at, retainUntil: '2040-12-31', note: '한글 ✓' }),
        at,
      ];
    });
    await client.query(`INSERT INTO "events" ("id", "type", "objectType", "objectId", "snapshot", "createdAt") VALUES ${values.join(', ')}`, params);
  }
  // Numbered as the sequencer numbers (transaction, then position), with the gaps that rows deleted one by one leave.
  await client.query(
    `UPDATE "events" e SET "sequence" = 100 + 3 * n."n", "previous" = CASE WHEN n."n" % 2 = 0 THEN '{}'::jsonb END
       FROM (SELECT "id", row_number() OVER (ORDER BY "xid", "pos") AS "n" FROM "events"
              WHERE "xid" < (SELECT "xid" FROM "events" ORDER BY "xid" DESC OFFSET $1 LIMIT 1)) n
      WHERE e."id" = n."id"`,
    [TRANSACTIONS.slice(-UNNUMBERED_TRANSACTIONS).reduce((sum, t) => sum + t.length, 0) - 1],
  );
  await client.query(`UPDATE "event_sequencer" SET "last" = (SELECT max("sequence") FROM "events") WHERE "id" = 1`);
  // Deliveries of every status to the live endpoint, and some to the disabled one.
  await client.query(
    `INSERT INTO "webhook_deliveries" ("eventId", "endpointId", "status", "attempts", "nextAttemptAt", "leaseOwner", "leaseExpiresAt",
                                       "lastStatusCode", "lastError", "deliveredAt", "createdAt", "updatedAt")
     SELECT e."id", $1::uuid, s.status::"WebhookDeliveryStatus", s.attempts, s.next, s.owner, s.lease, s.code, s.error, s.delivered,
            e."createdAt" + interval '1 second', e."createdAt" + interval '2 seconds'
       FROM (SELECT *, row_number() OVER (ORDER BY "sequence") % 4 AS k FROM "events" WHERE "sequence" IS NOT NULL) e
       JOIN LATERAL (VALUES
         (0, 'SUCCEEDED', 1, NULL::timestamptz, NULL, NULL::timestamptz, 204, NULL, e."createdAt" + interval '2 seconds'),
         (1, 'FAILED', 8, NULL, NULL, NULL, 500, 'HTTP 500', NULL),
         (2, 'PENDING', 2, e."createdAt" + interval '5 minutes', NULL, NULL, 503, 'HTTP 503', NULL),
         (3, 'PENDING', 0, e."createdAt", 'host:1:abc#7', e."createdAt" + interval '35 seconds', NULL, NULL, NULL)
       ) s(k, status, attempts, next, owner, lease, code, error, delivered) ON s.k = e.k`,
    [live!.id],
  );
  await client.query(
    `INSERT INTO "webhook_deliveries" ("eventId", "endpointId", "status", "attempts", "lastStatusCode", "lastError", "updatedAt")
     SELECT "id", $1::uuid, 'FAILED', 3, NULL, 'connect ECONNREFUSED', "createdAt" FROM "events" WHERE "sequence" % 2 = 0`,
    [dead!.id],
  );
  // The positions of rows deleted since: the sequence is ahead of every pos left.
  await client.query(`SELECT setval('"events_pos_seq"', 5000)`);
}

it('keeps every event and delivery as it was, in its month, and the feed and the sequence go on from them', async () => {
  await seed();
  const events = await rows<{ row: Record<string, unknown> }>(`SELECT to_jsonb(e) AS "row" FROM "events" e ORDER BY "id"`);
  const deliveries = await rows<{ row: Record<string, unknown> }>(`SELECT to_jsonb(d) AS "row" FROM "webhook_deliveries" d ORDER BY "id"`);
  const feed = await rows<{ id: string; sequence: string }>(`SELECT "id", "sequence" FROM "events" WHERE "sequence" IS NOT NULL ORDER BY "sequence"`);
  const waiting = await rows<{ id: string }>(`SELECT "id" FROM "events" WHERE "sequence" IS NULL ORDER BY "xid", "pos"`);
  const [position] = await rows(`SELECT "last_value", "is_called" FROM "events_pos_seq"`);
  expect(events).toHaveLength(TRANSACTIONS.flat().length);
  expect(waiting).toHaveLength(3);
  expect(deliveries.length).toBeGreaterThan(feed.length);

  const result = await migrate({ connectionString: database.url, log: quiet });
  expect(result.applied[0]).toBe(NAME);

  // Every row as it was; each delivery with its event's createdAt.
  expect(await rows(`SELECT to_jsonb(e) AS "row" FROM "events" e ORDER BY "id"`)).toEqual(events);
  expect(await rows(`SELECT to_jsonb(d) - 'eventCreatedAt' AS "row" FROM "webhook_deliveries" d ORDER BY "id"`)).toEqual(deliveries);
  const [matched] = await rows<{ n: number }>(
    `SELECT count(*)::int AS "n" FROM "webhook_deliveries" d JOIN "events" e ON e."id" = d."eventId" AND e."createdAt" = d."eventCreatedAt"`,
  );
  expect(matched!.n).toBe(deliveries.length);
  expect(await rows(`SELECT "last_value", "is_called" FROM "events_pos_seq"`)).toEqual([position]);

  // Each in its UTC month's partition, both tables; nothing in the default partitions.
  const placed = await rows<{ at: Date; partition: string }>(`SELECT "createdAt" AS "at", tableoid::regclass::text AS "partition" FROM "events"`);
  for (const row of placed) expect(row.partition).toBe(`events_${monthName(utcMonth(row.at))}`);
  const placedDeliveries = await rows<{ at: Date; partition: string }>(
    `SELECT "eventCreatedAt" AS "at", tableoid::regclass::text AS "partition" FROM "webhook_deliveries"`,
  );
  for (const row of placedDeliveries) expect(row.partition).toBe(`webhook_deliveries_${monthName(utcMonth(row.at))}`);
  expect(placed.map((r) => r.partition)).toContain('events_1999_12');
  expect(placed.map((r) => r.partition)).toContain('events_2040_02');
  expect(await rows(`SELECT 1 FROM "events_default" UNION ALL SELECT 1 FROM "webhook_deliveries_default"`)).toEqual([]);

  // The feed: the numbered events in the same order, then those not numbered yet, then a new one, after them.
  db = createPrismaClient(database.url);
  const service = createEventsService({ db, config: await testConfig(database.url) });
  const fresh = (
    await rows<{ id: string }>(
      `INSERT INTO "events" ("type", "objectType", "objectId", "snapshot") VALUES ('customer.erased', 'customer', $1::uuid, $2::jsonb) RETURNING "id"`,
      [randomUUID(), JSON.stringify({ id: randomUUID(), pseudonym: 'p-new', erasedAt: new Date().toISOString(), retainUntil: '2040-12-31' })],
    )
  )[0]!.id;
  const read = async () => {
    const items = [];
    for (let after: number | undefined; ; ) {
      const page = await service.list({ after, limit: 7 });
      items.push(...page.items);
      if (!page.nextCursor) return items;
      after = Number(page.nextCursor);
    }
  };
  await waitFor('every event numbered', async () => (await read()).length === events.length + 1);
  const items = await read();
  expect(items.slice(0, feed.length).map((e) => [e.id, String(e.sequence)])).toEqual(feed.map((e) => [e.id, e.sequence]));
  const last = Number(feed.at(-1)!.sequence);
  expect(items.slice(feed.length).map((e) => e.id)).toEqual([...waiting.map((e) => e.id), fresh]);
  expect(items.slice(feed.length).map((e) => e.sequence)).toEqual(items.slice(feed.length).map((_, n) => last + n + 1));
  const [newest] = await rows<{ pos: string }>(`SELECT "pos" FROM "events" WHERE "id" = $1`, [fresh]);
  expect(Number(newest!.pos)).toBeGreaterThan(5000);

  // One event read back with its deliveries, as before.
  const one = await service.get(feed[1]!.id);
  const seeded = deliveries.filter((d) => d.row.eventId === feed[1]!.id);
  expect(one.deliveries.map((d) => [d.endpointId, d.status, d.attempts]).sort()).toEqual(
    seeded.map((d) => [d.row.endpointId, d.row.status, d.row.attempts]).sort(),
  );

  // The partitions pass on the upgraded database: the months past EVENT_RETENTION go whole, with their deliveries.
  const pass = createPartitionsPass({ db, clock: createSimulatedClock(new Date('2026-03-10T00:00:00.000Z')), retentionMs: 90 * 86_400_000, log: quiet });
  const report = await pass();
  expect(report.dropped).toEqual(['1999_12', '2025_11']);
  expect(report.made).toEqual(['2026_05']);
  const [gone] = await rows<{ events: number; deliveries: number }>(
    `SELECT (SELECT count(*)::int FROM "events" WHERE "createdAt" < '2025-12-01') AS "events",
            (SELECT count(*)::int FROM "webhook_deliveries" WHERE "eventCreatedAt" < '2025-12-01') AS "deliveries"`,
  );
  expect(gone).toEqual({ events: 0, deliveries: 0 });
  expect(await db.event.count()).toBe(events.length + 1 - 3);
});
