// Toss's settlements read by API and imported like a file (docs/reconciliation.md "Toss settlements by API"), through
// the public routes against the Toss sandbox: a day's charges and a partial refund are MATCHED, each line carries
// gateway TOSS, the same call again doubles nothing; an UNKNOWN Toss charge the statement shows approved is finished
// SUCCEEDED once (payment.succeeded once), and one an operator resolved first is only matched; the daily pass imports
// yesterday once; a failing call imports nothing.
import { beforeEach, describe, expect, it } from 'vitest';
import { createSettlementSync } from '../../../src/modules/reconciliation/sync-settlements.ts';
import { createStatementStore } from '../../../src/modules/reconciliation/store-statement.ts';
import { createSettlementFinisher } from '../../../src/modules/reconciliation/finish-settlement.ts';
import { apiHeaders } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock } from '../../helpers/billing.ts';
import { follow } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { adminGet, importCsv } from '../../helpers/settlement.ts';
import { waitFor } from '../../helpers/service.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
beforeEach(async () => {
  await running.app.inject({ method: 'POST', url: '/sandbox/toss/_control/reset' });
  await setClock(running.app, kst('2027-03-10T09:00:00'));
});

const post = (url: string, payload: Record<string, unknown>, key: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });
const sync = (from: string, to: string, key: string) => post('/admin/settlement-imports/toss', { from, to }, key);
const payment = async (id: string) => (await running.app.inject({ method: 'GET', url: `/admin/payments/${id}`, headers: adminHeaders })).json();
const tossFault = async (spec: Record<string, unknown>) => {
  const response = await running.app.inject({ method: 'POST', url: '/sandbox/toss/_control/faults', payload: spec });
  expect(response.statusCode, response.body).toBeLessThan(300);
};
const tossLedger = async () =>
  (await running.app.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).json().entries as Array<{
    type: 'CHARGE' | 'CANCEL';
    paymentKey: string;
    orderId: string;
    amount: number;
  }>;

/** A Toss subscription through the public routes (key only), charged by the next pass; answers its id. */
async function tossSubscription(userId: string, amount: number): Promise<string> {
  const created = await running.app.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId, method: 'CARD', amount, orderName: 'Toss plan', gateway: 'TOSS', issueKeyOnly: true },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { window } = created.json() as { window: Record<string, string> };
  const authorized = await running.app.inject({
    method: 'POST',
    url: '/sandbox/toss/window/authorize',
    payload: { clientKey: window.clientKey, customerKey: window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl, decision: 'approve' },
  });
  expect(authorized.statusCode, authorized.body).toBe(200);
  const done = await follow(running.app, authorized.json().redirectUrl, { json: true });
  expect(done.statusCode, done.body).toBe(200);
  return done.json().subscriptionId as string;
}

/** A Toss subscription whose first charge Toss booked but whose answer was lost (the sandbox times out after booking). */
async function unknownTossCharge(userId: string) {
  const id = await tossSubscription(userId, 15000);
  await tossFault({ operation: 'CHARGE', kind: 'timeout', holdMs: 2 * GATEWAY_TIMEOUT_MS });
  expect(await runPass(running.app)).toMatchObject({ claimed: 1, unknown: 1 });
  const [unknown] = await paymentsOf(running.app, id);
  expect(unknown).toMatchObject({ status: 'UNKNOWN', gateway: 'TOSS' });
  const booked = (await tossLedger()).find((e) => e.type === 'CHARGE' && e.orderId === unknown!.orderId)!;
  expect(booked).toBeDefined();
  return { id, unknown: unknown!, booked };
}

/** payment.succeeded events of a payment, once the feed shows at least one (it holds back events others could precede). */
async function succeededEvents(paymentId: string): Promise<number> {
  let count = 0;
  await waitFor('the payment’s payment.succeeded in the event feed', async () => {
    const events = (await running.app.inject({ method: 'GET', url: '/api/v1/events?type=payment.succeeded&limit=100', headers: apiHeaders })).json();
    count = events.items.filter((e: { data: { object: { id: string } } }) => e.data.object.id === paymentId).length;
    return count > 0;
  });
  return count;
}

const lineCount = () => running.app.db.settlementLine.count();

