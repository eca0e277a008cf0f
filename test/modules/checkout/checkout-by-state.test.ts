// The first read of every browser redirect (checkout-by-state.ts): a registration by its state with the subscription
// it made (registrations.read.ts) and an order by its state with its payment (orders.service.ts), each one named
// statement that must read what Prisma reads.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { orderByState } from '../../../src/modules/orders/orders.service.ts';
import { registrationByState } from '../../../src/modules/registrations/registrations.read.ts';
import { createPayment, createRegistration, createSubscription } from '../../factories/index.ts';
import { buildTestApp } from '../../helpers/app.ts';
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

describe('checkouts by state (the first read of every redirect)', () => {
  it('reads a registration with its subscription, and an order with its payment, as Prisma does', async () => {
    const subscription = await createSubscription(app.db);
    const registration = await app.db.registration.update({
      where: { id: subscription.registrationId },
      data: {
        userPhoneNumber: '010-1234-5678',
        trialDays: 14,
        leaseOwner: 'someone',
        leaseExpiresAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 123)),
        completedAt: new Date(),
      },
    });
    const bare = await createRegistration(app.db, { method: 'MOBILE', itemCode: 'ITEM01' });
    for (const state of [registration.state, bare.state]) {
      expect(await registrationByState(app.db, state)).toEqual(
        await app.db.registration.findUnique({ where: { state }, include: { subscription: { select: { id: true } } } }),
      );
    }
    const order = await app.db.order.create({
      data: {
        state: 'order-state-1',
        orderId: 'order-1',
        method: 'CARD',
        amount: 1000,
        orderName: 'One',
        expiresAt: new Date(),
        status: 'COMPLETED',
        transactionId: 'tx-order-1',
      },
    });
    await createPayment(app.db, { kind: 'ONE_TIME', oneTimeOrderId: order.id });
    const open = await app.db.order.create({
      data: { state: 'order-state-2', orderId: 'order-2', method: 'MOBILE', amount: 2000, orderName: 'Two', expiresAt: new Date(), userId: 'u' },
    });
    for (const state of [order.state, open.state]) {
      expect(await orderByState(app.db, state)).toEqual(await app.db.order.findUnique({ where: { state }, include: { payment: { select: { id: true } } } }));
    }
    expect(await registrationByState(app.db, 'no-such-state')).toBeNull();
    expect(await orderByState(app.db, 'no-such-state')).toBeNull();
  });
});
