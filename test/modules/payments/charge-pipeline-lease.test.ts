// The charging pipeline never sends a prepared charge whose lease has no room left for the call (docs/architecture.md, invariants
// 4, 5): a charge prepared ahead waits for a free slot, and if its lease ran out meanwhile a sweep may already have
// made its attempt UNKNOWN; sending it then could charge twice once an operator resolves it FAILED and a retry runs.
import { expect, it } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import type { SimulatedClock } from '../../../src/lib/clock.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { waitFor } from '../../helpers/service.ts';

const running = useRunningApp({ CLOCK: 'simulated', SCHEDULER_CONCURRENCY: '2', SCHEDULER_BATCH_SIZE: '10' });

it('a prepared charge whose lease ran out while it waited for a slot is not sent, and the sweep’s UNKNOWN stands', async () => {
  const { app } = running;
  const clock = app.clock as SimulatedClock;
  clock.set(new Date());
  await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
    count: 4,
    sandboxUrl: `${running.baseUrl}/sandbox`,
    dueAt: new Date(clock.now().getTime() - 60_000),
  });
  // Two slots: two calls held at the gateway (until released), two more charges prepared and waiting for a slot.
  // Only those two are held: a third call sent would go through and show in the ledger.
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
  const pass = app.charges.runPass();
  await sandboxHeld(app, 2);
  await waitFor('four charges prepared', async () => (await app.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) === 4);
  // Every lease runs out (a stalled process would see the same in real time) and a sweep makes every attempt UNKNOWN.
  clock.set(new Date(clock.now().getTime() + app.config.scheduler.leaseMs + 60_000));
  expect(await app.charges.sweepExpiredAttempts(clock.now())).toBe(4);
  expect(await sandboxRelease(app)).toBe(2);
  const report = await pass;

  const sent = (await sandboxLedger(app)).filter((entry) => entry.type === 'CHARGE').map((entry) => entry.orderId);
  // Only the two calls already out when the leases ran out reached the gateway.
  expect(sent).toHaveLength(2);
  const attempts = await app.db.paymentAttempt.findMany({ select: { orderId: true, status: true } });
  expect(attempts.map((a) => a.status).sort()).toEqual(['UNKNOWN', 'UNKNOWN', 'UNKNOWN', 'UNKNOWN']);
  // Nothing was sent for the other two after their attempts became UNKNOWN.
  const notSent = attempts.filter((a) => !sent.includes(a.orderId));
  expect(notSent).toHaveLength(2);
  expect(report).toMatchObject({ claimed: 4, succeeded: 0, declined: 0 });
  const subscriptions = await app.db.subscription.findMany({ select: { needsAttention: true } });
  expect(subscriptions.every((s) => s.needsAttention)).toBe(true);
});

it('a prepared charge whose lease is too short for the call is recorded NOT_SENT under its lease and sent by the next pass', async () => {
  const { app } = running;
  const clock = app.clock as SimulatedClock;
  clock.set(new Date());
  await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
    count: 4,
    sandboxUrl: `${running.baseUrl}/sandbox`,
    dueAt: new Date(clock.now().getTime() - 60_000),
  });
  // Two calls held at the gateway until the clock has moved; two more charges prepared and waiting for a slot.
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: 2 });
  const pass = app.charges.runPass();
  await sandboxHeld(app, 2);
  await waitFor('four charges prepared', async () => (await app.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) === 4);
  // The leases have not run out, but what is left is shorter than a call may take: no sweep, nothing lost.
  clock.set(new Date(clock.now().getTime() + app.config.scheduler.leaseMs - app.config.gateway.timeoutMs));
  expect(await sandboxRelease(app)).toBe(2);
  const report = await pass;
  expect(report).toMatchObject({ claimed: 4, succeeded: 2, skipped: 2 });
  expect((await sandboxLedger(app)).filter((entry) => entry.type === 'CHARGE')).toHaveLength(2);
  const waiting = await app.db.paymentAttempt.findMany({ where: { status: { not: 'SUCCEEDED' } }, select: { status: true, sentAt: true, leaseOwner: true } });
  expect(waiting).toEqual([
    { status: 'NOT_SENT', sentAt: null, leaseOwner: null },
    { status: 'NOT_SENT', sentAt: null, leaseOwner: null },
  ]);
  // Sent again as themselves (same attempt, same orderId) by the next pass.
  expect(await app.charges.runPass()).toMatchObject({ claimed: 2, succeeded: 2 });
  expect((await sandboxLedger(app)).filter((entry) => entry.type === 'CHARGE')).toHaveLength(4);
  expect(await app.db.paymentAttempt.count()).toBe(4);
});