describe('POST /admin/settlement-imports/toss', () => {
  it('imports a day’s charges and a partial refund MATCHED, each line of gateway TOSS; the same call again doubles nothing', async () => {
    const first = await tossSubscription('toss-settle-1', 15000);
    const second = await tossSubscription('toss-settle-2', 9900);
    expect(await runPass(running.app)).toMatchObject({ claimed: 2, succeeded: 2 });
    const [charged] = await paymentsOf(running.app, first);
    const refunded = await post(`/admin/payments/${charged!.id}/cancel`, { amount: 2000, reason: 'partial' }, 'refund-1');
    expect(refunded.json()).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 2000 });
    const [other] = await paymentsOf(running.app, second);
    // Toss's paymentKey is the payment's transactionId.
    expect((await tossLedger()).filter((e) => e.type === 'CHARGE').map((e) => e.paymentKey)).toEqual(
      expect.arrayContaining([charged!.transactionId, other!.transactionId]),
    );

    await setClock(running.app, kst('2027-03-11T08:00:00'));
    const response = await sync('2027-03-10', '2027-03-10', 'sync-1');
    expect(response.statusCode, response.body).toBe(201);
    const imported = response.json();
    expect(imported).toMatchObject({
      gateway: 'TOSS',
      encoding: 'API',
      filename: 'toss:2027-03-10..2027-03-10',
      rows: 3,
      newLines: 3,
      duplicateLines: 0,
      coverage: { from: '2027-03-10', to: '2027-03-10' },
      summary: { matched: 3, mismatched: 0, unmatched: 0, missing: 0 },
      resolved: { payments: 0, refunds: 0 },
    });
    const items = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?from=2027-03-10&to=2027-03-10&gateway=TOSS');
    expect(items.items.map((i) => [i.status, i.type, i.gateway, i.paymentId, i.amount]).sort()).toEqual(
      [
        ['MATCHED', 'APPROVAL', 'TOSS', charged!.id, 15000],
        ['MATCHED', 'CANCEL', 'TOSS', charged!.id, 2000],
        ['MATCHED', 'APPROVAL', 'TOSS', other!.id, 9900],
      ].sort(),
    );
    expect((await adminGet<{ items: unknown[] }>(running.app, '/admin/reconciliation?from=2027-03-10&to=2027-03-10&gateway=DANAL')).items).toEqual([]);
    const summary = await adminGet(running.app, '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-10&gateway=TOSS');
    expect(summary).toMatchObject({
      statement: { approvals: { count: 2, amount: 24900 }, cancels: { count: 1, amount: 2000 }, net: 22900 },
      ledger: { approvals: { count: 2, amount: 24900 }, refunds: { count: 1, amount: 2000 }, net: 22900 },
      counts: { matched: 3, mismatched: 0, unmatched: 0, missing: 0 },
      anomalyAmount: 0,
    });
    expect(await lineCount()).toBe(3);

    // The same lines again (another key): the stored import, nothing doubled.
    const again = await sync('2027-03-10', '2027-03-10', 'sync-2');
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id: imported.id, rows: 3 });
    // A range holding that day and one more: another statement; its lines were stored once, by the first.
    const wider = await sync('2027-03-09', '2027-03-10', 'sync-3');
    expect(wider.statusCode, wider.body).toBe(201);
    expect(wider.json()).toMatchObject({ rows: 3, newLines: 0, duplicateLines: 3, summary: { matched: 3, missing: 0 } });
    expect(await lineCount()).toBe(3);
    const lines = await running.app.db.settlementLine.findMany();
    expect(lines.map((l) => l.gateway)).toEqual(['TOSS', 'TOSS', 'TOSS']);
    expect((await adminGet<{ items: Array<{ gateway: string }> }>(running.app, '/admin/settlement-imports')).items.map((i) => i.gateway)).toEqual([
      'TOSS',
      'TOSS',
    ]);
  });

  it('refuses a range out of order, too long or not begun (400), and answers a replayed Idempotency-Key', async () => {
    await setClock(running.app, kst('2027-03-11T08:00:00'));
    for (const [from, to] of [
      ['2027-03-10', '2027-03-09'],
      ['2027-01-01', '2027-03-10'],
      ['2027-03-11', '2027-03-12'],
    ]) {
      const refused = await sync(from!, to!, `bad-${from}-${to}`);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().code).toBe('SETTLEMENT_RANGE_INVALID');
    }
    expect((await sync('2027-03-10', '2027-03-10x', 'bad-format')).json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    const first = await sync('2027-03-10', '2027-03-10', 'same-key');
    const replayed = await sync('2027-03-10', '2027-03-10', 'same-key');
    expect([first.statusCode, replayed.statusCode]).toEqual([201, 201]);
    expect(replayed.json().id).toBe(first.json().id);
    expect((await sync('2027-03-09', '2027-03-10', 'same-key')).json().code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('imports nothing when a page fails: 502 naming Toss’s answer, 503 when Toss refused our credentials', async () => {
    await setClock(running.app, kst('2027-03-11T08:00:00'));
    await tossFault({ operation: 'SETTLEMENTS', kind: 'http_500' });
    const failed = await sync('2027-03-10', '2027-03-10', 'fail-1');
    expect(failed.statusCode, failed.body).toBe(502);
    expect(failed.json()).toMatchObject({ code: 'SETTLEMENT_FEED_FAILED', details: { gateway: 'TOSS', page: 1, outcome: 'UNKNOWN', reason: 'HTTP_5XX' } });
    await tossFault({ operation: 'SETTLEMENTS', kind: 'decline', code: 'UNAUTHORIZED_KEY' });
    const refused = await sync('2027-03-10', '2027-03-10', 'fail-2');
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.json()).toMatchObject({ code: 'SETTLEMENT_FEED_UNAVAILABLE', details: { gateway: 'TOSS', code: 'UNAUTHORIZED_KEY' } });
    expect(refused.json().message).toContain('UNAUTHORIZED_KEY');
    expect(await running.app.db.settlementImport.count()).toBe(0);
  });

  it('answers 422 GATEWAY_NOT_CONFIGURED where no gateway serves settlements', async () => {
    const { app } = running;
    const finisher = createSettlementFinisher({ db: app.db, payments: { resolve: async () => ({}), resolveRefund: async () => ({}) } as never, log: app.log });
    // Danal alone (Toss not configured): the service's registry without Toss, as production without TOSS_* builds it.
    const danalOnly = createSettlementSync({
      db: app.db,
      clock: app.clock,
      log: app.log,
      gateway: app.gateway,
      gateways: { DANAL: app.gateway },
      store: createStatementStore({ db: app.db, log: app.log, finisher }),
    });
    await expect(danalOnly.syncSettlements('TOSS', { from: '2027-03-09', to: '2027-03-09' }, { actor: 'test' })).rejects.toMatchObject({
      code: 'GATEWAY_NOT_CONFIGURED',
      statusCode: 422,
    });
    expect(await danalOnly.syncYesterday()).toEqual([]);
  });
});

