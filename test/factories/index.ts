// Factories: rows with sensible defaults, built through Prisma so tests state only what matters to them.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/prisma.ts';
import type { Prisma } from '../../src/generated/prisma/client.ts';

const suffix = () => randomBytes(5).toString('hex');

export function buildRegistration(overrides: Partial<Prisma.RegistrationUncheckedCreateInput> = {}) {
  return {
    state: randomBytes(24).toString('base64url'),
    orderId: `reg_${suffix()}`,
    userId: `user_${suffix()}`,
    method: 'CARD' as const,
    amount: 9900,
    orderName: 'Monthly plan',
    expiresAt: new Date(Date.now() + 30 * 60_000),
    ...overrides,
  } satisfies Prisma.RegistrationUncheckedCreateInput;
}

export async function createRegistration(db: Db, overrides: Partial<Prisma.RegistrationUncheckedCreateInput> = {}) {
  return db.registration.create({ data: buildRegistration(overrides) });
}

export async function createBillingKey(db: Db, overrides: Partial<Prisma.BillingKeyUncheckedCreateInput> = {}) {
  return db.billingKey.create({
    data: {
      id: randomUUID(),
      userId: `user_${suffix()}`,
      method: 'CARD',
      encryptionKeyId: 'k1',
      keyIv: randomBytes(12),
      keyTag: randomBytes(16),
      keyCiphertext: randomBytes(20),
      cardName: 'Test Card',
      cardNumber: '1234-****-****-5678',
      ...overrides,
    },
  });
}

/** A subscription with its registration and billing key. */
export async function createSubscription(db: Db, overrides: Partial<Prisma.SubscriptionUncheckedCreateInput> = {}) {
  const method = overrides.method ?? 'CARD';
  const registration = await createRegistration(db, { method, status: 'COMPLETED' });
  const billingKey = await createBillingKey(db, { method, registrationId: registration.id, userId: registration.userId });
  const now = new Date();
  return db.subscription.create({
    data: {
      registrationId: registration.id,
      billingKeyId: billingKey.id,
      userId: registration.userId,
      method,
      amount: registration.amount,
      orderName: registration.orderName,
      intervalUnit: 'month',
      intervalCount: 1,
      anchorAt: now,
      currentPeriodStart: now,
      currentPeriodEnd: new Date(now.getTime() + 30 * 86_400_000),
      nextChargeAt: new Date(now.getTime() + 30 * 86_400_000),
      ...overrides,
    },
  });
}

export async function createPayment(db: Db, overrides: Partial<Prisma.PaymentUncheckedCreateInput> = {}) {
  return db.payment.create({
    data: {
      kind: 'RECURRING',
      method: 'CARD',
      amount: 9900,
      orderId: `pay_${suffix()}`,
      ...overrides,
    },
  });
}

export async function createAttempt(db: Db, overrides: Partial<Prisma.PaymentAttemptUncheckedCreateInput> & { paymentId: string }) {
  return db.paymentAttempt.create({
    data: {
      attemptNumber: 1,
      operation: 'BILLING_CONFIRM',
      orderId: `att_${suffix()}`,
      amount: 9900,
      ...overrides,
    },
  });
}
