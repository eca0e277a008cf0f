// Crash: a process is killed with SIGKILL while its gateway calls are in flight (the sandbox holds them, then
// books them: money moved, the answer lost). After a restart no subscription is charged twice, every charge in
// the ledger is in our database as SUCCEEDED or UNKNOWN, and no UNKNOWN is sent again.
import { describe, expect, it } from 'vitest';
import { createKeyring } from '../../src/lib/crypto.ts';
import { parseEncryptionKeys } from '../../src/config.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';
import { leasesExpired, SERVICE_ADMIN_TOKEN, SERVICE_ENCRYPTION_KEYS, useServiceAgainstSandbox, waitFor } from '../helpers/service.ts';

const SUBSCRIPTIONS = 60;
const CONCURRENCY = 8;
const LEASE_MS = 3000;

const service = useServiceAgainstSandbox();
const startReplica = () => service.start({ SCHEDULER_CONCURRENCY: String(CONCURRENCY), SCHEDULER_LEASE_MS: String(LEASE_MS) });
const runPass = (port: number) =>
  fetch(`http://127.0.0.1:${port}/admin/scheduler/run`, { method: 'POST', headers: { authorization: `Bearer ${SERVICE_ADMIN_TOKEN}` } });

describe('a replica killed mid-call', () => {
  it('leaves nothing charged twice and nothing unrecorded, and its UNKNOWNs are never re-sent', async () => {
    await seedDueSubscriptions(service.db, createKeyring(parseEncryptionKeys(SERVICE_ENCRYPTION_KEYS)), {
      count: SUBSCRIPTIONS,
      sandboxUrl: service.sandbox.url,
      dueAt: new Date(Date.now() - 60_000),
    });
    // Every charge is held until the test releases it, then booked: the first calls are in flight when the process dies.
    await service.sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released', count: SUBSCRIPTIONS });

    const first = await startReplica();
    const pass = runPass(first.port).catch(() => undefined); // the connection dies with the process
    // Killed once CONCURRENCY calls have reached the sandbox (each took one use of the fault): no further call can
    // start while those are held. The engine prepares up to a slot's worth of charges ahead (charge.pipeline.ts), so
    // up to CONCURRENCY more attempts are written and not sent at the kill: they become UNKNOWN too (nobody can know
    // they were not sent), but are never booked.
    const received = async () =>
      SUBSCRIPTIONS -
      ((await (await fetch(`${service.sandbox.url}/_control/faults`)).json()) as { faults: Array<{ count: number }> }).faults.reduce((n, f) => n + f.count, 0);
    await waitFor(
      'calls in flight',
      async () => (await service.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) >= CONCURRENCY && (await received()) >= CONCURRENCY,
    );
    await first.kill();
    await pass;
    const inFlightAtKill = await service.db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } });
    expect(inFlightAtKill).toBeGreaterThanOrEqual(CONCURRENCY);
    const sent = await received();
    expect(sent).toBe(CONCURRENCY);
    const notSent = inFlightAtKill - sent;
    expect(notSent).toBeLessThanOrEqual(CONCURRENCY);
    expect(await service.db.paymentAttempt.count({ where: { status: { not: 'IN_FLIGHT' } } })).toBe(0);

    // The sandbox books the held calls after the process is gone.
    expect(await service.sandbox.release()).toBe(sent);
    await waitFor('held calls booked', async () => (await service.sandbox.ledger()).length >= sent);
    await fetch(`${service.sandbox.url}/_control/faults`, { method: 'DELETE' });
    // Leases (and the attempts' leases) expire; a restarted replica takes over.
    await waitFor('every lease expired', () => leasesExpired(service.db));

    const second = await startReplica();
    const report = (await (await runPass(second.port)).json()) as { claimed: number; succeeded: number; unknown: number; declined: number; skipped: number };
    expect(report).toEqual({ claimed: SUBSCRIPTIONS - inFlightAtKill, succeeded: SUBSCRIPTIONS - inFlightAtKill, declined: 0, unknown: 0, skipped: 0 });
    expect((await (await runPass(second.port)).json()) as object).toMatchObject({ claimed: 0 });

    const ledger = (await service.sandbox.ledger()).filter((e) => e.type === 'CHARGE');
    expect(ledger).toHaveLength(SUBSCRIPTIONS - notSent);
    // No subscription charged twice.
    expect(new Set(ledger.map((e) => e.orderId!.split('-')[0])).size).toBe(SUBSCRIPTIONS - notSent);
    // Every ledger charge is in our database, as SUCCEEDED (with the same transaction) or UNKNOWN.
    const attempts = await service.db.paymentAttempt.findMany({ where: { operation: 'BILLING_CONFIRM' }, include: { payment: true } });
    const byOrderId = new Map(attempts.map((a) => [a.orderId, a]));
    for (const entry of ledger) {
      const attempt = byOrderId.get(entry.orderId!);
      expect(attempt, entry.orderId).toBeDefined();
      expect(['SUCCEEDED', 'UNKNOWN']).toContain(attempt!.status);
      if (attempt!.status === 'SUCCEEDED') expect(attempt!.transactionId).toBe(entry.transactionId);
    }
    // The killed calls, and the charges prepared and not sent, are UNKNOWN, their subscriptions wait for an operator,
    // and nothing was sent again.
    const unknown = attempts.filter((a) => a.status === 'UNKNOWN');
    expect(unknown).toHaveLength(inFlightAtKill);
    const booked = new Set(ledger.map((e) => e.orderId));
    expect(unknown.filter((a) => !booked.has(a.orderId))).toHaveLength(notSent);
    for (const attempt of unknown) {
      expect(attempt.payment.status).toBe('UNKNOWN');
      expect(attempt.payment.attemptCount).toBe(1);
      const sub = await service.db.subscription.findUniqueOrThrow({ where: { id: attempt.payment.subscriptionId! } });
      expect(sub).toMatchObject({ needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN', cycle: 1 });
    }
    expect(attempts).toHaveLength(SUBSCRIPTIONS);
  });
});