describe('each gateway’s statement', () => {
  it('matches its own gateway’s payments only: a Danal file naming a Toss payment is UNMATCHED and makes no Toss payment MISSING', async () => {
    const id = await tossSubscription('toss-cross-1', 11000);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const [charged] = await paymentsOf(running.app, id);
    await setClock(running.app, kst('2027-03-11T08:00:00'));
    // A Danal file of the same day holding a line with the Toss payment's own transactionId, orderId, amount and time.
    const tradedAt = new Date(charged!.approvedAt!).toISOString();
    const file = `transactionId,orderId,type,amount,tradedAt\n${charged!.transactionId},${charged!.orderId},APPROVAL,11000,${tradedAt}\n`;
    const danal = await importCsv(running.app, file, 'from=2027-03-10&to=2027-03-10', { 'idempotency-key': 'danal-file' });
    expect(danal.statusCode, danal.body).toBe(201);
    expect(danal.json()).toMatchObject({ gateway: 'DANAL', summary: { matched: 0, mismatched: 0, unmatched: 1, missing: 0 } });

    // Toss's statement of that day: its line is Toss's own (not a duplicate of the Danal one) and matches.
    const toss = await sync('2027-03-10', '2027-03-10', 'cross-sync');
    expect(toss.json()).toMatchObject({ gateway: 'TOSS', newLines: 1, duplicateLines: 0, summary: { matched: 1, unmatched: 0, missing: 0 } });
    const items = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?from=2027-03-10&to=2027-03-10');
    expect(items.items.map((i) => [i.gateway, i.status, i.paymentId ?? null]).sort()).toEqual(
      [
        ['DANAL', 'UNMATCHED', null],
        ['TOSS', 'MATCHED', charged!.id],
      ].sort(),
    );
  });
});

