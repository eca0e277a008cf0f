// The MRR movements migration (20261124170000_mrr_movements) back-fills the subscriptions that exist when it runs:
// one NEW movement of its current MRR, dated at its creation, for each subscription counting then (ACTIVE or
// PAST_DUE); none for the others (their movements would sum to nothing, and their history is not known). Tested by
// migrating a database up to the migration before it, writing subscriptions, then migrating the rest.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../src/db/migrator.ts';
import { createEmptyDatabase, type TestDatabase } from '../helpers/database.ts';

const MOVEMENTS = '20261124170000_mrr_movements';
const quiet = { info: () => {}, warn: () => {} };

let database: TestDatabase;
let before: string;

beforeAll(async () => {
  database = await createEmptyDatabase();
  before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  for (const m of readMigrations()) if (m.name < MOVEMENTS) cpSync(path.join(MIGRATIONS_DIR, m.name), path.join(before, m.name), { recursive: true });
});
afterAll(async () => {
  rmSync(before, { recursive: true, force: true });
  await database.drop();
});

describe('the MRR movements migration', () => {
  it('back-fills one NEW movement at its creation for each subscription counting when it runs, none for the others', async () => {
    await migrate({ connectionString: database.url, log: quiet, dir: before, functionsDir: null });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const created = new Date('2029-06-01T03:00:00Z');
      const rows: Array<[string, string, number, string, number]> = [
        ['ACTIVE', 'a', 9900, 'month', 1],
        ['PAST_DUE', 'b', 120000, 'year', 1],
        ['PAUSED', 'c', 9900, 'month', 1],
        ['CANCELED', 'd', 9900, 'month', 1],
        ['ACTIVE', 'e', 1000, 'day', 1],
      ];
      for (const [status, user, amount, unit, count] of rows) {
        await client.query(
          `WITH r AS (INSERT INTO "registrations" ("state", "orderId", "userId", "method", "amount", "orderName", "expiresAt", "status", "updatedAt")
                      VALUES (gen_random_uuid()::text, 'reg_' || $1, $1, 'CARD', $2, 'plan', now(), 'COMPLETED', now()) RETURNING "id"),
                k AS (INSERT INTO "billing_keys" ("id", "userId", "method", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext", "updatedAt")
                      VALUES (gen_random_uuid(), $1, 'CARD', 'k1', '\\x00', '\\x00', '\\x00', now()) RETURNING "id")
           INSERT INTO "subscriptions" ("registrationId", "billingKeyId", "userId", "method", "status", "amount", "orderName", "intervalUnit", "intervalCount",
                                        "anchorAt", "currentPeriodStart", "currentPeriodEnd", "createdAt", "updatedAt", "trialEnd")
           SELECT r."id", k."id", $1, 'CARD', $3::"SubscriptionStatus", $2, 'plan', $4::"IntervalUnit", $5, $6, $6, $6, $6, now(), NULL FROM r, k`,
          [user, amount, status, unit, count, created],
        );
      }
      const result = await migrate({ connectionString: database.url, log: quiet });
      expect(result.applied).toContain(MOVEMENTS);
      const movements = await client.query(
        `SELECT s."userId", m."kind", m."mrrBefore"::float8 AS "mrrBefore", m."mrrAfter"::float8 AS "mrrAfter", m."delta"::float8 AS "delta", m."at", m."method", s."changedAt" = s."updatedAt" AS "changedAtKept"
           FROM "mrr_movements" m JOIN "subscriptions" s ON s."id" = m."subscriptionId" ORDER BY s."userId"`,
      );
      expect(movements.rows).toEqual([
        { userId: 'a', kind: 'NEW', mrrBefore: 0, mrrAfter: 9900, delta: 9900, at: created, method: 'CARD', changedAtKept: true },
        { userId: 'b', kind: 'NEW', mrrBefore: 0, mrrAfter: 10000, delta: 10000, at: created, method: 'CARD', changedAtKept: true },
        { userId: 'e', kind: 'NEW', mrrBefore: 0, mrrAfter: 30417, delta: 30417, at: created, method: 'CARD', changedAtKept: true },
      ]);
    } finally {
      await client.end();
    }
  });
});
