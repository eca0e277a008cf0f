// An erasure racing a charge, a refund, a portal action or a settlement import of the same customer (docs/operating.md
// "A customer asks to be forgotten"; the lock order in src/modules/erasure/erase-customer.ts) never leaves personal
// data behind nor a payment half-written. Real concurrency on two connections: the test's own transaction holds the
// erasures table in SHARE mode, so the erasure has taken every lock of the customer and waits at its last write; the
// other action starts then, and the gate opens only once the database shows the expected backends waiting on a lock
// (pg_stat_activity), never after a guessed sleep. The other order (the action first) is the sandbox holding its call.
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault, sandboxHeld, sandboxRelease } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { waitFor } from '../../helpers/service.ts';
import { importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { kst, portalOf } from '../portal/portal-helpers.ts';
import { erase, personalTrace } from './erasure-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2030-03-01T10:00:00')));

const USER = 'racing-customer-5d2e';
const NAME = '김철수';

/**
 * Starts the erasure of USER while a transaction of the test holds the erasures table (SHARE: the erasure's insert
 * waits, every other lock of the erasure taken); runs `during` once the erasure waits, waits for `waiting` backends
 * blocked on a lock in all, then lets go. Answers the erasure's response and what `during` answered.
 */
async function eraseAround<T>(during: () => Promise<T>, waiting: number) {
  const gate = new pg.Client({ connectionString: running.databaseUrl });
  const watcher = new pg.Client({ connectionString: running.databaseUrl });
  await Promise.all([gate.connect(), watcher.connect()]);
  const blocked = async (n: number) => {
    const { rows } = await watcher.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]!.n >= n;
  };
  try {
    await gate.query('BEGIN');
    await gate.query('LOCK TABLE "erasures" IN SHARE MODE');
    const erasing = erase(running.app, USER, { reason: 'privacy request', cancelOpenSubscriptions: true });
    await waitFor('the erasure waiting at its last write', () => blocked(1));
    const other = during();
    await waitFor(`${waiting} backends waiting on a lock`, () => blocked(waiting));
    await gate.query('COMMIT');
    return { erased: await erasing, other: await other };
  } finally {
    await Promise.all([gate.end(), watcher.end()]);
  }
}

const noTrace = async () => expect(await personalTrace(running.app.db, [USER, NAME])).toEqual([]);

