// Another customer's transactionId sent to my success URL: the thief's redirect does not complete the thief's order or
// registration with the victim's money, and the victim's real charge is never recorded as failed: both wait for an
// operator, and nothing is sent for the victim's own redirect. (Regression test for issue #12, defects 2 and 3.)
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { createRegistration, decideWindow, follow, sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders } from '../../helpers/billing.ts';

const running = useRunningApp();

async function createOrder(userId: string) {
  const response = await running.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: apiHeaders,
    payload: { userId, method: 'CARD', amount: 30000, orderName: 'One-off' },
  });
  expect(response.statusCode).toBe(201);
  return response.json() as { id: string; state: string; window: Parameters<typeof decideWindow>[1] };
}

/** The thief's own redirect URL carrying the victim's transactionId (and no orderId, as a forger would send). */
function forged(thiefSuccessUrl: string, victimTransactionId: string) {
  const url = new URL(thiefSuccessUrl);
  url.searchParams.set('transactionId', victimTransactionId);
  url.searchParams.set('code', 'SUCCESS');
  return url.toString();
}

const get = async (path: string) => (await running.app.inject({ method: 'GET', url: path, headers: apiHeaders })).json();

describe('a foreign transactionId on a success URL', () => {
  it('orders: the thief’s order is not completed, the victim’s charge is not recorded as failed', async () => {
    const victim = await createOrder('victim');
    const thief = await createOrder('thief');
    const victimWindow = await decideWindow(running.app, victim.window);
    const thiefOrder = await get(`/api/v1/orders/${thief.id}`);

    const stolen = await follow(running.app, forged(thiefOrder.successUrl, victimWindow.transactionId!), { json: true });
    expect(stolen.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect((await get(`/api/v1/orders/${thief.id}`)).status).toBe('NEEDS_ATTENTION');

    const own = await follow(running.app, victimWindow.redirectUrl, { json: true });
    expect(own.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const victimOrder = await get(`/api/v1/orders/${victim.id}`);
    expect(victimOrder.status).toBe('NEEDS_ATTENTION');
    const payments = (await get('/api/v1/payments?limit=100')).items as Array<{ status: string }>;
    expect(payments.map((p) => p.status)).not.toContain('FAILED');
    // The gateway booked the victim's window once, and nothing else was sent for the victim's redirect.
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);
  });

  it('registrations: the thief gets no subscription, the victim’s initial charge is not recorded as failed', async () => {
    const victim = await createRegistration(running.app, { userId: 'victim', method: 'CARD', amount: 9900, orderName: 'Plan' });
    const thief = await createRegistration(running.app, { userId: 'thief', method: 'CARD', amount: 9900, orderName: 'Plan' });
    const victimWindow = await decideWindow(running.app, victim.window);

    const stolen = await follow(running.app, forged(thief.successUrl, victimWindow.transactionId!), { json: true });
    expect(stolen.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const thiefRegistration = await get(`/api/v1/registrations/${thief.id}`);
    expect(thiefRegistration).toMatchObject({ status: 'NEEDS_ATTENTION' });
    expect(thiefRegistration.subscriptionId).toBeUndefined();

    const own = await follow(running.app, victimWindow.redirectUrl, { json: true });
    expect(own.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect((await get(`/api/v1/registrations/${victim.id}`)).status).toBe('NEEDS_ATTENTION');
    const payments = (await get('/api/v1/payments?limit=100')).items as Array<{ status: string }>;
    expect(payments.map((p) => p.status)).not.toContain('FAILED');
    expect((await get('/api/v1/subscriptions?limit=100')).items).toEqual([]);
  });
});

describe('resolving an order whose confirmation was unknown', () => {
  it('completes it with the gateway’s transactionId on the payment, whatever another order holds', async () => {
    const paid = await createOrder('paid');
    const paidWindow = await decideWindow(running.app, paid.window);
    expect((await follow(running.app, paidWindow.redirectUrl, { json: true })).statusCode).toBe(200);

    const lost = await createOrder('lost');
    const lostWindow = await decideWindow(running.app, lost.window);
    await sandboxFault(running.app, { operation: 'CONFIRM_PAYMENT', kind: 'http_500', booked: true });
    expect((await follow(running.app, lostWindow.redirectUrl, { json: true })).json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const payment = await running.app.db.payment.findFirstOrThrow({ where: { oneTimeOrderId: lost.id } });

    // The operator pastes a transaction id that another order's row already holds (its window's): no clash.
    const resolved = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${payment.id}/resolve`,
      headers: adminHeaders,
      payload: { outcome: 'SUCCEEDED', transactionId: paidWindow.transactionId, reason: 'seen in the console' },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'SUCCEEDED', transactionId: paidWindow.transactionId });
    expect((await get(`/api/v1/orders/${lost.id}`)).status).toBe('COMPLETED');
  });
});
