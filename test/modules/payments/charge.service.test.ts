// The charging engine's edges that whole-month scenarios do not reach: the sweep of dead attempts, a stale
// worker whose lease was taken over, and a graceful stop in the middle of a pass.
import { describe, expect, it, vi } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { createPrismaClient, useRunningApp } from '../../helpers/database.ts';
import { startTestApp } from '../../helpers/app.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { runPass } from '../../helpers/billing.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { waitFor } from '../../helpers/service.ts';
import { createAttempt, createPayment } from '../../factories/index.ts';
import { chargeOrderId } from '../../../src/modules/payments/charge.service.ts';

const running = useRunningApp({ SCHEDULER_CONCURRENCY: '2', SCHEDULER_BATCH_SIZE: '10' });

const seed = (count: number) =>
  seedDueSubscriptions(running.app.db, createKeyring(running.app.config.encryptionKeys), {
    count,
    sandboxUrl: `${running.baseUrl}/sandbox`,
    dueAt: new Date(Date.now() - 60_000),
  });

describe('sweep of attempts left in flight', () => {
  it('turns an expired IN_FLIGHT charge into UNKNOWN, raises the subscription, and sends nothing', async () => {
    const [id] = await seed(1);
    const payment = await createPayment(running.app.db, { subscriptionId: id, cycle: 1, dueAt: new Date(), orderId: chargeOrderId(id!, 1, 1) });
    await createAttempt(running.app.db, {
      paymentId: payment.id,
      orderId: chargeOrderId(id!, 1, 1),
      leaseOwner: 'dead-process',
      leaseExpiresAt: new Date(Date.now() - 1000),
    });
    expect(await runPass(running.app)).toEqual({ claimed: 0, succeeded: 0, declined: 0, unknown: 0, skipped: 0 });
    const after = await running.app.db.payment.findUniqueOrThrow({ where: { id: payment.id }, include: { attempts: true, subscription: true } });
    expect(after.status).toBe('UNKNOWN');
    expect(after.attempts.map((a) => a.status)).toEqual(['UNKNOWN']);
    expect(after.subscription).toMatchObject({ needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect(await sandboxLedger(running.app)).toHaveLength(0);
  });

  it('leaves an IN_FLIGHT attempt whose lease is still live alone', async () => {
    const [id] = await seed(1);
    await running.app.db.subscription.update({ where: { id }, data: { leaseOwner: 'live-process', leaseExpiresAt: new Date(Date.now() + 60_000) } });
    const payment = await createPayment(running.app.db, { subscriptionId: id, cycle: 1, dueAt: new Date(), orderId: chargeOrderId(id!, 1, 1) });
    await createAttempt(running.app.db, {
      paymentId: payment.id,
      orderId: chargeOrderId(id!, 1, 1),
      leaseOwner: 'live-process',
      leaseExpiresAt: new Date(Date.now() + 60_000),
    });
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect((await running.app.db.paymentAttempt.findFirstOrThrow({ where: { paymentId: payment.id } })).status).toBe('IN_FLIGHT');
  });
});

describe('fencing', () => {
  it('a worker whose lease was taken over records nothing; its attempt stays IN_FLIGHT for the sweep', async () => {
    const [id] = await seed(1);
    // The call is held at the sandbox until the lease is taken over, however loaded the machine.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const pass = runPass(running.app);
    await sandboxHeld(running.app);
    expect(await running.app.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })).toBe(1);
    // Another replica's claim, as if our lease had expired.
    await running.app.db.subscription.update({ where: { id }, data: { leaseOwner: 'other-replica' } });
    await sandboxRelease(running.app);
    expect(await pass).toEqual({ claimed: 1, succeeded: 0, declined: 0, unknown: 1, skipped: 0 });
    const payment = await running.app.db.payment.findFirstOrThrow({ where: { subscriptionId: id }, include: { attempts: true } });
    expect(payment.status).toBe('PENDING');
    expect(payment.attempts.map((a) => a.status)).toEqual(['IN_FLIGHT']);
    const sub = await running.app.db.subscription.findUniqueOrThrow({ where: { id } });
    expect(sub).toMatchObject({ cycle: 1, leaseOwner: 'other-replica', lastTransactionId: null });
    expect(await sandboxLedger(running.app)).toHaveLength(1);
  });
});

