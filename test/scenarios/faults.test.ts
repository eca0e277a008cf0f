// Faults through the sandbox in one run of 500 subscriptions: timeouts after booking, 5xx (booked or not),
// malformed and truncated bodies, connection resets, answers for another amount, and declines. Whatever the
// gateway does, the ledger never shows two charges for one cycle and our database agrees with it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { buildTestApp, startTestApp } from '../helpers/app.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import { runPass, setClock, type PassReport } from '../helpers/billing.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';
import { SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox } from '../helpers/sandbox.ts';
import { freePort } from '../setup/global-setup.ts';
import { GATEWAY_TIMEOUT_MS } from '../setup/safety-nets.ts';

const DAY = 86_400_000;
const SUBSCRIPTIONS = 500;

let database: TestDatabase;
let app: App;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url, {
    // The suite's one gateway timeout for apps that hold calls until the client gives up: 1.5 s (as before) could be
    // outlasted by an answered call on a loaded machine, turning an expected decline into an UNKNOWN.
    env: { CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS), SCHEDULER_CONCURRENCY: '16', RETRY_DELAYS: '1d,3d,5d' },
  }));
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

const add = (a: PassReport, b: PassReport): PassReport => ({
  claimed: a.claimed + b.claimed,
  succeeded: a.succeeded + b.succeeded,
  declined: a.declined + b.declined,
  unknown: a.unknown + b.unknown,
  skipped: a.skipped + b.skipped,
});

