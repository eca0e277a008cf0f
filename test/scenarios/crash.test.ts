// Crash: a process is killed with SIGKILL while its gateway calls are in flight (the sandbox holds them, then
// books them: money moved, the answer lost). After a restart no subscription is charged twice, every charge in
// the ledger is in our database as SUCCEEDED or UNKNOWN, and no UNKNOWN is sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { parseEncryptionKeys } from '../../src/config.ts';
import { freePort } from '../setup/global-setup.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { run, waitUntilReady, type Running } from '../helpers/process.ts';
import { SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';

const ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 5).toString('base64')}`;
const ADMIN_TOKEN = 'crash_admin_token_0123456789abc';
const SUBSCRIPTIONS = 60;
const CONCURRENCY = 8;
const LEASE_MS = 3000;

let database: TestDatabase;
let db: Db;
let sandbox: RunningSandbox;
const started: Running[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
  sandbox = await startSandbox();
});

afterAll(async () => {
  for (const r of started) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
  await Promise.all(started.map((r) => r.exit));
  await db?.$disconnect();
  await sandbox?.close();
  await database?.drop();
});

async function startReplica(): Promise<{ port: number; running: Running }> {
  const port = await freePort();
  const running = run('src/server.ts', {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: database.url,
    PAYMENT_API_BASE_URL: sandbox.url,
    PAYMENT_SECRET_KEY: SANDBOX_SECRET,
    PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT,
    PAYMENT_TIMEOUT_MS: '10000',
    API_KEYS: 'crash_api_key_0123456789abcdef',
    ADMIN_TOKENS: ADMIN_TOKEN,
    BILLING_KEY_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_CONCURRENCY: String(CONCURRENCY),
    SCHEDULER_LEASE_MS: String(LEASE_MS),
  });
  started.push(running);
  await waitUntilReady(port, running);
  return { port, running };
}

const runPass = (port: number) => fetch(`http://127.0.0.1:${port}/admin/scheduler/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a replica killed mid-call', () => {
  it('leaves nothing charged twice and nothing unrecorded, and its UNKNOWNs are never re-sent', async () => {
    await seedDueSubscriptions(db, createKeyring(parseEncryptionKeys(ENCRYPTION_KEYS)), {
      count: SUBSCRIPTIONS,
      sandboxUrl: sandbox.url,
      dueAt: new Date(Date.now() - 60_000),
    });
    // Every charge is held 2.5 s, then booked: the first calls are in flight when the process dies.
    await sandbox.fault({ operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs: 2500, count: SUBSCRIPTIONS });

    const first = await startReplica();
    const pass = runPass(first.port).catch(() => undefined); // the connection dies with the process
    // Killed once CONCURRENCY calls have reached the sandbox (each took one use of the fault): no further call can
    // start while those are held, so every attempt in flight at the kill was received. An attempt written but not
    // yet sent would be UNKNOWN too, but never booked, and this test counts bookings.
    const received = async () => SUBSCRIPTIONS - ((await (await fetch(`${sandbox.url}/_control/faults`)).json()) as { faults: Array<{ count: number }> }).faults.reduce((n, f) => n + f.count, 0);
    await waitFor('calls in flight', async () => (await db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) >= CONCURRENCY && (await received()) >= CONCURRENCY);
    first.running.child.kill('SIGKILL');
    await first.running.exit;
    await pass;
    const inFlightAtKill = await db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } });
    expect(inFlightAtKill).toBeGreaterThanOrEqual(CONCURRENCY);
    expect(await received()).toBe(inFlightAtKill);
    expect(await db.paymentAttempt.count({ where: { status: { not: 'IN_FLIGHT' } } })).toBe(0);

    // The sandbox books the held calls after the process is gone.
    await waitFor('held calls booked', async () => (await sandbox.ledger()).length >= inFlightAtKill);
    await fetch(`${sandbox.url}/_control/faults`, { method: 'DELETE' });
    // Leases (and the attempts' leases) expire; a restarted replica takes over.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));

    const second = await startReplica();
    const report = (await (await runPass(second.port)).json()) as { claimed: number; succeeded: number; unknown: number; declined: number; skipped: number };
    expect(report).toEqual({ claimed: SUBSCRIPTIONS - inFlightAtKill, succeeded: SUBSCRIPTIONS - inFlightAtKill, declined: 0, unknown: 0, skipped: 0 });
    expect((await (await runPass(second.port)).json()) as object).toMatchObject({ claimed: 0 });

    const ledger = (await sandbox.ledger()).filter((e) => e.type === 'CHARGE');
    expect(ledger).toHaveLength(SUBSCRIPTIONS);
    // No subscription charged twice.
    expect(new Set(ledger.map((e) => e.orderId!.split('-')[0])).size).toBe(SUBSCRIPTIONS);
    // Every ledger charge is in our database, as SUCCEEDED (with the same transaction) or UNKNOWN.
    const attempts = await db.paymentAttempt.findMany({ where: { operation: 'BILLING_CONFIRM' }, include: { payment: true } });
    const byOrderId = new Map(attempts.map((a) => [a.orderId, a]));
    for (const entry of ledger) {
      const attempt = byOrderId.get(entry.orderId!);
      expect(attempt, entry.orderId).toBeDefined();
      expect(['SUCCEEDED', 'UNKNOWN']).toContain(attempt!.status);
      if (attempt!.status === 'SUCCEEDED') expect(attempt!.transactionId).toBe(entry.transactionId);
    }
    // The killed calls are UNKNOWN, their subscriptions wait for an operator, and nothing was sent again.
    const unknown = attempts.filter((a) => a.status === 'UNKNOWN');
    expect(unknown).toHaveLength(inFlightAtKill);
    for (const attempt of unknown) {
      expect(attempt.payment.status).toBe('UNKNOWN');
      expect(attempt.payment.attemptCount).toBe(1);
      const sub = await db.subscription.findUniqueOrThrow({ where: { id: attempt.payment.subscriptionId! } });
      expect(sub).toMatchObject({ needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN', cycle: 1 });
    }
    expect(attempts).toHaveLength(SUBSCRIPTIONS);
  }, 180_000);
});
