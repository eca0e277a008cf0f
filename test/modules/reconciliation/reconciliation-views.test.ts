// GET /admin/reconciliation and /admin/reconciliation/summary over the sandbox gateway's own export: matched
// approvals and refunds, a gateway approval we never recorded (UNMATCHED), our charge the file lacks inside its
// coverage (MISSING), reasons for another day or method, keyset pages, the CSV export and the period's totals.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { clientFor } from '../../helpers/sandbox.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { decideWindow, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

interface Item {
  id: string;
  source: string;
  status: string;
  reasons: string[];
  type: string;
  transactionId?: string;
  orderId?: string;
  amount: number;
  tradeDate: string;
  paymentId?: string;
}
const items = async (query = '') => (await adminGet<{ items: Item[]; nextCursor: string | null }>(running.app, `/admin/reconciliation${query}`)).items;

/**
 * Two subscriptions, a partial refund, and an order window that another system confirmed at the gateway directly (an
 * approval we never recorded); the export.
 */
async function monthWithStatement() {
  const a = await subscribe(running.app, { userId: 'a' });
  const b = await subscribe(running.app, { userId: 'b', amount: 12_900 });
  const [paymentA] = await paymentsOf(running.app, a);
  const refund = await running.app.inject({
    method: 'POST',
    url: `/admin/payments/${paymentA!.id}/cancel`,
    headers: { ...adminHeaders, 'idempotency-key': 'refund-a' },
    payload: { amount: 1000, reason: 'partial' },
  });
  expect(refund.statusCode, refund.body).toBe(200);
  const order = await running.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: apiHeaders,
    payload: { userId: 'c', method: 'CARD', amount: 30_000, orderName: 'One-off' },
  });
  const window = await decideWindow(running.app, order.json().window);
  const elsewhere = clientFor(`${running.baseUrl}/sandbox`, { secretKey: TEST_SECRET_KEY, merchantId: 'TEST_MERCHANT' });
  expect(await elsewhere.confirmPayment({ method: 'CARD', transactionId: window.transactionId!, amount: 30_000 })).toMatchObject({ outcome: 'SUCCEEDED' });
  elsewhere.close();
  const file = await sandboxSettlementFile(running.app, { encoding: 'cp949' });
  return { a, b, paymentA: paymentA!, orderId: order.json().orderId as string, file };
}

