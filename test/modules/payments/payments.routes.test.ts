// The payments' read routes of the merchant API: a subscription's payments filtered by status, and one payment with its
// attempts and refunds in the shape docs/api.md "Shapes" gives (the same as the admin route's).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { PAYMENT_DETAIL, serializePayment } from '../../../src/modules/payments/payments.service.ts';
import { createAttempt, createPayment, createSubscription } from '../../factories/index.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(() => truncateAll(app.db));

const get = (url: string) => app.inject({ method: 'GET', url, headers: apiHeaders });

describe('GET /api/v1/payments', () => {
  it('lists a subscription’s payments with a status filter, and shows one with its attempts', async () => {
    const subscription = await createSubscription(app.db);
    await createPayment(app.db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED' });
    const failed = await createPayment(app.db, { subscriptionId: subscription.id, cycle: 2, status: 'FAILED' });
    await createPayment(app.db, { status: 'SUCCEEDED' });
    const page = (await get(`/api/v1/payments?subscriptionId=${subscription.id}&status=FAILED`)).json();
    expect(page.items.map((p: { id: string }) => p.id)).toEqual([failed.id]);
    const one = (await get(`/api/v1/payments/${failed.id}`)).json();
    expect(one).toMatchObject({ id: failed.id, status: 'FAILED', attempts: [] });
    expect((await get('/api/v1/payments/00000000-0000-0000-0000-000000000000')).statusCode).toBe(404);
  });

  it('shows a payment and its attempts, in order, with every field as Prisma reads them', async () => {
    // GET /payments/:id is one SQL statement (readPayment); the shape must stay what the Prisma rows give.
    const subscription = await createSubscription(app.db);
    const payment = await createPayment(app.db, {
      subscriptionId: subscription.id,
      cycle: 1,
      status: 'SUCCEEDED',
      transactionId: 'tx-2',
      approvedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
      attentionReason: 'SUBSCRIPTION_CANCELED',
      canceledAmount: 100,
    });
    await createAttempt(app.db, {
      paymentId: payment.id,
      attemptNumber: 2,
      status: 'SUCCEEDED',
      transactionId: 'tx-2',
      approvedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
      sentAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 1)),
      completedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 6)),
    });
    await createAttempt(app.db, {
      paymentId: payment.id,
      attemptNumber: 1,
      status: 'DECLINED',
      gatewayCode: 'CARD_DECLINED',
      gatewayMessage: 'declined',
      sentAt: new Date(Date.UTC(2026, 0, 1)),
    });
    // Its refunds: one through the gateway (a CANCEL attempt with its reason), one recorded outside it.
    await createAttempt(app.db, {
      paymentId: payment.id,
      attemptNumber: 3,
      operation: 'CANCEL',
      amount: 60,
      status: 'SUCCEEDED',
      reason: 'asked by the customer',
      completedAt: new Date(Date.UTC(2026, 0, 3)),
    });
    await app.db.externalRefund.create({
      data: {
        paymentId: payment.id,
        amount: 40,
        reason: 'bank transfer',
        reference: 'KB-1',
        actor: 'admin:ops',
        recordedAt: new Date(Date.UTC(2030, 0, 4, 1, 2, 3, 456)),
      },
    });
    const viaPrisma = JSON.parse(
      JSON.stringify(serializePayment(await app.db.payment.findUniqueOrThrow({ where: { id: payment.id }, include: PAYMENT_DETAIL }))),
    );
    expect(viaPrisma.refunds.map((r: { channel: string; reason: string }) => [r.channel, r.reason])).toEqual([
      ['GATEWAY', 'asked by the customer'],
      ['EXTERNAL', 'bank transfer'],
    ]);
    const shown = (await get(`/api/v1/payments/${payment.id}`)).json();
    expect(shown).toEqual(viaPrisma);
    expect(shown.attempts.map((a: { attemptNumber: number }) => a.attemptNumber)).toEqual([1, 2, 3]);
    expect(shown.attempts[1].approvedAt).toBe('2026-01-02T03:04:05.678Z');
    expect((await app.inject({ method: 'GET', url: `/admin/payments/${payment.id}`, headers: adminHeaders })).json()).toEqual(viaPrisma);
  });
});
