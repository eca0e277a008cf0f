// Defects of the reconciliation found after it was merged, each reproduced through the public routes with the sandbox
// gateway's own export: one gateway transaction settled two payments; a cancel line paired with a refund the gateway
// declined; two overlapping imports at once deadlocked (a 500); imported lines could be emptied by TRUNCATE.
import { beforeEach, describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { overlapped } from '../../helpers/locks.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

const admin = (url: string, payload: Record<string, unknown>, key?: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, ...(key ? { 'idempotency-key': key } : {}) }, payload });
const payment = async (id: string) => (await running.app.inject({ method: 'GET', url: `/admin/payments/${id}`, headers: adminHeaders })).json();

describe('one gateway transaction settles at most one payment', () => {
  it('two approval lines with one transactionId and the orderIds of two UNKNOWN charges resolve only one of them', async () => {
    const first = await subscribe(running.app, { amount: 9_900, userId: 'u1' });
    const second = await subscribe(running.app, { amount: 5_000, userId: 'u2' });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true, count: 2 });
    expect(await runPass(running.app)).toMatchObject({ unknown: 2 });
    const renewalOf = async (id: string) => (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN')!;
    const [one, two] = [await renewalOf(first), await renewalOf(second)];
    const booked = (await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM');
    const tx = (orderId: string) => booked.find((e) => e.orderId === orderId)!.transactionId!;

    // A statement whose second charge carries the first one's transactionId (a console export joining two rows).
    const file = (await sandboxSettlementFile(running.app)).toString('utf8');
    const forged = file.split(tx(two.orderId)).join(tx(one.orderId));
    expect(forged).not.toBe(file);
    const response = await importCsv(running.app, forged);
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().resolved).toEqual({ payments: 1, refunds: 0 });

    // Whichever line was applied first took the transaction; the other payment still waits for an operator.
    const both = [await payment(one.id), await payment(two.id)];
    expect(both.map((p) => p.status).sort()).toEqual(['SUCCEEDED', 'UNKNOWN']);
    expect(both.find((p) => p.status === 'SUCCEEDED')).toMatchObject({ transactionId: tx(one.orderId) });
    expect(both.find((p) => p.status === 'UNKNOWN')).toMatchObject({ needsAttention: true });
    expect(both.find((p) => p.status === 'UNKNOWN')).not.toHaveProperty('transactionId');
  });

  it('an operator cannot resolve a payment with the transactionId that settles another: 409, nothing written', async () => {
    const first = await subscribe(running.app, { amount: 9_900, userId: 'u1' });
    const second = await subscribe(running.app, { amount: 9_900, userId: 'u2' });
    const [paid] = await paymentsOf(running.app, first);
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true });
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const unknown =
      (await paymentsOf(running.app, second)).find((p) => p.status === 'UNKNOWN') ??
      (await paymentsOf(running.app, first)).find((p) => p.status === 'UNKNOWN')!;
    const taken = await admin(`/admin/payments/${unknown.id}/resolve`, { outcome: 'SUCCEEDED', transactionId: paid!.transactionId, reason: 'typo' }, 'r1');
    expect(taken.json()).toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    expect(await payment(unknown.id)).toMatchObject({ status: 'UNKNOWN' });
  });
});

describe('a cancel line pairs with a refund that moved money, not with a declined one', () => {
  it('a refund declined, then one of the same amount refunded: the line matches the second, nothing is MISSING', async () => {
    const id = await subscribe(running.app, { amount: 9_900, userId: 'u1' });
    const [paid] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'decline' });
    expect((await admin(`/admin/payments/${paid!.id}/cancel`, { amount: 4_000, reason: 'partial' }, 'declined')).statusCode).toBe(402);
    expect((await admin(`/admin/payments/${paid!.id}/cancel`, { amount: 4_000, reason: 'partial, again' }, 'refunded')).statusCode).toBe(200);
    expect((await payment(paid!.id)).refunds.map((r: { status: string }) => r.status)).toEqual(['FAILED', 'SUCCEEDED']);

    const response = await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ rows: 2, summary: { matched: 2, mismatched: 0, unmatched: 0, missing: 0 } });
    const items = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?limit=100');
    expect(items.items.map((i) => [i.source, i.type, i.status, i.amount])).toEqual(expect.arrayContaining([['STATEMENT', 'CANCEL', 'MATCHED', 4_000]]));
    expect(items.items.filter((i) => i.status !== 'MATCHED')).toEqual([]);
  });

  it('two lines of that amount: the second pairs with the declined refund, the gateway having cancelled it after all (STATUS)', async () => {
    const id = await subscribe(running.app, { amount: 9_900, userId: 'u1' });
    const [paid] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'decline' });
    expect((await admin(`/admin/payments/${paid!.id}/cancel`, { amount: 4_000, reason: 'partial' }, 'declined')).statusCode).toBe(402);
    expect((await admin(`/admin/payments/${paid!.id}/cancel`, { amount: 4_000, reason: 'partial, again' }, 'refunded')).statusCode).toBe(200);
    // The statement shows the cancel twice: a second line a minute later (the declined call went through).
    const file = (await sandboxSettlementFile(running.app)).toString('utf8');
    const cancel = file.split(/\r?\n/).find((line) => line.split(',')[1]?.endsWith('취소'))!;
    const later = cancel.replace(
      /(\d{4}-\d{2}-\d{2} \d{2}):(\d{2})/,
      (_, hour: string, minute: string) => `${hour}:${String((Number(minute) + 1) % 60).padStart(2, '0')}`,
    );
    expect(later).not.toBe(cancel);
    const response = await importCsv(running.app, `${file.trimEnd()}\r\n${later}\r\n`);
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toMatchObject({ rows: 3, summary: { matched: 2, mismatched: 1, unmatched: 0, missing: 0 } });
    const mismatched = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?status=MISMATCHED');
    expect(mismatched.items).toEqual([expect.objectContaining({ type: 'CANCEL', amount: 4_000, reasons: ['STATUS'] })]);
  });
});

describe('two overlapping imports at once', () => {
  it('the same 2,000 lines in opposite orders: both imported (one finds them all stored), no deadlock, no 500', async () => {
    const header = '거래일시,거래구분,결제수단,거래번호,취소번호,주문번호,거래금액,가맹점ID';
    const lines = Array.from({ length: 2_000 }, (_, i) => `2027-03-10 10:00:00,승인,신용카드,TXOTHER${i},,ORDOTHER${i},"1,000",M1`);
    const file = (rows: string[]) => `${[header, ...rows].join('\r\n')}\r\n`;
    const answers = await overlapped(running.databaseUrl, 'settlement_lines', 2, () => [
      importCsv(running.app, file(lines)),
      importCsv(running.app, file([...lines].reverse())),
    ]);

    expect(answers.map((a) => a.statusCode)).toEqual([201, 201]);
    const bodies = answers.map((a) => a.json());
    expect(bodies.map((b) => b.newLines).sort((x, y) => x - y)).toEqual([0, 2_000]);
    expect(bodies.map((b) => b.duplicateLines).sort((x, y) => x - y)).toEqual([0, 2_000]);
    expect(bodies.every((b) => b.summary.unmatched === 2_000)).toBe(true);
  });
});
