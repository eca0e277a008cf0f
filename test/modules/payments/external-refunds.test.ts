// Refunds made outside the gateway (POST /admin/payments/:id/refunds/external), through the public routes: a MOBILE
// payment after its month, which the gateway no longer cancels, refunded by bank transfer. It counts as a refund
// through the same write as a gateway refund's success (canceledAmount, CANCELED, payment.canceled), shows in the
// payment's `refunds` beside the gateway's, never passes a gateway refund in flight, is expected by no settlement
// line, and counts in revenue on the Korea date it was recorded.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { waitFor } from '../../helpers/service.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
// The default gateway timeout: no call here is left unanswered, and a short one (3 s, as this file had) could be
// outlasted by an answered call on a loaded machine.
const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

const post = (url: string, payload: Record<string, unknown>, key?: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, ...(key ? { 'idempotency-key': key } : {}) }, payload });
const externalRefund = (paymentId: string, payload: Record<string, unknown>, key: string) =>
  post(`/admin/payments/${paymentId}/refunds/external`, payload, key);
interface Figures {
  payments: { count: number; amount: number };
  refunds: { count: number; amount: number };
  net: number;
}
type RevenueItem = Figures & { period: string; byMethod: { CARD: Figures; MOBILE: Figures } };
const adminPayment = async (id: string) => (await running.app.inject({ method: 'GET', url: `/admin/payments/${id}`, headers: adminHeaders })).json();

/** A MOBILE subscription's first payment (5,500), approved on 2027-03-10 Korea time. */
async function mobilePayment(userId = 'mobile-user') {
  const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', userId });
  const [first] = await paymentsOf(running.app, id);
  expect(first).toMatchObject({ status: 'SUCCEEDED', amount: 5_500 });
  return first!;
}

