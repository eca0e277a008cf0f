// Withdrawal (청약철회) in the portal, and the merchant's record of first use (docs/api.md "Subscription lifecycle"),
// through createPortalActions on the running app and the sandbox over HTTP, on the simulated clock: refunded in full at
// the sandbox within the window, refused after it and after use, a MOBILE payment past its Korean month owed under
// attention until an operator records the refund made outside the gateway, and an unknown refund outcome left unknown.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { auditOf, customer, DAY, eventsOf, kst, portalOf } from './portal-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
const START = kst('2030-03-01T10:00:00');
beforeEach(() => setClock(running.app, START));

const cancels = async () => (await sandboxLedger(running.app)).filter((entry) => entry.type === 'CANCEL');
const usage = (id: string, payload: Record<string, unknown>, key?: string) =>
  running.app.inject({
    method: 'POST',
    url: `/api/v1/subscriptions/${id}/usage`,
    headers: { ...apiHeaders, ...(key ? { 'idempotency-key': key } : {}) },
    payload,
  });
const adminPost = (url: string, payload: Record<string, unknown>, key: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });

describe('withdrawal in the portal', () => {
  it('on day 3: canceled now (WITHDRAWN) and refunded in full at the sandbox, audited as the customer', async () => {
    const id = await subscribe(running.app, { userId: 'ana', amount: 9900 });
    const [paid] = await paymentsOf(running.app, id);
    await setClock(running.app, new Date(START.getTime() + 2 * DAY));
    const portal = portalOf(running.app);

    const offer = await portal.withdrawalOffer('ana', id);
    expect(offer).toEqual({
      available: true,
      until: new Date(new Date(paid!.approvedAt!).getTime() + 7 * DAY),
      refundTotal: 9900,
      payments: [{ id: paid!.id, amount: 9900, approvedAt: new Date(paid!.approvedAt!), refundable: 'GATEWAY' }],
    });

    const result = await portal.withdraw(customer('ana'), id);
    expect(result).toMatchObject({ refunded: 9900, refundDue: 0 });
    expect(result.subscription).toMatchObject({ status: 'CANCELED', cancelReason: 'WITHDRAWN', needsAttention: false, nextChargeAt: null });
    expect(result.subscription.refundDue).toBeUndefined();
    expect(await cancels()).toEqual([expect.objectContaining({ amount: 9900, originalTransactionId: paid!.transactionId })]);
    expect((await paymentsOf(running.app, id))[0]).toMatchObject({ status: 'CANCELED', canceledAmount: 9900 });

    const events = await eventsOf(running.app, id);
    const canceled = events.find((event) => event.type === 'subscription.canceled');
    expect(canceled?.data.object).toMatchObject({ status: 'CANCELED', cancelReason: 'WITHDRAWN' });
    expect(events.at(-1)?.data.object).toMatchObject({ status: 'CANCELED', needsAttention: false });

    const [withdrawal] = (await auditOf(running.app, 'subscription', id)).filter((entry) => entry.action === 'subscription.withdraw');
    expect(withdrawal).toMatchObject({
      actor: 'customer:ana',
      after: expect.objectContaining({ portalSessionId: 'portal-session-of-ana', cancelReason: 'WITHDRAWN' }),
    });
    const [refund] = (await auditOf(running.app, 'payment', paid!.id)).filter((entry) => entry.action === 'payment.refund');
    expect(refund).toMatchObject({ actor: 'customer:ana', after: expect.objectContaining({ portalSessionId: 'portal-session-of-ana', amount: 9900 }) });

    // Twice acts once: the second finds it CANCELED.
    await expect(portal.withdraw(customer('ana'), id)).rejects.toMatchObject({
      statusCode: 409,
      code: 'WITHDRAWAL_NOT_AVAILABLE',
      details: { reason: 'CANCELED' },
    });
    expect(await cancels()).toHaveLength(1);
  });

  it('two withdrawals at once (a double submit): one cancels and refunds, the other finds it CANCELED', async () => {
    const id = await subscribe(running.app, { userId: 'ivy', amount: 9900 });
    await setClock(running.app, new Date(START.getTime() + DAY));
    const portal = portalOf(running.app);
    const outcomes = await Promise.allSettled([portal.withdraw(customer('ivy'), id), portal.withdraw(customer('ivy'), id)]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const [refused] = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(refused?.reason).toMatchObject({ code: 'WITHDRAWAL_NOT_AVAILABLE', details: { reason: 'CANCELED' } });
    expect(await cancels()).toHaveLength(1);
  });

  it('on day 8: refused (409 WITHDRAWAL_NOT_AVAILABLE, WINDOW_PASSED), nothing changes', async () => {
    const id = await subscribe(running.app, { userId: 'ben', amount: 9900 });
    await setClock(running.app, new Date(START.getTime() + 7 * DAY));
    const portal = portalOf(running.app);
    expect(await portal.withdrawalOffer('ben', id)).toEqual({ available: false, reason: 'WINDOW_PASSED' });
    await expect(portal.withdraw(customer('ben'), id)).rejects.toMatchObject({
      statusCode: 409,
      code: 'WITHDRAWAL_NOT_AVAILABLE',
      details: { reason: 'WINDOW_PASSED' },
    });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'ACTIVE' });
    expect(await cancels()).toEqual([]);
  });

  it('after the merchant recorded use: refused (USED)', async () => {
    const id = await subscribe(running.app, { userId: 'cho', amount: 9900 });
    await setClock(running.app, new Date(START.getTime() + DAY));
    expect((await usage(id, {})).statusCode).toBe(200);
    const portal = portalOf(running.app);
    expect(await portal.withdrawalOffer('cho', id)).toEqual({ available: false, reason: 'USED' });
    await expect(portal.withdraw(customer('cho'), id)).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_AVAILABLE', details: { reason: 'USED' } });
    expect(await cancels()).toEqual([]);
  });

  it('a trial never paid: NOT_PAID; PORTAL_WITHDRAWAL=off: OFF', async () => {
    const trial = await subscribe(running.app, { userId: 'dan', amount: 9900, trialDays: 14 });
    expect(await portalOf(running.app).withdrawalOffer('dan', trial)).toEqual({ available: false, reason: 'NOT_PAID' });
    const paid = await subscribe(running.app, { userId: 'dan', amount: 9900 });
    const app = running.app;
    const off = portalOf({ ...app, config: { ...app.config, portalWithdrawalMs: null } } as unknown as typeof app);
    expect(await off.withdrawalOffer('dan', paid)).toEqual({ available: false, reason: 'OFF' });
    await expect(off.withdraw(customer('dan'), paid)).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_AVAILABLE', details: { reason: 'OFF' } });
  });

  it('MOBILE across a Korean month boundary: not sent to the gateway, owed under WITHDRAWAL_REFUND_DUE until the external refund', async () => {
    await setClock(running.app, kst('2030-03-29T10:00:00'));
    const id = await subscribe(running.app, { userId: 'eve', method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    const [paid] = await paymentsOf(running.app, id);
    await setClock(running.app, kst('2030-04-01T09:00:00'));
    const portal = portalOf(running.app);
    expect(await portal.withdrawalOffer('eve', id)).toMatchObject({ available: true, refundTotal: 5500, payments: [{ id: paid!.id, refundable: 'EXTERNAL' }] });

    const result = await portal.withdraw(customer('eve'), id);
    expect(result).toMatchObject({ refunded: 0, refundDue: 5500 });
    expect(result.subscription).toMatchObject({
      status: 'CANCELED',
      cancelReason: 'WITHDRAWN',
      needsAttention: true,
      attentionReason: 'WITHDRAWAL_REFUND_DUE',
      refundDue: 5500,
    });
    expect(await cancels()).toEqual([]);
    const listed = await running.app.inject({ method: 'GET', url: '/admin/subscriptions?needsAttention=true', headers: adminHeaders });
    expect(listed.json().items.map((s: { id: string }) => s.id)).toEqual([id]);

    const external = await adminPost(
      `/admin/payments/${paid!.id}/refunds/external`,
      { amount: 5500, reason: '청약철회: 계좌 환불', reference: 'KB-0401' },
      'ext-1',
    );
    expect(external.statusCode, external.body).toBe(201);
    const after = await getSubscription(running.app, id);
    expect(after).toMatchObject({ status: 'CANCELED', needsAttention: false });
    expect(after.attentionReason).toBeUndefined();
    expect((after as { refundDue?: number }).refundDue).toBeUndefined();
    const cleared = (await eventsOf(running.app, id)).at(-1);
    expect(cleared).toMatchObject({
      type: 'subscription.updated',
      data: { previousAttributes: { needsAttention: true, attentionReason: 'WITHDRAWAL_REFUND_DUE', refundDue: 5500 } },
    });
  });

  it('an external refund in parts lowers refundDue; the attention clears only when nothing is owed', async () => {
    await setClock(running.app, kst('2030-03-30T10:00:00'));
    const id = await subscribe(running.app, { userId: 'jin', method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    const [paid] = await paymentsOf(running.app, id);
    await setClock(running.app, kst('2030-04-02T10:00:00'));
    expect(await portalOf(running.app).withdraw(customer('jin'), id)).toMatchObject({ refunded: 0, refundDue: 5500 });
    const part = await adminPost(`/admin/payments/${paid!.id}/refunds/external`, { amount: 2000, reason: '일부 계좌 환불' }, 'part-1');
    expect(part.statusCode, part.body).toBe(201);
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: true, attentionReason: 'WITHDRAWAL_REFUND_DUE', refundDue: 3500 });
    const rest = await adminPost(`/admin/payments/${paid!.id}/refunds/external`, { amount: 3500, reason: '나머지 계좌 환불' }, 'part-2');
    expect(rest.statusCode, rest.body).toBe(201);
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: false });
  });

  it('a refund of unknown outcome is not guessed: it stays owed until an operator settles it', async () => {
    const id = await subscribe(running.app, { userId: 'fay', amount: 9900 });
    const [paid] = await paymentsOf(running.app, id);
    await setClock(running.app, new Date(START.getTime() + DAY));
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500' });
    const result = await portalOf(running.app).withdraw(customer('fay'), id);
    expect(result).toMatchObject({ refunded: 0, refundDue: 9900 });
    expect(result.subscription).toMatchObject({ status: 'CANCELED', attentionReason: 'WITHDRAWAL_REFUND_DUE', refundDue: 9900 });
    const payment = (await running.app.inject({ method: 'GET', url: `/admin/payments/${paid!.id}`, headers: adminHeaders })).json();
    expect(payment).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 0, attentionReason: 'REFUND_OUTCOME_UNKNOWN' });

    const resolved = await adminPost(`/admin/payments/${paid!.id}/cancel/resolve`, { outcome: 'SUCCEEDED', reason: 'the gateway shows it cancelled' }, 'res-1');
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', needsAttention: false });
  });
});