describe('between the claim and the charge', () => {
  it('a change made after the claim read the subscription is charged as changed (the one-statement prepare sees it and steps aside)', async () => {
    const ids = await seed(5);
    // The first two calls are held at the sandbox, keeping both slots busy until the change below is made.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
    const pass = runPass(running.app);
    // Two slots busy at the gateway and two charges prepared ahead (a slot's worth, C = 2): the fifth subscription is
    // claimed (leased, read) and waits to be prepared: the one whose cycle has no payment yet.
    await sandboxHeld(running.app, 2);
    await waitFor(
      'four charges prepared',
      async () => (await running.app.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT', payment: { subscriptionId: { in: ids } } } })) === 4,
    );
    const subscriptions = await running.app.db.subscription.findMany({ where: { id: { in: ids } }, include: { payments: true } });
    const waiting = subscriptions.filter((sub) => !sub.payments.some((p) => p.cycle === sub.cycle));
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.leaseOwner).not.toBeNull();
    // An operator lowers its price meanwhile (a decrease needs no consent).
    await running.app.db.subscription.update({ where: { id: waiting[0]!.id }, data: { amount: 4_321 } });
    expect(await sandboxRelease(running.app)).toBe(2);
    expect(await pass).toMatchObject({ claimed: 5, succeeded: 5 });
    const payment = await running.app.db.payment.findFirstOrThrow({ where: { subscriptionId: waiting[0]!.id, cycle: waiting[0]!.cycle } });
    expect(payment.amount).toBe(4_321);
    const ledger = await sandboxLedger(running.app);
    expect(ledger.filter((entry) => entry.orderId === payment.orderId).map((entry) => entry.amount)).toEqual([4_321]);
  });
});

describe('graceful stop', () => {
  it('stops claiming, lets calls in flight finish and records them, records what it prepared and did not send NOT_SENT, and releases what it had not prepared', async () => {
    const { app: stopping } = await startTestApp(running.databaseUrl, { env: { SCHEDULER_CONCURRENCY: '2', SCHEDULER_BATCH_SIZE: '10' } });
    await seedDueSubscriptions(stopping.db, createKeyring(stopping.config.encryptionKeys), {
      count: 6,
      sandboxUrl: `http://127.0.0.1:${(stopping.server.address() as { port: number }).port}/sandbox`,
      dueAt: new Date(Date.now() - 60_000),
    });
    // The two calls at the gateway are held at the sandbox until close has asked the pass to stop.
    await sandboxFault(stopping, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
    const pass = stopping.charges.runPass();
    // Two calls at the gateway (C = 2) and two charges prepared ahead, waiting for a slot; two claimed, not prepared.
    await sandboxHeld(stopping, 2);
    await waitFor('four charges prepared', async () => (await stopping.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) === 4);
    expect(await stopping.db.payment.count({ where: { status: 'SUCCEEDED' } })).toBe(0);
    // Close drains the pass (preClose) before the database closes; the rows are read through a fresh client after.
    // The spy only watches (it calls through): once close has called stop(), the pass stops claiming and sending,
    // and the held calls may finish.
    const stop = vi.spyOn(stopping.charges, 'stop');
    const closing = stopping.close();
    await waitFor('close asked the pass to stop', async () => stop.mock.calls.length > 0);
    // Released through the mounted sandbox's state: the closing app's own port no longer answers.
    expect(stopping.sandbox!.release()).toBe(2);
    await closing;
    const counts = await pass;
    expect(counts).toEqual({ claimed: 6, succeeded: 2, declined: 0, unknown: 0, skipped: 4 });
    const reader = createPrismaClient(running.databaseUrl);
    try {
      expect(await reader.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })).toBe(0);
      expect(await reader.payment.count({ where: { status: 'SUCCEEDED', kind: 'RECURRING' } })).toBe(2);
      // The two prepared and never sent: NOT_SENT, never marked sent, their payments PENDING (sent again as themselves).
      const notSent = await reader.paymentAttempt.findMany({ where: { status: 'NOT_SENT' }, include: { payment: true } });
      expect(notSent.map((a) => [a.sentAt, a.payment.status])).toEqual([
        [null, 'PENDING'],
        [null, 'PENDING'],
      ]);
      expect(await reader.subscription.count({ where: { leaseOwner: { not: null } } })).toBe(0);
      expect(await reader.subscription.count({ where: { cycle: 1 } })).toBe(4);
    } finally {
      await reader.$disconnect();
    }
  });
});