describe('an UNKNOWN Toss charge', () => {
  it('is finished SUCCEEDED by the settlement sync with Toss’s paymentKey, once', async () => {
    const { id, unknown, booked } = await unknownTossCharge('toss-unknown-1');
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: true });

    const response = await sync('2027-03-10', '2027-03-10', 'finish-1');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ rows: 1, summary: { matched: 1, mismatched: 0, unmatched: 0, missing: 0 }, resolved: { payments: 1, refunds: 0 } });
    expect(await payment(unknown.id)).toMatchObject({ status: 'SUCCEEDED', transactionId: booked.paymentKey, gateway: 'TOSS', needsAttention: false });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'ACTIVE', needsAttention: false });

    // Again: the stored import, nothing resolved twice.
    const again = await sync('2027-03-10', '2027-03-10', 'finish-2');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ resolved: { payments: 1 } });
    const audit = await adminGet<{ items: Array<{ action: string; actor: string }> }>(running.app, `/admin/audit?entityType=payment&entityId=${unknown.id}`);
    expect(audit.items.filter((a) => a.action === 'payment.resolve_succeeded').map((a) => a.actor)).toEqual([`settlement-import:${response.json().id}`]);
    expect(await succeededEvents(unknown.id)).toBe(1);
  });

  it('that an operator resolved first is only matched: the sync changes nothing', async () => {
    const { unknown, booked } = await unknownTossCharge('toss-unknown-2');
    const resolved = await post(
      `/admin/payments/${unknown.id}/resolve`,
      { outcome: 'SUCCEEDED', transactionId: booked.paymentKey, reason: 'Toss console' },
      'resolve-1',
    );
    expect(resolved.statusCode, resolved.body).toBe(200);

    const response = await sync('2027-03-10', '2027-03-10', 'after-resolve');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ summary: { matched: 1, mismatched: 0, unmatched: 0, missing: 0 }, resolved: { payments: 0, refunds: 0 } });
    expect(await payment(unknown.id)).toMatchObject({ status: 'SUCCEEDED', transactionId: booked.paymentKey });
    const audit = await adminGet<{ items: Array<{ action: string; actor: string }> }>(running.app, `/admin/audit?entityType=payment&entityId=${unknown.id}`);
    expect(audit.items.filter((a) => a.action === 'payment.resolve_succeeded').map((a) => a.actor)).toEqual([expect.stringContaining('admin')]);
    expect(await succeededEvents(unknown.id)).toBe(1);
  });
});

describe('the daily pass', () => {
  it('imports yesterday (Korea date, the service clock) once, however often it runs', async () => {
    const id = await tossSubscription('toss-daily-1', 12000);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const [charged] = await paymentsOf(running.app, id);

    // 00:30 on the 11th in Korea: yesterday is the 10th.
    await setClock(running.app, kst('2027-03-11T00:30:00'));
    // Two runs at once (two replicas' timers), then a later one: one import.
    const [first, second] = await Promise.all([running.app.settlementSync.runDaily(), running.app.settlementSync.runDaily()]);
    const later = await running.app.settlementSync.runDaily();
    const runs = [...first, ...second, ...later];
    expect(runs.map((r) => [r.gateway, r.date])).toEqual([
      ['TOSS', '2027-03-10'],
      ['TOSS', '2027-03-10'],
      ['TOSS', '2027-03-10'],
    ]);
    expect(runs.filter((r) => r.imported)).toHaveLength(1);
    expect(new Set(runs.map((r) => r.importId)).size).toBe(1);
    const imports = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/settlement-imports');
    expect(imports.items).toEqual([
      expect.objectContaining({
        gateway: 'TOSS',
        coverage: { from: '2027-03-10', to: '2027-03-10' },
        rows: 1,
        summary: expect.objectContaining({ matched: 1 }),
      }),
    ]);
    const audit = await adminGet<{ items: Array<{ actor: string; action: string }> }>(running.app, `/admin/audit?entityType=settlement_import`);
    expect(audit.items.map((a) => [a.action, a.actor])).toEqual([['settlement_import.create', 'settlement-sync']]);
    expect(await payment(charged!.id)).toMatchObject({ status: 'SUCCEEDED' });
  });
});