describe('POST /api/v1/subscriptions/:id/usage', () => {
  it('records first use (default now, or a past `at`); a second call keeps the first time; Idempotency-Key replays', async () => {
    const id = await subscribe(running.app, { userId: 'gus', amount: 9900 });
    expect((await getSubscription(running.app, id)) as unknown).toMatchObject({ usageStartedAt: null });
    await setClock(running.app, kst('2030-03-02T12:00:00'));
    const first = await usage(id, { at: kst('2030-03-02T08:30:00').toISOString() }, 'use-1');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ id, usageStartedAt: kst('2030-03-02T08:30:00').toISOString() });
    const replay = await usage(id, { at: kst('2030-03-02T08:30:00').toISOString() }, 'use-1');
    expect(replay.json()).toEqual(first.json());
    const second = await usage(id, {});
    expect(second.statusCode).toBe(200);
    expect(second.json().usageStartedAt).toBe(kst('2030-03-02T08:30:00').toISOString());
    const updated = (await eventsOf(running.app, id)).filter((event) => event.data.previousAttributes && 'usageStartedAt' in event.data.previousAttributes);
    expect(updated).toHaveLength(1);
  });

  it('defaults to the service clock’s now; a future `at` is 400; an unknown id is 404', async () => {
    const id = await subscribe(running.app, { userId: 'hal', amount: 9900 });
    const future = await usage(id, { at: new Date(START.getTime() + 1000).toISOString() });
    expect(future.statusCode).toBe(400);
    expect(future.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const now = await usage(id, {});
    expect(now.json()).toMatchObject({ usageStartedAt: START.toISOString() });
    const unknown = await usage('00000000-0000-4000-8000-000000000000', {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