describe('500 subscriptions through a faulty gateway', () => {
  it('never charge a cycle twice, and every SUCCEEDED and DECLINED in our database matches the ledger', async () => {
    const due = new Date('2027-05-01T00:00:00Z');
    await setClock(app, due);
    await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), { count: SUBSCRIPTIONS, sandboxUrl: `${baseUrl}/sandbox`, dueAt: due });
    // Faults interleaved one by one, so concurrent calls meet different ones.
    const kinds = [
      // Held past the client's timeout: the client gives up, as on the real gateway.
      { kind: 'timeout', holdMs: 2 * GATEWAY_TIMEOUT_MS },
      { kind: 'http_500' },
      { kind: 'http_500', booked: true },
      { kind: 'malformed' },
      { kind: 'truncated' },
      { kind: 'reset' },
      { kind: 'mismatch' },
      { kind: 'decline', code: 'LIMIT_EXCEEDED' },
      { kind: 'decline', code: 'INSUFFICIENT_FUNDS' },
    ];
    for (let round = 0; round < 12; round += 1) {
      for (const spec of kinds) await sandboxFault(app, { operation: 'BILLING_CONFIRM', count: 1, ...spec });
    }
    const unknownFaults = 12 * 7;
    const declineFaults = 12 * 2;

    let total = await runPass(app);
    expect(total.claimed).toBe(SUBSCRIPTIONS);
    expect(total.declined).toBe(declineFaults);
    expect(total.unknown).toBeGreaterThanOrEqual(unknownFaults);
    // Declines are retried a day later, with new orderIds, and the gateway now approves them.
    await setClock(app, new Date(due.getTime() + DAY));
    const retries = await runPass(app);
    expect(retries).toMatchObject({ claimed: declineFaults, succeeded: declineFaults });
    total = add(total, retries);
    await setClock(app, new Date(due.getTime() + 6 * DAY));
    expect(await runPass(app)).toMatchObject({ claimed: 0 });

    const ledger = (await sandboxLedger(app)).filter((e) => e.type === 'CHARGE' && e.operation === 'BILLING_CONFIRM');
    // Never two charges for one (subscription, cycle): orderIds are S<subscription>-<cycle>-<attempt>.
    const perCycle = new Map<string, number>();
    for (const e of ledger) {
      const cycleKey = e.orderId!.split('-').slice(0, 2).join('-');
      perCycle.set(cycleKey, (perCycle.get(cycleKey) ?? 0) + 1);
    }
    expect([...perCycle.values()].every((n) => n === 1)).toBe(true);

    const attempts = await app.db.paymentAttempt.findMany({ where: { operation: 'BILLING_CONFIRM' }, include: { payment: true } });
    const ledgerByOrderId = new Map(ledger.map((e) => [e.orderId!, e]));
    for (const attempt of attempts) {
      const entry = ledgerByOrderId.get(attempt.orderId);
      if (attempt.status === 'SUCCEEDED') {
        expect(entry, `SUCCEEDED ${attempt.orderId} is in the ledger`).toBeDefined();
        expect(entry!.transactionId).toBe(attempt.transactionId);
        expect(entry!.amount).toBe(attempt.amount);
        expect(attempt.payment.status).toBe('SUCCEEDED');
      } else if (attempt.status === 'DECLINED') {
        expect(entry, `DECLINED ${attempt.orderId} is not in the ledger`).toBeUndefined();
      } else {
        expect(attempt.status).toBe('UNKNOWN');
        expect(attempt.payment.status).toBe('UNKNOWN');
      }
    }
    // Every charge the gateway booked is ours, as SUCCEEDED or UNKNOWN.
    const attemptsByOrderId = new Map(attempts.map((a) => [a.orderId, a]));
    for (const entry of ledger) expect(['SUCCEEDED', 'UNKNOWN']).toContain(attemptsByOrderId.get(entry.orderId!)?.status);

    // The pass reports agree with the database.
    const count = (status: string) => attempts.filter((a) => a.status === status).length;
    expect(total.succeeded).toBe(count('SUCCEEDED'));
    expect(total.declined).toBe(count('DECLINED'));
    expect(total.unknown).toBe(count('UNKNOWN'));
    expect(await app.db.subscription.count({ where: { needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' } })).toBe(count('UNKNOWN'));
    expect(count('SUCCEEDED') + count('UNKNOWN')).toBe(SUBSCRIPTIONS);
    // UNKNOWN payments were never sent a second time.
    expect(attempts.filter((a) => a.status === 'UNKNOWN').every((a) => a.payment.attemptCount === 1)).toBe(true);
  });
});

describe('a gateway that cannot be reached', () => {
  it('NOT_SENT: nothing charged, the same attempt and orderId are sent once the gateway is back', async () => {
    const sandbox = await startSandbox();
    const port = await freePort();
    const gatewayApp = await buildTestApp(database.url, {
      env: { PAYMENT_API_BASE_URL: `http://127.0.0.1:${port}`, PAYMENT_SECRET_KEY: SANDBOX_SECRET, PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT },
    });
    let proxy: net.Server | undefined;
    try {
      await truncateAll(gatewayApp.db);
      const [id] = await seedDueSubscriptions(gatewayApp.db, createKeyring(gatewayApp.config.encryptionKeys), {
        count: 1,
        sandboxUrl: sandbox.url,
        dueAt: new Date(Date.now() - 1000),
      });
      // Nothing listens on the port: connection refused, provably not sent.
      expect(await runPass(gatewayApp)).toEqual({ claimed: 1, succeeded: 0, declined: 0, unknown: 0, skipped: 1 });
      const payment = await gatewayApp.db.payment.findFirstOrThrow({ where: { subscriptionId: id }, include: { attempts: true } });
      expect(payment.status).toBe('PENDING');
      expect(payment.attempts.map((a) => a.status)).toEqual(['NOT_SENT']);
      expect(await sandbox.ledger()).toHaveLength(0);

      // The gateway is reachable again (a plain TCP relay to the sandbox on the same port).
      const target = new URL(sandbox.url);
      proxy = net.createServer((socket) => {
        const upstream = net.connect(Number(target.port), target.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      await new Promise<void>((resolve) => proxy!.listen(port, '127.0.0.1', resolve));
      expect(await runPass(gatewayApp)).toMatchObject({ claimed: 1, succeeded: 1 });
      const after = await gatewayApp.db.payment.findFirstOrThrow({ where: { subscriptionId: id }, include: { attempts: true } });
      expect(after.status).toBe('SUCCEEDED');
      expect(after.attempts).toHaveLength(1);
      expect(after.attempts[0]).toMatchObject({ status: 'SUCCEEDED', orderId: payment.attempts[0]!.orderId });
      expect((await sandbox.ledger()).map((e) => e.orderId)).toEqual([payment.attempts[0]!.orderId]);
    } finally {
      await gatewayApp.close();
      await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
      await sandbox.close();
    }
  });

  it('a pass charges each due subscription once: one left due (NOT_SENT) is not claimed again while the pass goes on', async () => {
    // One slot and one row per claim: every later claim happens after an earlier charge came back NOT_SENT, so only
    // the pass's list of what it left due keeps it from claiming that subscription again, and again.
    const sandbox = await startSandbox();
    const gatewayApp = await buildTestApp(database.url, {
      env: {
        PAYMENT_API_BASE_URL: `http://127.0.0.1:${await freePort()}`,
        PAYMENT_SECRET_KEY: SANDBOX_SECRET,
        PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT,
        SCHEDULER_CONCURRENCY: '1',
        SCHEDULER_BATCH_SIZE: '1',
      },
    });
    try {
      await truncateAll(gatewayApp.db);
      await seedDueSubscriptions(gatewayApp.db, createKeyring(gatewayApp.config.encryptionKeys), {
        count: 3,
        sandboxUrl: sandbox.url,
        dueAt: new Date(Date.now() - 1000),
      });
      expect(await runPass(gatewayApp)).toEqual({ claimed: 3, succeeded: 0, declined: 0, unknown: 0, skipped: 3 });
      expect(await gatewayApp.db.paymentAttempt.count({ where: { status: 'NOT_SENT' } })).toBe(3);
    } finally {
      await gatewayApp.close();
      await sandbox.close();
    }
  });
});
