// Migrations that meet existing rows, applied one by one over data written as the schema before them stood: the
// refund reasons back-filled from the audit (20261124190000_external_refunds), and a database where two payments share
// a gateway transactionId refused with the duplicates named (20261124191000_payment_transaction_unique), and the
// revenue roll-up keyed by gateway, its rows so far DANAL's (20261201140000_revenue_by_gateway).
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrator.ts';
import { createEmptyDatabase, type TestDatabase } from '../helpers/database.ts';
import { ROOT } from '../helpers/process.ts';

const DIR = path.join(ROOT, 'prisma/migrations');
const MIGRATIONS = readdirSync(DIR)
  .filter((name) => /^\d{14}_/.test(name))
  .sort();

let database: TestDatabase;
let client: pg.Client;
beforeEach(async () => {
  database = await createEmptyDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterEach(async () => {
  await client.end();
  await database.drop();
});

const apply = (name: string) => client.query(readFileSync(path.join(DIR, name, 'migration.sql'), 'utf8'));
async function migrateBefore(name: string) {
  for (const migration of MIGRATIONS.filter((m) => m < name)) await apply(migration);
}

async function paymentWith(transactionId: string, orderId: string): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO payments (kind, method, amount, status, "orderId", "updatedAt", "transactionId") VALUES ('ONE_TIME', 'CARD', 1000, 'SUCCEEDED', $1, now(), $2) RETURNING id`,
    [orderId, transactionId],
  );
  return rows[0]!.id;
}

it('a refund asked before its reason was kept takes it from its audit entry; other attempts have none', async () => {
  await migrateBefore('20261124190000_external_refunds');
  const paymentId = await paymentWith('T1', 'o1');
  const { rows: attempts } = await client.query<{ id: string; attemptNumber: number }>(
    `INSERT INTO payment_attempts ("paymentId", "attemptNumber", operation, "orderId", amount, status, "updatedAt")
     VALUES ($1, 1, 'PAYMENT_CONFIRM', 'o1', 1000, 'SUCCEEDED', now()), ($1, 2, 'CANCEL', 'X1', 500, 'SUCCEEDED', now()), ($1, 3, 'CANCEL', 'X2', 500, 'DECLINED', now())
     RETURNING id, "attemptNumber"`,
    [paymentId],
  );
  const idOf = (n: number) => attempts.find((a) => a.attemptNumber === n)!.id;
  await client.query(
    `INSERT INTO audit_events (actor, action, "entityType", "entityId", reason, after)
     VALUES ('admin:ops', 'payment.refund', 'payment', $1, 'first reason', jsonb_build_object('refundAttemptId', $2::text)),
            ('admin:ops', 'payment.refund', 'payment', $1, 'second reason', jsonb_build_object('refundAttemptId', $3::text))`,
    [paymentId, idOf(2), idOf(3)],
  );
  await apply('20261124190000_external_refunds');
  const { rows } = await client.query(`SELECT "attemptNumber", reason FROM payment_attempts WHERE "paymentId" = $1 ORDER BY 1`, [paymentId]);
  expect(rows).toEqual([
    { attemptNumber: 1, reason: null },
    { attemptNumber: 2, reason: 'first reason' },
    { attemptNumber: 3, reason: 'second reason' },
  ]);
});

it('two payments sharing a transactionId stop the unique index, named in the error; distinct ones pass', async () => {
  await migrateBefore('20261124191000_payment_transaction_unique');
  const first = await paymentWith('T1', 'o1');
  const second = await paymentWith('T1', 'o2');
  await paymentWith('T2', 'o3');
  const refused = await apply('20261124191000_payment_transaction_unique').then(
    () => undefined,
    (error: Error) => error,
  );
  expect(refused?.message).toMatch(/share a gateway transactionId/);
  expect(refused?.message).toContain('T1');
  expect(refused?.message).toContain(first);
  expect(refused?.message).toContain(second);

  await client.query(`UPDATE payments SET "transactionId" = 'T3' WHERE id = $1`, [second]);
  await apply('20261124191000_payment_transaction_unique');
  await expect(paymentWith('T1', 'o4')).rejects.toThrow(/payments_transactionId_key/);
});

it('the revenue roll-up keyed by gateway: the rows so far DANAL’s with the same figures; a Toss payment on a row of its own', async () => {
  const name = '20261201140000_revenue_by_gateway';
  const quiet = { info: () => {}, warn: () => {} };
  // Migrated (and recorded) up to the one before, by the migrator, with the roll-ups' triggers as those migrations left them.
  const before = mkdtempSync(path.join(tmpdir(), 'migrations-before-'));
  try {
    for (const migration of MIGRATIONS.filter((m) => m < name)) cpSync(path.join(DIR, migration), path.join(before, migration), { recursive: true });
    await migrate({ connectionString: database.url, log: quiet, dir: before, functionsDir: null });
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
  const approved = (orderId: string, method: string, amount: number, gateway = 'DANAL') =>
    client.query(
      `INSERT INTO payments (kind, method, gateway, amount, status, "orderId", "updatedAt", "approvedAt", "transactionId")
       VALUES ('ONE_TIME', $2, $4, $3, 'SUCCEEDED', $1, now(), '2030-05-01T03:00:00Z', 'T-' || $1)`,
      [orderId, method, amount, gateway],
    );
  await approved('o1', 'CARD', 9900);
  await approved('o2', 'CARD', 5000);
  await approved('o3', 'MOBILE', 5500);
  const days = `SELECT "day"::text AS "day", "method"::text AS "method", sum("paymentCount")::int AS "count", sum("paymentAmount")::int AS "amount"
                  FROM revenue_days GROUP BY 1, 2 ORDER BY 1, 2`;
  const figures = (await client.query(days)).rows;
  expect(figures).toEqual([
    { day: '2030-05-01', method: 'CARD', count: 2, amount: 14900 },
    { day: '2030-05-01', method: 'MOBILE', count: 1, amount: 5500 },
  ]);

  await migrate({ connectionString: database.url, log: quiet });
  expect((await client.query(days)).rows).toEqual(figures);
  const { rows: gateways } = await client.query(`SELECT DISTINCT gateway::text AS gateway FROM revenue_days`);
  expect(gateways).toEqual([{ gateway: 'DANAL' }]);
  await approved('o4', 'CARD', 12000, 'TOSS');
  const { rows: byGateway } = await client.query(
    `SELECT "method"::text AS "method", "gateway"::text AS "gateway", sum("paymentCount")::int AS "count", sum("paymentAmount")::int AS "amount"
       FROM revenue_days GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  expect(byGateway).toEqual([
    { method: 'CARD', gateway: 'DANAL', count: 2, amount: 14900 },
    { method: 'CARD', gateway: 'TOSS', count: 1, amount: 12000 },
    { method: 'MOBILE', gateway: 'DANAL', count: 1, amount: 5500 },
  ]);
});
