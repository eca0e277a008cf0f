// The merchant events' trigger leaves nothing behind in the connection that wrote: it used to remember a row's event
// in a transaction-local setting named after the row, and PostgreSQL keeps every such name for the life of the
// connection, so a pooled connection grew with every row it ever wrote. Several changes of one row in one transaction
// are still one event (the latest snapshot, the oldest values), and a savepoint rolled back takes its event with it.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { paymentsOf, subscribe } from '../helpers/billing.ts';
import { useRunningApp } from '../helpers/database.ts';

const running = useRunningApp();
let client: pg.Client;
beforeEach(async () => {
  client = new pg.Client({ connectionString: running.databaseUrl });
  await client.connect();
});
afterEach(() => client.end());

const eventsOf = async (id: string) =>
  (
    await client.query<{ type: string; snapshot: { canceledAmount: number }; previous: { canceledAmount?: number } | null }>(
      `SELECT "type", "snapshot", "previous" FROM "events" WHERE "objectId" = $1 AND "xid" = pg_current_xact_id()::text::bigint ORDER BY "pos"`,
      [id],
    )
  ).rows;

describe('the merchant events trigger', () => {
  it('makes two changes of a payment in one transaction one event, and leaves no per-row setting in the connection', async () => {
    const [payment] = await paymentsOf(running.app, await subscribe(running.app, { amount: 9_900 }));
    const id = payment!.id;
    await client.query('BEGIN');
    await client.query(`UPDATE "payments" SET "canceledAmount" = 1000 WHERE "id" = $1`, [id]);
    await client.query(`UPDATE "payments" SET "canceledAmount" = 3000 WHERE "id" = $1`, [id]);
    const events = await eventsOf(id);
    expect(events.map((e) => [e.type, e.snapshot.canceledAmount, e.previous?.canceledAmount])).toEqual([['payment.canceled', 3000, 0]]);
    await client.query('ROLLBACK');

    const setting = await client.query<{ value: string | null }>(`SELECT current_setting($1, true) AS "value"`, [`billing_events.o${id.replaceAll('-', '')}`]);
    expect(setting.rows[0]!.value).toBeNull();
  });

  it('forgets an event written in a savepoint rolled back: the next change writes its own', async () => {
    const [payment] = await paymentsOf(running.app, await subscribe(running.app, { amount: 9_900 }));
    const id = payment!.id;
    await client.query('BEGIN');
    await client.query('SAVEPOINT first');
    await client.query(`UPDATE "payments" SET "canceledAmount" = 1000 WHERE "id" = $1`, [id]);
    await client.query('ROLLBACK TO SAVEPOINT first');
    await client.query(`UPDATE "payments" SET "canceledAmount" = 2000 WHERE "id" = $1`, [id]);
    const events = await eventsOf(id);
    expect(events.map((e) => [e.type, e.snapshot.canceledAmount, e.previous?.canceledAmount])).toEqual([['payment.canceled', 2000, 0]]);
    await client.query('ROLLBACK');
  });
});
