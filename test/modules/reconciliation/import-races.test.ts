// Ledger changes made while an import sits between its matching and its commit (held there by a SHARE lock of
// settlement_imports, which its INSERT waits for): the stored reconciliation items must still equal what the matching
// statement computes once both have committed, and the change must not wait for the import. Before the triggers tried
// the refresh lock (migration 20261124211000_settlement_line_status, "Racing an import"), such a change was decided
// from what was committed, found no line of the import, queued nothing, and its item stayed wrong; and a refund of a
// payment the import had stored an item of waited for the import (the items' foreign key to payments).
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqlQuery } from '../../../src/db/prisma.ts';
import { coveredSql, type ReconciliationRow, reconciliationItemsSql, serializeItem } from '../../../src/modules/reconciliation/match-settlement.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { waitFor } from '../../helpers/service.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));
type Item = ReturnType<typeof serializeItem>;

const stored = async () => (await adminGet<{ items: Item[] }>(running.app, '/admin/reconciliation?limit=100')).items;
async function computed(): Promise<Item[]> {
  const rows = await sqlQuery<ReconciliationRow>(
    running.app.db,
    `SELECT i.* FROM (${reconciliationItemsSql({ lines: 'true', missing: (d) => coveredSql(d) })}) i ORDER BY i."tradedAt" DESC, i."id" DESC`,
    [],
  );
  return JSON.parse(JSON.stringify(rows.map(serializeItem)));
}

/** Runs `during` while the import has matched and stored its items but not committed, then lets it commit. */
async function importWhile(bytes: Buffer, query: string, during: () => Promise<void>) {
  const gate = new pg.Client({ connectionString: running.databaseUrl });
  const watcher = new pg.Client({ connectionString: running.databaseUrl });
  await Promise.all([gate.connect(), watcher.connect()]);
  try {
    await gate.query('BEGIN');
    await gate.query('LOCK TABLE "settlement_imports" IN SHARE MODE');
    const answer = importCsv(running.app, bytes, query);
    await waitFor('the import blocked at its INSERT of settlement_imports', async () => {
      const { rows } = await watcher.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO "public"."settlement_imports"%'`,
      );
      return rows[0]!.n >= 1;
    });
    // The change runs while the import is held; it must answer before the import is let go.
    await during();
    await gate.query('COMMIT');
    const imported = await answer;
    expect(imported.statusCode, imported.body).toBe(201);
  } finally {
    await Promise.all([gate.end(), watcher.end()]);
  }
}

async function twoRenewalsOneUnknown(booked: boolean) {
  const a = await subscribe(running.app, { userId: 'a' });
  const b = await subscribe(running.app, { userId: 'b' });
  await setClock(running.app, kst('2027-04-10T09:00:00'));
  await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked });
  expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
  const all = [...(await paymentsOf(running.app, a)), ...(await paymentsOf(running.app, b))];
  return all.find((p) => p.status === 'UNKNOWN')!;
}

const post = (url: string, key: string, payload: Record<string, unknown>) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });

describe('ledger changes during an import', () => {
  it('a partial refund of a payment the file matches: its refund is MISSING', async () => {
    const paid = (await paymentsOf(running.app, await subscribe(running.app, { userId: 'a' })))[0]!;
    const file = await sandboxSettlementFile(running.app);
    await importWhile(file, '', async () => {
      const refunded = await post(`/admin/payments/${paid.id}/cancel`, 'k1', { amount: 1000, reason: 'partial' });
      expect(refunded.statusCode, refunded.body).toBe(200);
    });
    const items = await stored();
    expect(items.filter((i) => i.status === 'MISSING').map((i) => [i.type, i.paymentId])).toEqual([['CANCEL', paid.id]]);
    expect(items).toEqual(await computed());
  });

  it('a refund of a payment the import stored a MISSING item of answers without waiting for the import', async () => {
    await subscribe(running.app, { userId: 'a' });
    const file = await sandboxSettlementFile(running.app);
    // Paid after the export: the file lacks it, so the import stores it MISSING.
    const late = (await paymentsOf(running.app, await subscribe(running.app, { userId: 'd', amount: 5000 })))[0]!;
    await importWhile(file, '', async () => {
      const refunded = await post(`/admin/payments/${late.id}/cancel`, 'k2', { amount: 1000, reason: 'partial' });
      expect(refunded.statusCode, refunded.body).toBe(200);
    });
    expect(await stored()).toEqual(await computed());
  });

  it('an UNKNOWN payment the file lacks, resolved SUCCEEDED by an operator: MISSING', async () => {
    const unknown = await twoRenewalsOneUnknown(false);
    const file = await sandboxSettlementFile(running.app);
    await importWhile(file, 'from=2027-03-10&to=2027-04-10', async () => {
      const resolved = await post(`/admin/payments/${unknown.id}/resolve`, 'r1', { outcome: 'SUCCEEDED', transactionId: 'tx-op', reason: 'bank says paid' });
      expect(resolved.statusCode, resolved.body).toBe(200);
    });
    const items = await stored();
    expect(items.filter((i) => i.status === 'MISSING').map((i) => i.paymentId)).toContain(unknown.id);
    expect(items).toEqual(await computed());
  });

  it('an UNKNOWN payment the file shows approved, resolved FAILED by an operator: MISMATCHED for STATUS', async () => {
    const unknown = await twoRenewalsOneUnknown(true);
    const file = await sandboxSettlementFile(running.app);
    await importWhile(file, 'from=2027-03-10&to=2027-04-10', async () => {
      const resolved = await post(`/admin/payments/${unknown.id}/resolve`, 'r2', { outcome: 'FAILED', reason: 'customer says no' });
      expect(resolved.statusCode, resolved.body).toBe(200);
    });
    const items = await stored();
    expect(items.find((i) => i.paymentId === unknown.id)).toMatchObject({ status: 'MISMATCHED', reasons: ['STATUS'], ourStatus: 'FAILED' });
    expect(items).toEqual(await computed());
  });
});