describe('the reconciliation list', () => {
  it('shows matched lines, a gateway approval we never recorded, and our charge the file lacks', async () => {
    const { paymentA, orderId, file } = await monthWithStatement();
    expect((await sandboxLedger(running.app)).filter((e) => e.orderId === orderId)).toHaveLength(1);
    // Charged after the export, on a day the file covers.
    const late = await subscribe(running.app, { userId: 'd', amount: 5000 });
    const [latePayment] = await paymentsOf(running.app, late);

    const imported = await importCsv(running.app, file);
    expect(imported.json()).toMatchObject({
      rows: 4,
      summary: { matched: 3, mismatched: 0, unmatched: 1, missing: 1 },
      coverage: { from: '2027-03-10', to: '2027-03-10' },
    });

    const all = await items();
    expect(all).toHaveLength(5);
    expect(
      all
        .filter((i) => i.status === 'MATCHED')
        .map((i) => [i.type, i.amount])
        .sort(),
    ).toEqual([
      ['APPROVAL', 12_900],
      ['APPROVAL', 9900],
      ['CANCEL', 1000],
    ]);
    expect(all.find((i) => i.type === 'CANCEL')).toMatchObject({ paymentId: paymentA.id, transactionId: paymentA.transactionId, source: 'STATEMENT' });
    expect(await items('?status=UNMATCHED')).toEqual([expect.objectContaining({ source: 'STATEMENT', orderId, amount: 30_000, reasons: [] })]);
    expect(await items('?status=MISSING')).toEqual([
      expect.objectContaining({ source: 'LEDGER', id: latePayment!.id, paymentId: latePayment!.id, amount: 5000, tradeDate: '2027-03-10', type: 'APPROVAL' }),
    ]);
    expect(await items('?from=2027-03-11')).toEqual([]);
    expect(await items('?to=2027-03-09')).toEqual([]);

    // Keyset pages: every item once.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Item[]; nextCursor: string | null } = await adminGet(
        running.app,
        `/admin/reconciliation?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(all.map((i) => i.id).sort());

    const summary = await adminGet(running.app, '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-10');
    expect(summary).toEqual({
      from: '2027-03-10',
      to: '2027-03-10',
      timezone: 'Asia/Seoul',
      statement: { approvals: { count: 3, amount: 52_800 }, cancels: { count: 1, amount: 1000 }, net: 51_800 },
      ledger: { approvals: { count: 3, amount: 27_800 }, refunds: { count: 1, amount: 1000 }, externalRefunds: { count: 0, amount: 0 }, net: 26_800 },
      counts: { matched: 3, mismatched: 0, unmatched: 1, missing: 1 },
      anomalyAmount: 35_000,
    });
  });

  it('shows a refund the file lacks as MISSING, and a refund of another amount than the line as AMOUNT', async () => {
    const id = await subscribe(running.app, { userId: 'r', amount: 10_000 });
    const [paid] = await paymentsOf(running.app, id);
    const refund = (amount: number, key: string) =>
      running.app.inject({
        method: 'POST',
        url: `/admin/payments/${paid!.id}/cancel`,
        headers: { ...adminHeaders, 'idempotency-key': key },
        payload: { amount, reason: 'partial' },
      });
    expect((await refund(1000, 'r1')).statusCode).toBe(200);
    const exported = (await sandboxSettlementFile(running.app)).toString('utf8');
    expect((await refund(2000, 'r2')).statusCode).toBe(200);
    // The gateway's statement of the first refund, for another amount.
    const altered = exported.replace(/,"?-1,000"?,/, ',"-1,500",');
    expect(altered).not.toBe(exported);
    expect((await importCsv(running.app, altered)).json()).toMatchObject({ summary: { matched: 1, mismatched: 1, unmatched: 0, missing: 1 } });
    expect(await items('?status=MISSING')).toEqual([expect.objectContaining({ source: 'LEDGER', type: 'CANCEL', amount: 2000, paymentId: paid!.id })]);
    expect(await items('?status=MISMATCHED')).toEqual([expect.objectContaining({ type: 'CANCEL', amount: 1500, ourAmount: 1000, reasons: ['AMOUNT'] })]);
    expect(await adminGet(running.app, '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-10')).toMatchObject({
      statement: { cancels: { count: 1, amount: 1500 } },
      ledger: { refunds: { count: 2, amount: 3000 } },
      anomalyAmount: 2500,
    });
  });

  it('answers the whole filtered list as CSV with Accept: text/csv (UTF-8 with BOM, JSON field names, UTC times)', async () => {
    const { file } = await monthWithStatement();
    await importCsv(running.app, file);
    const response = await running.app.inject({ method: 'GET', url: '/admin/reconciliation?limit=1', headers: { ...adminHeaders, accept: 'text/csv' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    const text = response.rawPayload.toString('utf8');
    expect(text.startsWith('\ufeff')).toBe(true);
    const [header, ...rows] = text.slice(1).trim().split('\r\n');
    expect(header).toBe('id,source,status,reasons,type,transactionId,orderId,amount,tradedAt,tradeDate,paymentId,ourAmount,ourStatus,importId');
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row).toMatch(/,2027-03-(09|10)T\d{2}:\d{2}:\d{2}\.000Z,2027-03-10,/);
  });

  it('gives a line of another day or method its reasons, which alone count nothing as an anomaly', async () => {
    await subscribe(running.app, { userId: 'b', amount: 12_900 });
    // The gateway's statement of that charge, dated the next day and named a phone payment.
    const exported = (await sandboxSettlementFile(running.app)).toString('utf8');
    const altered = exported.replace(/2027-03-10 (\d{2}:\d{2}:\d{2}),승인,신용카드/, '2027-03-11 $1,승인,휴대폰');
    expect(altered).not.toBe(exported);
    expect((await importCsv(running.app, altered)).json()).toMatchObject({ summary: { mismatched: 1 }, coverage: { from: '2027-03-11' } });
    expect(await items()).toEqual([expect.objectContaining({ status: 'MISMATCHED', reasons: ['DATE', 'METHOD'], tradeDate: '2027-03-11', amount: 12_900 })]);
    expect(await adminGet(running.app, '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-11')).toMatchObject({
      counts: { matched: 0, mismatched: 1, unmatched: 0, missing: 0 },
      anomalyAmount: 0,
    });
  });
});
