// Read routes of the merchant API: keyset pagination, filters, cancel, and the shapes of DESIGN.md §5.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';

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

describe('GET /api/v1/subscriptions', () => {
  it('pages newest first with a cursor until the end, without repeats or gaps', async () => {
    const created = [];
    for (let i = 0; i < 7; i += 1) created.push(await createSubscription(app.db, { userId: 'pager', createdAt: new Date(Date.UTC(2026, 0, 1 + i)) }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = (
        await get(`/api/v1/subscriptions?userId=pager&limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(created.map((s) => s.id).reverse());
  });

  it('filters by status and userId, and never shows the billing key', async () => {
    await createSubscription(app.db, { userId: 'a', status: 'ACTIVE' });
    await createSubscription(app.db, { userId: 'a', status: 'PAST_DUE' });
    await createSubscription(app.db, { userId: 'b', status: 'ACTIVE' });
    const page = (await get('/api/v1/subscriptions?userId=a&status=PAST_DUE')).json();
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ userId: 'a', status: 'PAST_DUE', billingKey: { cardName: 'Test Card' } });
    const text = JSON.stringify(page);
    expect(text).not.toMatch(/keyCiphertext|keyIv|encryptionKeyId/);
  });

  it('refuses a malformed cursor and an unknown filter', async () => {
    expect((await get('/api/v1/subscriptions?cursor=garbage')).json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    expect((await get('/api/v1/subscriptions?needsAttention=true&x=1')).statusCode).toBe(400);
  });
});

describe('POST /api/v1/subscriptions/:id/cancel', () => {
  it('cancels at period end: charging continues until the boundary', async () => {
    const subscription = await createSubscription(app.db);
    const response = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: { atPeriodEnd: true } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true, nextChargeAt: subscription.nextChargeAt!.toISOString() });
  });

  it('cancels now: no next charge, and the billing key is revoked', async () => {
    const subscription = await createSubscription(app.db);
    const response = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: {} });
    expect(response.json()).toMatchObject({ status: 'CANCELED', nextChargeAt: null, canceledAt: expect.any(String), billingKey: { status: 'REVOKED' } });
    const again = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('STATE_CONFLICT');
  });

  it('refuses unknown fields and unknown ids', async () => {
    const subscription = await createSubscription(app.db);
    const mass = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: { amount: 1 } });
    expect(mass.statusCode).toBe(400);
    expect((await app.db.subscription.findUniqueOrThrow({ where: { id: subscription.id } })).amount).toBe(subscription.amount);
    const missing = await app.inject({ method: 'POST', url: '/api/v1/subscriptions/00000000-0000-0000-0000-000000000000/cancel', headers: apiHeaders, payload: {} });
    expect(missing.statusCode).toBe(404);
  });
});

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
});
