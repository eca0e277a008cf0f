// The database itself refuses what would break the money-safety rules (docs/architecture.md "Money-safety invariants"), whatever the code does.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database.ts';
import { createAttempt, createPayment, createRegistration, createSubscription } from '../factories/index.ts';

const t = useTestDatabase();

describe('database constraints', () => {
  it('allow one payment per subscription cycle (invariant 5)', async () => {
    const subscription = await createSubscription(t.db);
    await createPayment(t.db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED' });
    await expect(createPayment(t.db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED' })).rejects.toThrow(/Unique constraint/);
    await expect(createPayment(t.db, { subscriptionId: subscription.id, cycle: 1 })).rejects.toThrow(/Unique constraint/);
    await expect(createPayment(t.db, { subscriptionId: subscription.id, cycle: 2 })).resolves.toBeTruthy();
  });

  it('allow at most one gateway call in flight per payment', async () => {
    const payment = await createPayment(t.db);
    await createAttempt(t.db, { paymentId: payment.id, attemptNumber: 1 });
    await expect(createAttempt(t.db, { paymentId: payment.id, attemptNumber: 2 })).rejects.toThrow(/Unique constraint/);
    await t.db.paymentAttempt.updateMany({ where: { paymentId: payment.id }, data: { status: 'DECLINED' } });
    await expect(createAttempt(t.db, { paymentId: payment.id, attemptNumber: 2 })).resolves.toBeTruthy();
  });

  it('never reuse a billing charge orderId (invariant 2), while a key-issuance replay may repeat the window orderId', async () => {
    const payment = await createPayment(t.db);
    await createAttempt(t.db, { paymentId: payment.id, attemptNumber: 1, orderId: 'order-1', status: 'DECLINED' });
    await expect(createAttempt(t.db, { paymentId: payment.id, attemptNumber: 2, orderId: 'order-1' })).rejects.toThrow(/Unique constraint/);
    const other = await createPayment(t.db);
    await expect(createAttempt(t.db, { paymentId: other.id, attemptNumber: 1, orderId: 'order-1' })).rejects.toThrow(/Unique constraint/);

    const initial = await createPayment(t.db, { kind: 'INITIAL' });
    await createAttempt(t.db, { paymentId: initial.id, attemptNumber: 1, operation: 'ISSUE_KEY', orderId: 'window-1', status: 'UNKNOWN' });
    await expect(createAttempt(t.db, { paymentId: initial.id, attemptNumber: 2, operation: 'ISSUE_KEY', orderId: 'window-1' })).resolves.toBeTruthy();
  });

  it('refuse an orderId over 50 bytes of UTF-8, counting Hangul as 3 bytes', async () => {
    await expect(createPayment(t.db, { orderId: '가'.repeat(17) })).rejects.toThrow(/orderId_bytes/);
    await expect(createPayment(t.db, { orderId: '가'.repeat(16) })).resolves.toBeTruthy();
  });

  it('refuse amounts that are not positive and refunds above the amount', async () => {
    await expect(createPayment(t.db, { amount: 0 })).rejects.toThrow(/amount_positive/);
    await expect(createRegistration(t.db, { amount: -1 })).rejects.toThrow(/amount_positive/);
    await expect(createPayment(t.db, { amount: 1000, canceledAmount: 1001 })).rejects.toThrow(/canceledAmount_range/);
  });

  it('allow one initial payment per registration', async () => {
    const registration = await createRegistration(t.db);
    await createPayment(t.db, { kind: 'INITIAL', registrationId: registration.id });
    await expect(createPayment(t.db, { kind: 'INITIAL', registrationId: registration.id })).rejects.toThrow(/Unique constraint/);
  });

  it('keep a refund made outside the gateway as recorded: a positive amount, a reason, never edited nor deleted (invariant 15)', async () => {
    const payment = await createPayment(t.db, { status: 'SUCCEEDED' });
    const row = { paymentId: payment.id, amount: 1000, reason: 'bank transfer', actor: 'admin:ops', recordedAt: new Date() };
    await expect(t.db.externalRefund.create({ data: { ...row, amount: 0 } })).rejects.toThrow(/external_refunds_amount_positive/);
    await expect(t.db.externalRefund.create({ data: { ...row, reason: '' } })).rejects.toThrow(/external_refunds_reason_length/);
    await expect(t.db.externalRefund.create({ data: { ...row, reference: '' } })).rejects.toThrow(/external_refunds_reference_length/);
    const refund = await t.db.externalRefund.create({ data: row });
    await expect(t.db.externalRefund.update({ where: { id: refund.id }, data: { amount: 10 } })).rejects.toThrow(/never edited nor deleted/);
    await expect(t.db.externalRefund.delete({ where: { id: refund.id } })).rejects.toThrow(/never edited nor deleted/);
  });

  it('keep a reason on refund attempts only', async () => {
    const payment = await createPayment(t.db);
    await expect(createAttempt(t.db, { paymentId: payment.id, attemptNumber: 1, reason: 'why' })).rejects.toThrow(/payment_attempts_reason_only_refunds/);
    await expect(createAttempt(t.db, { paymentId: payment.id, attemptNumber: 1, operation: 'CANCEL', reason: 'why' })).resolves.toBeTruthy();
  });

  it('refuse TRUNCATE of what is kept (invariant 15): imported lines and imports, MRR movements, external refunds', async () => {
    for (const table of ['settlement_lines', 'settlement_imports', 'mrr_movements', 'external_refunds']) {
      await expect(t.db.$executeRawUnsafe(`TRUNCATE "${table}" CASCADE`), table).rejects.toThrow(/TRUNCATE|immutable/);
    }
    // Also when a truncation of the tables they belong to cascades to them.
    await expect(t.db.$executeRawUnsafe('TRUNCATE "subscriptions" CASCADE')).rejects.toThrow(/immutable/);
  });
});