describe('an erasure racing', () => {
  it('a portal action: the action waits for the subscription, then finds it no longer the customer’s (404), and writes nothing', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    const portal = portalOf(running.app);
    const who = { userId: USER, portalSessionId: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d' };
    const { erased, other } = await eraseAround(
      () =>
        portal.cancel(who, id, { reason: 'too expensive' }).then(
          (value) => ({ value }),
          (error: { code?: string }) => ({ error: error.code }),
        ),
      2,
    );
    expect(erased.statusCode, erased.body).toBe(201);
    expect(other).toEqual({ error: 'NOT_FOUND' });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'ERASED' });
    expect(await running.app.db.auditEvent.count({ where: { action: 'subscription.cancel_by_customer' } })).toBe(0);
    await noTrace();
  });

  it('a charge: the pass skips the subscription the erasure holds, and nothing is charged after it', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    await setClock(running.app, new Date((await getSubscription(running.app, id)).nextChargeAt!));
    const { erased, other } = await eraseAround(() => runPass(running.app), 1);
    expect(erased.statusCode, erased.body).toBe(201);
    expect(other).toMatchObject({ claimed: 0 });
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect((await paymentsOf(running.app, id)).map((p) => p.status)).toEqual(['SUCCEEDED']);
    await noTrace();
  });

  it('a charge already at the gateway: 409 (its payment PENDING), then, once it is recorded, the erasure goes through', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    await setClock(running.app, new Date((await getSubscription(running.app, id)).nextChargeAt!));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 1 });
    const pass = runPass(running.app);
    await sandboxHeld(running.app);
    const blocked = await erase(running.app, USER, { reason: 'privacy request', cancelOpenSubscriptions: true });
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json().details.blockers).toEqual([{ kind: 'payment', id: expect.any(String), reason: 'PENDING' }]);
    await sandboxRelease(running.app);
    expect(await pass).toMatchObject({ succeeded: 1 });
    const done = await erase(running.app, USER, { reason: 'privacy request', cancelOpenSubscriptions: true });
    expect(done.statusCode, done.body).toBe(201);
    expect((await paymentsOf(running.app, id)).map((p) => p.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    await noTrace();
  });

  it('a refund: the refund waits for the payment the erasure holds, then refunds it whole, with nothing of the customer', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    const [payment] = await paymentsOf(running.app, id);
    const refund = () =>
      running.app.inject({
        method: 'POST',
        url: `/admin/payments/${payment!.id}/cancel`,
        headers: { ...adminHeaders, 'idempotency-key': 'race-refund' },
        payload: { reason: 'goodwill' },
      });
    const { erased, other } = await eraseAround(refund, 2);
    expect(erased.statusCode, erased.body).toBe(201);
    expect(other.statusCode, other.body).toBe(200);
    expect(other.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9900 });
    const attempts = await running.app.db.paymentAttempt.findMany({ where: { paymentId: payment!.id, operation: 'CANCEL' } });
    expect(attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
    await noTrace();
  });

  it('a settlement import: a line imported while the erasure runs waits for it and is stored without the buyer’s columns, still matched', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    const [payment] = await paymentsOf(running.app, id);
    const csv = (await sandboxSettlementFile(running.app)).toString('utf8').trimEnd().split(/\r?\n/);
    const withBuyer = [`${csv[0]},buyerName`, ...csv.slice(1).map((line) => `${line},${NAME}`)].join('\n');
    const { erased, other } = await eraseAround(() => importCsv(running.app, withBuyer), 2);
    expect(erased.statusCode, erased.body).toBe(201);
    expect(other.statusCode, other.body).toBe(201);
    const lines = await running.app.db.settlementLine.findMany({ where: { transactionId: payment!.transactionId! } });
    expect(lines.map((l) => l.extra)).toEqual([null]);
    // Matched: no reconciliation item of the line or the payment says otherwise.
    expect(await running.app.db.settlementItem.count({ where: { OR: [{ lineId: lines[0]!.id }, { paymentId: payment!.id }] } })).toBe(0);
    await noTrace();
  });

  it('a settlement line of a known customer is stored without taking a lock per line (a 100,000-line file took one per customer and ran out of the lock table)', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    const [payment] = await paymentsOf(running.app, id);
    // An erasure exists (another customer's), so the line's customer is looked up, as on any database that ever erased.
    await subscribe(running.app, { userId: 'erased-before', amount: 4900 });
    expect((await erase(running.app, 'erased-before', { reason: 'privacy request', cancelOpenSubscriptions: true })).statusCode).toBe(201);
    const client = new pg.Client({ connectionString: running.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      const imported = await client.query<{ id: string }>(
        `INSERT INTO "settlement_imports" ("sha256", "encoding", "rows", "newLines", "duplicateLines", "coverageFrom", "coverageTo", "summary", "actor")
         VALUES ('lock-probe', 'UTF-8', 1, 1, 0, '2030-03-01', '2030-03-01', '{}', 'test') RETURNING "id"`,
      );
      await client.query(
        `INSERT INTO "settlement_lines" ("importId", "line", "transactionId", "type", "amount", "tradedAt", "tradeDate", "extra")
         VALUES ($1, 1, $2, 'APPROVAL', 9900, now(), '2030-03-01', '{"buyerName": "x"}')`,
        [imported.rows[0]!.id, payment!.transactionId],
      );
      const held = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'`);
      expect(held.rows[0]!.n).toBe(0);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  });

  it('a settlement import after the erasure: the line is stored without the buyer’s columns and matches its payment', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900, userName: NAME });
    const [payment] = await paymentsOf(running.app, id);
    // Another customer, not erased, in the same file: their line keeps its buyer column.
    const [theirs] = await paymentsOf(running.app, await subscribe(running.app, { userId: 'another-customer', amount: 4900 }));
    expect((await erase(running.app, USER, { reason: 'privacy request', cancelOpenSubscriptions: true })).statusCode).toBe(201);
    const csv = (await sandboxSettlementFile(running.app)).toString('utf8').trimEnd().split(/\r?\n/);
    const buyer = (line: string) => (line.includes(payment!.transactionId!) ? NAME : 'Another Buyer');
    const withBuyer = [`${csv[0]},buyerName`, ...csv.slice(1).map((line) => `${line},${buyer(line)}`)].join('\n');
    const imported = await importCsv(running.app, withBuyer);
    expect(imported.statusCode, imported.body).toBe(201);
    const lines = await running.app.db.settlementLine.findMany({ where: { transactionId: payment!.transactionId! } });
    expect(lines.map((l) => l.extra)).toEqual([null]);
    const other = await running.app.db.settlementLine.findMany({ where: { transactionId: theirs!.transactionId! } });
    expect(other.map((l) => l.extra)).toEqual([expect.objectContaining({ buyerName: 'Another Buyer' })]);
    expect(await running.app.db.settlementItem.count({ where: { OR: [{ lineId: lines[0]!.id }, { paymentId: payment!.id }] } })).toBe(0);
    await noTrace();
  });
});