describe('POST /admin/payments/:id/refunds/external', () => {
  it('a MOBILE payment after its month: the gateway refund is refused, the external one is 201 and SUCCEEDED at once', async () => {
    const payment = await mobilePayment();
    await setClock(running.app, kst('2027-04-02T11:00:00'));
    const refused = await post(`/admin/payments/${payment.id}/cancel`, { reason: 'customer asked' }, 'gw-1');
    expect(refused.json()).toMatchObject({ statusCode: 422, code: 'MOBILE_CANCEL_MONTH_CLOSED' });

    const response = await externalRefund(payment.id, { amount: 5_500, reason: 'refunded by bank transfer', reference: 'KB-2027-0402-001' }, 'ext-1');
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    const at = kst('2027-04-02T11:00:00').toISOString();
    expect(body).toMatchObject({ id: payment.id, status: 'CANCELED', amount: 5_500, canceledAmount: 5_500, needsAttention: false });
    expect(body.refunds).toEqual([
      {
        id: expect.any(String),
        amount: 5_500,
        status: 'SUCCEEDED',
        channel: 'EXTERNAL',
        reason: 'refunded by bank transfer',
        reference: 'KB-2027-0402-001',
        requestedAt: at,
        succeededAt: at,
      },
    ]);
    // No gateway call was made; the attempts are the charge's alone.
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL')).toEqual([]);
    expect(body.attempts.map((a: { operation: string }) => a.operation)).not.toContain('CANCEL');
    // The merchant API shows the same refunds, on the payment and in the list.
    const merchant = await running.app.inject({ method: 'GET', url: `/api/v1/payments/${payment.id}`, headers: apiHeaders });
    expect(merchant.json().refunds).toEqual(body.refunds);
    const list = await running.app.inject({ method: 'GET', url: '/admin/payments?limit=100', headers: adminHeaders });
    expect(list.json().items.find((p: { id: string }) => p.id === payment.id).refunds).toEqual(body.refunds);

    const audit = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, `/admin/audit?entityType=payment&entityId=${payment.id}`);
    expect(audit.items[0]).toMatchObject({ action: 'payment.refund_external', actor: expect.stringMatching(/^admin:/), reason: 'refunded by bank transfer' });
  });

  it('a part, then the rest: CANCELED only when nothing remains, with payment.canceled; beyond what remains is 422', async () => {
    const payment = await mobilePayment();
    await setClock(running.app, kst('2027-04-05T10:00:00'));
    const part = await externalRefund(payment.id, { amount: 2_000, reason: 'half a month back' }, 'part');
    expect(part.statusCode, part.body).toBe(201);
    expect(part.json()).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 2_000 });
    expect(part.json().refunds[0]).not.toHaveProperty('reference');

    const beyond = await externalRefund(payment.id, { amount: 3_501, reason: 'too much' }, 'beyond');
    expect(beyond.json()).toMatchObject({ statusCode: 422, code: 'AMOUNT_EXCEEDS_REMAINING', details: { remaining: 3_500 } });
    expect((await adminPayment(payment.id)).canceledAmount).toBe(2_000);

    await setClock(running.app, kst('2027-04-06T10:00:00'));
    const rest = await externalRefund(payment.id, { amount: 3_500, reason: 'the rest' }, 'rest');
    expect(rest.statusCode, rest.body).toBe(201);
    expect(rest.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 5_500 });
    expect(rest.json().refunds.map((r: { amount: number; channel: string }) => [r.amount, r.channel])).toEqual([
      [2_000, 'EXTERNAL'],
      [3_500, 'EXTERNAL'],
    ]);

    // Nothing remains of a CANCELED payment.
    const after = await externalRefund(payment.id, { amount: 1, reason: 'once more' }, 'after');
    expect(after.json()).toMatchObject({ statusCode: 422, code: 'AMOUNT_EXCEEDS_REMAINING', details: { remaining: 0 } });

    // The events of the gateway's refunds, written by the same write: one per refund, the last with CANCELED.
    await waitFor('both payment.canceled events in the feed', async () => {
      const events = (await running.app.inject({ method: 'GET', url: '/api/v1/events?type=payment.canceled&limit=100', headers: apiHeaders })).json();
      const mine = events.items.filter((e: { data: { object: { id: string } } }) => e.data.object.id === payment.id);
      return (
        mine.length === 2 &&
        mine[0].data.object.canceledAmount === 2_000 &&
        mine[0].data.object.status === 'SUCCEEDED' &&
        mine[1].data.object.canceledAmount === 5_500 &&
        mine[1].data.object.status === 'CANCELED'
      );
    });
  });

  it('refunds recorded at one instant (a frozen clock) are listed in the order they were recorded', async () => {
    const payment = await mobilePayment('same-instant-user');
    await setClock(running.app, kst('2027-04-05T10:00:00'));
    const amounts = [100, 200, 300, 400, 500];
    for (const amount of amounts) {
      const answer = await externalRefund(payment.id, { amount, reason: `part ${amount}` }, `same-instant-${amount}`);
      expect(answer.statusCode, answer.body).toBe(201);
    }
    // Ordered by recordedAt, then by the row's own creation (ids are random: 1 chance in 120 of this order by id).
    expect((await adminPayment(payment.id)).refunds.map((r: { amount: number }) => r.amount)).toEqual(amounts);
  });

  it('the same Idempotency-Key again replays the answer and records once; the key is required', async () => {
    const payment = await mobilePayment();
    const body = { amount: 1_000, reason: 'goodwill', reference: 'T-1' };
    const first = await externalRefund(payment.id, body, 'same-key');
    const again = await externalRefund(payment.id, body, 'same-key');
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect((await adminPayment(payment.id)).refunds).toHaveLength(1);
    expect((await adminPayment(payment.id)).canceledAmount).toBe(1_000);
    expect((await externalRefund(payment.id, { ...body, amount: 2_000 }, 'same-key')).json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });

    const withoutKey = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${payment.id}/refunds/external`,
      headers: adminHeaders,
      payload: body,
    });
    expect(withoutKey.json()).toMatchObject({ statusCode: 400, code: 'IDEMPOTENCY_KEY_REQUIRED' });
    const unknownField = await externalRefund(payment.id, { ...body, channel: 'GATEWAY' }, 'extra-field');
    expect(unknownField.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    expect((await adminPayment(payment.id)).canceledAmount).toBe(1_000);
  });

  it('waits for a gateway refund: 409 while one is in flight or of unknown outcome, counted after it settles', async () => {
    const id = await subscribe(running.app, { amount: 9_900, userId: 'card-user' });
    const [payment] = await paymentsOf(running.app, id);

    // A gateway refund of 4,000 held in flight by the sandbox (until released): the external refund finds it and refuses.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'latency', until: 'released' });
    const gatewayRefund = post(`/admin/payments/${payment!.id}/cancel`, { amount: 4_000, reason: 'partial refund' }, 'gw-partial');
    await waitFor('the gateway refund in flight', async () =>
      (await adminPayment(payment!.id)).refunds.some((r: { status: string }) => r.status === 'PENDING'),
    );
    const during = await externalRefund(payment!.id, { amount: 5_900, reason: 'the rest by transfer' }, 'ext-during');
    expect(during.json()).toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    await sandboxHeld(running.app);
    await sandboxRelease(running.app);
    expect((await gatewayRefund).statusCode).toBe(200);

    // A gateway refund whose outcome is unknown: refused until it is settled.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500', booked: true });
    expect((await post(`/admin/payments/${payment!.id}/cancel`, { amount: 900, reason: 'another part' }, 'gw-unknown')).statusCode).toBe(502);
    const unknown = await externalRefund(payment!.id, { amount: 5_000, reason: 'by transfer' }, 'ext-unknown');
    expect(unknown.json()).toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    const settled = await post(`/admin/payments/${payment!.id}/cancel/resolve`, { outcome: 'SUCCEEDED', reason: 'in the console' }, 'settle');
    expect(settled.statusCode, settled.body).toBe(200);

    const rest = await externalRefund(payment!.id, { amount: 5_000, reason: 'the rest by transfer' }, 'ext-after');
    expect(rest.statusCode, rest.body).toBe(201);
    expect(rest.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9_900 });
    expect(rest.json().refunds.map((r: Record<string, unknown>) => [r.channel, r.amount, r.status, r.reason])).toEqual([
      ['GATEWAY', 4_000, 'SUCCEEDED', 'partial refund'],
      ['GATEWAY', 900, 'SUCCEEDED', 'another part'],
      ['EXTERNAL', 5_000, 'SUCCEEDED', 'the rest by transfer'],
    ]);
  });

  it('a payment that did not succeed cannot be refunded (409), an unknown payment is 404', async () => {
    const id = await subscribe(running.app, { amount: 9_900, userId: 'declined-user' });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline' });
    await running.app.inject({ method: 'POST', url: '/admin/scheduler/run', headers: adminHeaders });
    const failed = (await paymentsOf(running.app, id)).find((p) => p.status === 'FAILED')!;
    const refused = await externalRefund(failed.id, { amount: 100, reason: 'nothing was paid' }, 'failed');
    expect(refused.json()).toMatchObject({ statusCode: 409, code: 'PAYMENT_NOT_REFUNDABLE' });
    const missing = await externalRefund('00000000-0000-4000-8000-000000000000', { amount: 100, reason: 'x' }, 'missing');
    expect(missing.statusCode).toBe(404);
  });
});

describe('an external refund in reconciliation and revenue', () => {
  it('no gateway line is expected for it: never MISSING, apart from the ledger refunds the statement compares with', async () => {
    const payment = await mobilePayment();
    const id = await subscribe(running.app, { amount: 9_900, userId: 'card-user' });
    const [card] = await paymentsOf(running.app, id);
    expect((await post(`/admin/payments/${card!.id}/cancel`, { amount: 900, reason: 'partial' }, 'gw')).statusCode).toBe(200);
    expect((await externalRefund(payment.id, { amount: 5_500, reason: 'by transfer' }, 'ext')).statusCode).toBe(201);

    const imported = await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }));
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json()).toMatchObject({ rows: 3, summary: { matched: 3, mismatched: 0, unmatched: 0, missing: 0 } });
    const missing = await adminGet<{ items: unknown[] }>(running.app, '/admin/reconciliation?status=MISSING');
    expect(missing.items).toEqual([]);
    const summary = await adminGet(running.app, '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-10');
    expect(summary).toMatchObject({
      statement: { approvals: { count: 2, amount: 15_400 }, cancels: { count: 1, amount: 900 }, net: 14_500 },
      ledger: { approvals: { count: 2, amount: 15_400 }, refunds: { count: 1, amount: 900 }, externalRefunds: { count: 1, amount: 5_500 }, net: 14_500 },
      counts: { matched: 3, mismatched: 0, unmatched: 0, missing: 0 },
      anomalyAmount: 0,
    });
  });

  it('revenue counts it on the Korea date it was recorded, by method', async () => {
    const payment = await mobilePayment();
    // 00:30 on April 1st in Korea is still March 31st in UTC.
    await setClock(running.app, kst('2027-04-01T00:30:00'));
    expect((await externalRefund(payment.id, { amount: 5_500, reason: 'by transfer' }, 'ext')).statusCode).toBe(201);

    const report = await adminGet<{ items: RevenueItem[] }>(running.app, '/admin/reports/revenue?from=2027-03-31&to=2027-04-01');
    expect(report.items.map((i) => [i.period, i.payments.amount, i.refunds.count, i.refunds.amount, i.net])).toEqual([
      ['2027-03-31', 0, 0, 0, 0],
      ['2027-04-01', 0, 1, 5_500, -5_500],
    ]);
    expect(report.items[1]!.byMethod).toMatchObject({ MOBILE: { refunds: { count: 1, amount: 5_500 } }, CARD: { refunds: { count: 0, amount: 0 } } });
    const march = await adminGet<{ items: RevenueItem[] }>(running.app, '/admin/reports/revenue?from=2027-03-01&to=2027-04-30&granularity=month');
    expect(march.items.map((i) => [i.period, i.payments.amount, i.refunds.amount, i.net])).toEqual([
      ['2027-03', 5_500, 0, 5_500],
      ['2027-04', 0, 5_500, -5_500],
    ]);
  });
});
