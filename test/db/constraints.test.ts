// The database itself refuses what would break the money-safety rules (DESIGN.md §3), whatever the code does.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/prisma.ts';
import { createPrismaClient, createTestDatabase, truncateAll, type TestDatabase } from '../helpers/database.ts';
import { createAttempt, createPayment, createRegistration, createSubscription } from '../factories/index.ts';

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
});
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});
beforeEach(() => truncateAll(db));

describe('database constraints', () => {
  it('allow one payment per subscription cycle (rule 5)', async () => {
    const subscription = await createSubscription(db);
    await createPayment(db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED' });
    await expect(createPayment(db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED' })).rejects.toThrow(/Unique constraint/);
    await expect(createPayment(db, { subscriptionId: subscription.id, cycle: 1 })).rejects.toThrow(/Unique constraint/);
    await expect(createPayment(db, { subscriptionId: subscription.id, cycle: 2 })).resolves.toBeTruthy();
  });

  it('allow at most one gateway call in flight per payment', async () => {
    const payment = await createPayment(db);
    await createAttempt(db, { paymentId: payment.id, attemptNumber: 1 });
    await expect(createAttempt(db, { paymentId: payment.id, attemptNumber: 2 })).rejects.toThrow(/Unique constraint/);
    await db.paymentAttempt.updateMany({ where: { paymentId: payment.id }, data: { status: 'DECLINED' } });
    await expect(createAttempt(db, { paymentId: payment.id, attemptNumber: 2 })).resolves.toBeTruthy();
  });

  it('never reuse an orderId for the same operation (rule 2)', async () => {
    const payment = await createPayment(db);
    await createAttempt(db, { paymentId: payment.id, attemptNumber: 1, orderId: 'order-1', status: 'DECLINED' });
    await expect(createAttempt(db, { paymentId: payment.id, attemptNumber: 2, orderId: 'order-1' })).rejects.toThrow(/Unique constraint/);
  });

  it('refuse an orderId over 50 bytes of UTF-8, counting Hangul as 3 bytes', async () => {
    await expect(createPayment(db, { orderId: '가'.repeat(17) })).rejects.toThrow(/orderId_bytes/);
    await expect(createPayment(db, { orderId: '가'.repeat(16) })).resolves.toBeTruthy();
  });

  it('refuse amounts that are not positive and refunds above the amount', async () => {
    await expect(createPayment(db, { amount: 0 })).rejects.toThrow(/amount_positive/);
    await expect(createRegistration(db, { amount: -1 })).rejects.toThrow(/amount_positive/);
    await expect(createPayment(db, { amount: 1000, canceledAmount: 1001 })).rejects.toThrow(/canceledAmount_range/);
  });

  it('allow one initial payment per registration', async () => {
    const registration = await createRegistration(db);
    await createPayment(db, { kind: 'INITIAL', registrationId: registration.id });
    await expect(createPayment(db, { kind: 'INITIAL', registrationId: registration.id })).rejects.toThrow(/Unique constraint/);
  });
});
