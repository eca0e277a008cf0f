// The erasure benchmark's seeder (bench/erasure-seed.ts) at a tiny size: the customers it makes have the history it
// promises (36 payments, refunds, events, audit entries, idempotency records, portal sessions, settlement lines), none
// of it waiting on anything, and a second batch on the same database stays apart from the first.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedErasableCustomers, seedSurroundings } from '../../bench/erasure-seed.ts';
import { seedHistory } from '../../bench/seed.ts';
import { findErasureBlockers } from '../../src/modules/erasure/erasure.blockers.ts';
import { adminHeaders } from '../helpers/billing.ts';
import { useRunningApp } from '../helpers/database.ts';

const service = useRunningApp();
let client: pg.Client;

beforeEach(async () => {
  client = new pg.Client({ connectionString: service.databaseUrl });
  await client.connect();
});
afterEach(async () => {
  await client.end();
});

const one = async <T>(sql: string, values: unknown[]) => (await client.query(sql, values)).rows[0] as T;

describe('bench/erasure-seed.ts', () => {
  it('seeds surroundings and erasable customers with 36 months of history each', async () => {
    const now = service.app.clock.now();
    await seedHistory(service.databaseUrl, { subscriptions: 300, payments: 2000, months: 36, now });
    const surroundings = await seedSurroundings(client, { now });
    for (const [table, count] of Object.entries(surroundings)) expect(count, table).toBeGreaterThan(0);
    const first = await seedErasableCustomers(client, { count: 3, months: 36, now, tag: 'a', log: () => {} });
    const second = await seedErasableCustomers(client, { count: 2, months: 36, now, tag: 'b' });
    expect(first.map((c) => c.userId)).toEqual(['erasable-a-1', 'erasable-a-2', 'erasable-a-3']);
    expect(second.map((c) => c.userId)).toEqual(['erasable-b-1', 'erasable-b-2']);

    for (const customer of [...first, ...second]) {
      const ledger = await one<Record<string, unknown>>(
        `SELECT (SELECT count(*)::int FROM "subscriptions" WHERE "userId" = $1) AS "subscriptions",
                (SELECT "status"::text FROM "subscriptions" WHERE "id" = $2) AS "status",
                (SELECT count(*)::int FROM "payments" WHERE "subscriptionId" = $2) AS "payments",
                (SELECT count(*)::int FROM "payments" WHERE "subscriptionId" = $2 AND "status" = 'CANCELED' AND "canceledAmount" = "amount") AS "refunded",
                (SELECT count(*)::int FROM "payments" WHERE "subscriptionId" = $2 AND "status" IN ('PENDING', 'UNKNOWN')) AS "waiting",
                (SELECT count(*)::int FROM "payment_attempts" a JOIN "payments" p ON p."id" = a."paymentId"
                  WHERE p."subscriptionId" = $2 AND a."status" IN ('IN_FLIGHT', 'UNKNOWN')) AS "attemptsWaiting",
                (SELECT count(*)::int FROM "registrations" WHERE "userId" = $1 AND "status" = 'COMPLETED' AND "userName" IS NOT NULL) AS "registrations",
                (SELECT count(*)::int FROM "billing_keys" WHERE "userId" = $1 AND "status" = 'ACTIVE') AS "billingKeys",
                (SELECT array_agg(DISTINCT "kind"::text ORDER BY "kind"::text) FROM "mrr_movements" WHERE "subscriptionId" = $2) AS "movements"`,
        [customer.userId, customer.subscriptionId],
      );
      expect(ledger).toEqual({
        subscriptions: 1,
        status: 'CANCELED',
        payments: 36,
        refunded: 3,
        waiting: 0,
        attemptsWaiting: 0,
        registrations: 1,
        billingKeys: 1,
        movements: ['CHURN', 'NEW'],
      });
      const kept = await one<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM "events" WHERE "objectId" = $2 AND "type" = 'subscription.canceled' AND "sequence" IS NOT NULL) AS "canceledEvents",
                (SELECT count(*)::int FROM "events" e JOIN "payments" p ON p."id" = e."objectId" WHERE p."subscriptionId" = $2) AS "paymentEvents",
                (SELECT count(*)::int FROM "events" WHERE "sequence" IS NULL) AS "unnumbered",
                (SELECT count(*)::int FROM "webhook_deliveries" d JOIN "events" e ON e."id" = d."eventId" WHERE e."objectId" = $2) AS "deliveries",
                (SELECT count(*)::int FROM "audit_events" WHERE "entityId" = $2::text OR "entityId" IN (SELECT "id"::text FROM "payments" WHERE "subscriptionId" = $2)) AS "audit",
                (SELECT count(*)::int FROM "idempotency_records" WHERE "responseBody" ->> 'userId' = $1) AS "idempotent",
                (SELECT count(*)::int FROM "portal_sessions" WHERE "userId" = $1) AS "portalSessions",
                (SELECT count(*)::int FROM "settlement_lines" l JOIN "payments" p ON p."transactionId" = l."transactionId"
                  JOIN "registrations" r ON r."userId" = $1 WHERE p."subscriptionId" = $2 AND l."extra" ->> '구매자명' = r."userName") AS "settlementLines"`,
        [customer.userId, customer.subscriptionId],
      );
      // Events older than 90 days are gone (EVENT_RETENTION): the last three cycles' payments and the cancel are left. A
      // settlement line for each charge (36) and refund (3).
      expect(kept).toEqual({
        canceledEvents: 1,
        paymentEvents: 3,
        unnumbered: 0,
        deliveries: 1,
        audit: 4,
        idempotent: 2,
        portalSessions: 2,
        settlementLines: 39,
      });
      expect(await findErasureBlockers(service.app.db, customer.userId)).toEqual([]);
    }

    // The benchmark's request, as it sends it, and the answer it checks.
    const erased = await service.app.inject({
      method: 'POST',
      url: `/admin/customers/${first[0]!.userId}/erasure`,
      headers: { ...adminHeaders, 'idempotency-key': 'erasure-seed-test' },
      payload: { reason: 'benchmark: the customer asked to be forgotten' },
    });
    expect(erased.statusCode).toBe(201);
    expect(erased.json()).toMatchObject({ status: 'COMPLETED', counts: { subscriptions: 1, payments: 36, registrations: 1, billingKeys: 1 } });
  }, 120_000);
});
