// GET /admin/payments?userId= lists every payment of the customer: their subscriptions' and their one-time orders'
// (issue 30: the filter followed the subscription only, so a customer with 8 subscription payments and one order's
// payment got 8). Another customer's payments, and orders without a userId, stay out; the filter holds on every page.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/prisma.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';

const running = useRunningApp();

async function createOrderPayment(db: Db, userId: string | undefined) {
  const order = await db.order.create({
    data: {
      state: randomUUID(),
      orderId: `ord_${randomUUID()}`,
      userId,
      method: 'CARD',
      amount: 5000,
      orderName: 'One-time item',
      status: 'COMPLETED',
      expiresAt: new Date(Date.now() + 3_600_000),
    },
  });
  return createPayment(db, { kind: 'ONE_TIME', oneTimeOrderId: order.id, orderId: order.orderId, amount: 5000, status: 'SUCCEEDED' });
}

/** Every page of the list, following nextCursor. */
async function listAll(query: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const response = await running.app.inject({
      method: 'GET',
      url: `/admin/payments?${query}&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      headers: adminHeaders,
    });
    expect(response.statusCode).toBe(200);
    const page = response.json() as { items: Array<{ id: string }>; nextCursor: string | null };
    ids.push(...page.items.map((item) => item.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

describe('GET /admin/payments?userId=', () => {
  it('lists the customer’s subscription payments and one-time order payments, and nobody else’s', async () => {
    const { db } = running.app;
    const subscription = await createSubscription(db);
    const userId = subscription.userId;
    const recurring = [];
    for (let cycle = 1; cycle <= 8; cycle++) {
      recurring.push(await createPayment(db, { subscriptionId: subscription.id, cycle, status: 'SUCCEEDED', dueAt: new Date() }));
    }
    const oneTime = await createOrderPayment(db, userId);
    // Someone else's order and subscription, and an order without a customer id.
    await createOrderPayment(db, `other_${randomUUID()}`);
    await createOrderPayment(db, undefined);
    const other = await createSubscription(db);
    await createPayment(db, { subscriptionId: other.id, cycle: 1, status: 'SUCCEEDED', dueAt: new Date() });

    const listed = await listAll(`userId=${encodeURIComponent(userId)}`);
    expect(listed).toHaveLength(9);
    expect(new Set(listed)).toEqual(new Set([...recurring.map((p) => p.id), oneTime.id]));
    expect(await listAll(`userId=${encodeURIComponent(userId)}&kind=ONE_TIME`)).toEqual([oneTime.id]);
    expect(await listAll(`userId=${encodeURIComponent(userId)}&kind=RECURRING`)).toHaveLength(8);
  });

  it('a customer with only one-time orders is found; an unknown customer lists nothing', async () => {
    const { db } = running.app;
    const userId = `buyer_${randomUUID()}`;
    const first = await createOrderPayment(db, userId);
    const second = await createOrderPayment(db, userId);
    expect(new Set(await listAll(`userId=${userId}`))).toEqual(new Set([first.id, second.id]));
    expect(await listAll(`userId=nobody_${randomUUID()}`)).toEqual([]);
  });
});
