// One-time orders through the public routes: create, window, confirm with our stored amount.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { apiHeaders, startTestApp } from '../../helpers/app.ts';
import { decideWindow, follow, sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

let database: TestDatabase;
let app: App;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url, { env: { PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) } }));
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(async () => {
  await truncateAll(app.db);
  await app.inject({ method: 'POST', url: '/sandbox/_control/reset' });
});

async function createOrder(body: Record<string, unknown> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: apiHeaders,
    payload: { method: 'CARD', amount: 30000, orderName: '단건 결제', ...body },
  });
  expect(response.statusCode).toBe(201);
  return response.json();
}

describe('one-time orders', () => {
  it('creates an order with its window, and GET returns it', async () => {
    const order = await createOrder({ userId: 'buyer-1' });
    expect(order).toMatchObject({
      status: 'PENDING',
      amount: 30000,
      successUrl: `${baseUrl}/payments/success?state=${order.state}`,
      window: { paymentsMethod: 'CARD', amount: 30000, issueKeyOnly: false },
    });
    expect((await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: apiHeaders })).json()).toEqual(order);
  });

  it('confirms with the stored amount and redirects with status, our orderId and the paymentId', async () => {
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    const response = await follow(app, window.redirectUrl);
    expect(response.statusCode).toBe(303);
    const location = new URL(response.headers.location as string);
    expect(location.searchParams.get('status')).toBe('success');
    expect(location.searchParams.get('orderId')).toBe(order.id);
    const paymentId = location.searchParams.get('paymentId')!;
    const payment = (await app.inject({ method: 'GET', url: `/api/v1/payments/${paymentId}`, headers: apiHeaders })).json();
    expect(payment).toMatchObject({
      kind: 'ONE_TIME',
      status: 'SUCCEEDED',
      amount: 30000,
      oneTimeOrderId: order.id,
      attempts: [{ operation: 'PAYMENT_CONFIRM', outcome: 'SUCCEEDED' }],
    });
    expect((await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: apiHeaders })).json()).toMatchObject({
      status: 'COMPLETED',
      paymentId,
    });
    expect((await sandboxLedger(app)).map((e) => e.amount)).toEqual([30000]);
  });

  it('refuses a redirect whose amount was tampered with, without confirming anything', async () => {
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    const url = new URL(window.redirectUrl);
    url.searchParams.set('amount', '100');
    const response = await follow(app, url.toString(), { json: true });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 'AMOUNT_MISMATCH' });
    expect(await sandboxLedger(app)).toEqual([]);
    expect(await app.db.paymentAttempt.count()).toBe(0);
    // The genuine redirect still works afterwards.
    expect((await follow(app, window.redirectUrl, { json: true })).json()).toMatchObject({ status: 'success' });
  });

  it('a form-POST redirect confirms as well', async () => {
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    const response = await follow(app, window.redirectUrl, { json: true, form: true });
    expect(response.json()).toMatchObject({ status: 'success', orderId: order.id });
  });

  it('a declined window fails the order', async () => {
    const order = await createOrder();
    const window = await decideWindow(app, order.window, 'decline');
    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.statusCode).toBe(422);
    expect((await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: apiHeaders })).json().status).toBe('FAILED');
  });

  it('an UNKNOWN confirmation leaves the order visibly unresolved and is never confirmed again automatically', async () => {
    await sandboxFault(app, { operation: 'CONFIRM_PAYMENT', kind: 'timeout' });
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect((await app.inject({ method: 'GET', url: `/api/v1/orders/${order.id}`, headers: apiHeaders })).json()).toMatchObject({
      status: 'NEEDS_ATTENTION',
      paymentId: expect.any(String),
    });
    const replay = await follow(app, window.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect(await app.db.paymentAttempt.count()).toBe(1);
    expect(await sandboxLedger(app)).toHaveLength(1);
  });

  it('a confirmation left in flight by a crashed request becomes UNKNOWN once its lease expires, and is not sent again', async () => {
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    // What a process killed mid-call leaves behind: the order's lease and an IN_FLIGHT attempt, both expired.
    const past = new Date(Date.now() - 60_000);
    await app.db.order.update({ where: { id: order.id }, data: { transactionId: window.transactionId, leaseOwner: 'dead', leaseExpiresAt: past } });
    const payment = await app.db.payment.create({
      data: { oneTimeOrderId: order.id, kind: 'ONE_TIME', method: 'CARD', amount: 30000, orderId: order.orderId, attemptCount: 1 },
    });
    await app.db.paymentAttempt.create({
      data: {
        paymentId: payment.id,
        attemptNumber: 1,
        operation: 'PAYMENT_CONFIRM',
        orderId: order.orderId,
        amount: 30000,
        leaseOwner: 'dead',
        leaseExpiresAt: past,
      },
    });

    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect(await app.db.paymentAttempt.findMany()).toMatchObject([{ status: 'UNKNOWN', attemptNumber: 1 }]);
    expect(await app.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({
      status: 'UNKNOWN',
      attentionReason: 'LEASE_EXPIRED',
      attemptCount: 1,
    });
    expect((await app.db.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('NEEDS_ATTENTION');
    expect(await sandboxLedger(app)).toEqual([]);
  });

  it('a gateway decline fails the order and its payment', async () => {
    await sandboxFault(app, { operation: 'CONFIRM_PAYMENT', kind: 'decline', code: 'LIMIT_EXCEEDED' });
    const order = await createOrder();
    const window = await decideWindow(app, order.window);
    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.json()).toMatchObject({ code: 'GATEWAY_DECLINED', details: { gatewayCode: 'LIMIT_EXCEEDED' } });
    expect(await app.db.payment.findFirstOrThrow()).toMatchObject({ status: 'FAILED', failureCode: 'LIMIT_EXCEEDED' });
  });

  it('refuses bad terms with 400', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: apiHeaders,
      payload: { method: 'CARD', amount: 1, orderName: '가'.repeat(34) },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toMatch(/102 bytes/);
  });
});
