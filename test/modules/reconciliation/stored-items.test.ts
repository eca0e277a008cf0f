// The stored reconciliation items (settlement_items, src/modules/reconciliation/settlement-items.ts) equal what the
// matching statement (match-settlement.ts) computes from the lines and the ledger now, after every kind of change that
// moves an item: an import, a gateway refund (partial and full), an external refund, UNKNOWN charges, a second import of
// the same period that finishes an UNKNOWN charge and matches what the first lacked, and an operator's resolve through
// POST /admin/payments/:id/resolve. The stored side is read through GET /admin/reconciliation (every page); the
// computed side runs the matching statement over every line and every covered payment, as the reads did before.
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqlQuery } from '../../../src/db/prisma.ts';
import { coveredSql, reconciliationItemsSql, serializeItem, type ReconciliationRow } from '../../../src/modules/reconciliation/match-settlement.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

type Item = ReturnType<typeof serializeItem>;
const admin = (url: string, payload: Record<string, unknown>, key: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });

/** Every item as the route answers it (stored), page by page. */
async function storedItems(): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: Item[]; nextCursor: string | null } = await adminGet(running.app, `/admin/reconciliation?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** Through JSON, as the route's items are: absent optional fields, ISO times; with `finish`, which the route does not show. */
const plain = (rows: ReconciliationRow[]) => JSON.parse(JSON.stringify(rows.map((row) => ({ ...serializeItem(row), finish: row.finish ?? undefined }))));

/** Every item as the matching statement computes it now: every line, and every payment or refund inside a coverage. */
async function computedItems(): Promise<Array<Item & { finish?: string }>> {
  const rows = await sqlQuery<ReconciliationRow>(
    running.app.db,
    `SELECT i.* FROM (${reconciliationItemsSql({ lines: 'true', missing: (d) => coveredSql(d) })}) i ORDER BY i."tradedAt" DESC, i."id" DESC`,
    [],
  );
  return plain(rows);
}

/**
 * The items the route answers (stored ones, and the MATCHED lines' computed for the page) equal the computed ones (same
 * order: newest first), and the table holds exactly the computed items that are not MATCHED or finish an outcome (what
 * Needs attention reads, and a line without a row is taken as MATCHED); answers the route's items, by status.
 */
async function expectStoredEqualsComputed() {
  const stored = await storedItems();
  const computed = await computedItems();
  expect(stored).toEqual(computed.map(({ finish: _, ...item }) => item));
  const table = await sqlQuery<ReconciliationRow>(running.app.db, `SELECT * FROM "settlement_items" ORDER BY "tradedAt" DESC, "id" DESC`, []);
  expect(plain(table)).toEqual(computed.filter((i) => i.status !== 'MATCHED' || i.finish));
  const count = (status: string) => stored.filter((i) => i.status === status).length;
  return { items: stored, matched: count('MATCHED'), mismatched: count('MISMATCHED'), unmatched: count('UNMATCHED'), missing: count('MISSING') };
}

describe('stored reconciliation items', () => {
  it('equal the items computed from the lines and the ledger after every kind of change', async () => {
    const [a, b, c] = [
      await subscribe(running.app, { userId: 'a' }),
      await subscribe(running.app, { userId: 'b' }),
      await subscribe(running.app, { userId: 'c' }),
    ];
    const first = await sandboxSettlementFile(running.app);
    // Charged after the export, on the day it covers: MISSING.
    const d = await subscribe(running.app, { userId: 'd', amount: 5000 });
    const [pa, pb, pc, pd] = [
      (await paymentsOf(running.app, a))[0]!,
      (await paymentsOf(running.app, b))[0]!,
      (await paymentsOf(running.app, c))[0]!,
      (await paymentsOf(running.app, d))[0]!,
    ];

    // Before any import there is nothing.
    expect(await expectStoredEqualsComputed()).toMatchObject({ items: [] });

    // An import.
    expect((await importCsv(running.app, first)).statusCode).toBe(201);
    expect(await expectStoredEqualsComputed()).toMatchObject({ matched: 3, missing: 1 });

    // A partial gateway refund (a refund the file lacks: MISSING), a full one (its line's ourStatus becomes CANCELED),
    // and an external refund (no line expected; its line's ourStatus becomes CANCELED).
    expect((await admin(`/admin/payments/${pa.id}/cancel`, { amount: 1000, reason: 'partial' }, 'refund-a')).statusCode).toBe(200);
    expect(await expectStoredEqualsComputed()).toMatchObject({ matched: 3, missing: 2 });
    expect((await admin(`/admin/payments/${pb.id}/cancel`, { reason: 'whole' }, 'refund-b')).statusCode).toBe(200);
    let now = await expectStoredEqualsComputed();
    expect(now.items.find((i) => i.paymentId === pb.id && i.type === 'APPROVAL')).toMatchObject({ status: 'MATCHED', ourStatus: 'CANCELED' });
    expect(now).toMatchObject({ missing: 3 });
    const external = await admin(`/admin/payments/${pc.id}/refunds/external`, { amount: 9900, reason: 'bank transfer' }, 'external-c');
    expect(external.statusCode, external.body).toBe(201);
    now = await expectStoredEqualsComputed();
    expect(now.items.find((i) => i.paymentId === pc.id)).toMatchObject({ status: 'MATCHED', ourStatus: 'CANCELED' });
    expect(now).toMatchObject({ matched: 3, missing: 3 });

    // A month on, two renewals end UNKNOWN: the gateway booked one of them, not the other.
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: false });
    expect(await runPass(running.app)).toMatchObject({ unknown: 2 });
    await expectStoredEqualsComputed();
    const booked = new Set((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM').map((e) => e.orderId));
    const waiting = (await Promise.all([a, b, c, d].map((s) => paymentsOf(running.app, s)))).flat().filter((p) => p.status === 'UNKNOWN');
    expect(waiting).toHaveLength(2);
    const finished = waiting.find((p) => booked.has(p.orderId))!;
    const lost = waiting.find((p) => !booked.has(p.orderId))!;

    // A second import of the same period: the earlier lines again (duplicates), the cancel lines the first lacked, the
    // charge made after the first export, and the booked UNKNOWN renewal, which it finishes.
    const second = await importCsv(running.app, await sandboxSettlementFile(running.app), 'from=2027-03-10&to=2027-04-10');
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ resolved: { payments: 1, refunds: 0 } });
    now = await expectStoredEqualsComputed();
    expect(now.items.find((i) => i.paymentId === finished.id)).toMatchObject({ status: 'MATCHED', ourStatus: 'SUCCEEDED' });
    expect(now.items.find((i) => i.paymentId === pd.id)).toMatchObject({ source: 'STATEMENT', status: 'MATCHED' });
    expect(now).toMatchObject({ missing: 0 });

    // An operator resolves the renewal the gateway never booked as SUCCEEDED: ours, inside the coverage, and no line.
    const resolved = await admin(
      `/admin/payments/${lost.id}/resolve`,
      { outcome: 'SUCCEEDED', transactionId: 'tx-by-operator', reason: 'bank says paid' },
      'resolve-1',
    );
    expect(resolved.statusCode, resolved.body).toBe(200);
    now = await expectStoredEqualsComputed();
    expect(now.items.filter((i) => i.status === 'MISSING')).toEqual([
      expect.objectContaining({ paymentId: lost.id, type: 'APPROVAL', ourStatus: 'SUCCEEDED' }),
    ]);
  });

  it('are rebuilt from the queue the migration fills for lines imported before it (every line, every covered payment)', async () => {
    const a = await subscribe(running.app, { userId: 'a' });
    const file = await sandboxSettlementFile(running.app);
    await subscribe(running.app, { userId: 'b', amount: 5000 });
    expect((await importCsv(running.app, file)).statusCode).toBe(201);
    const [pa] = await paymentsOf(running.app, a);
    expect((await admin(`/admin/payments/${pa!.id}/cancel`, { amount: 1000, reason: 'partial' }, 'refund-a')).statusCode).toBe(200);
    const before = await expectStoredEqualsComputed();
    expect(before).toMatchObject({ matched: 1, missing: 2 });

    // As a database migrated with imports already there: no stored items, and the migration's own queueing statements.
    const migration = readFileSync(new URL('../../../prisma/migrations/20261124211000_settlement_line_status/migration.sql', import.meta.url), 'utf8');
    const backfill = migration
      .slice(migration.indexOf('-- Lines imported before this migration'))
      .split('\n')
      .filter((line) => !line.startsWith('--'))
      .join('\n');
    await running.app.db.$executeRawUnsafe('DELETE FROM "settlement_items"');
    for (const statement of backfill.split(';').filter((s) => /INSERT/.test(s))) await running.app.db.$executeRawUnsafe(statement);
    expect(await expectStoredEqualsComputed()).toEqual(before);
  });
});
