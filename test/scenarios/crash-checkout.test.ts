// Issue #12 defect 6: a process killed mid-call left key issuance, order confirmation and refund attempts IN_FLIGHT
// forever (only billing charges were swept). The one sweeper turns every expired attempt UNKNOWN and raises what it
// belongs to: the registration and the order wait for an operator, the refund shows as unknown. Nothing is re-sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import { freePort } from '../setup/global-setup.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { run, waitUntilReady, type Running } from '../helpers/process.ts';
import { SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';

const API_KEY = 'crash_api_key_0123456789abcdef';
const ADMIN_TOKEN = 'crash_admin_token_0123456789abc';
const LEASE_MS = 2000;

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

async function startServer(): Promise<{ base: string; running: Running }> {
  const port = await freePort();
  const running = run('src/server.ts', {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    PAYMENT_API_BASE_URL: sandbox.url,
    PAYMENT_SECRET_KEY: SANDBOX_SECRET,
    PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT,
    PAYMENT_TIMEOUT_MS: '10000',
    API_KEYS: API_KEY,
    ADMIN_TOKENS: ADMIN_TOKEN,
    BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 6).toString('base64')}`,
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_LEASE_MS: String(LEASE_MS),
  });
  started.push(running);
  await waitUntilReady(port, running);
  return { base: `http://127.0.0.1:${port}`, running };
}

const api = (base: string, path: string, body?: unknown, token = API_KEY, key?: string) =>
  fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function checkout(base: string, path: '/api/v1/registrations' | '/api/v1/orders', terms: Record<string, unknown>) {
  const created = (await (await api(base, path, terms)).json()) as { id: string; window: Record<string, unknown> };
  const window = created.window;
  const approved = await sandbox.authorize({
    method: window.paymentsMethod as 'CARD',
    orderId: window.orderId as string,
    orderName: window.orderName as string,
    amount: window.amount as number,
    userId: (window.userId as string) ?? 'guest',
    successUrl: window.successUrl as string,
    failUrl: window.failUrl as string,
    issueKeyOnly: window.issueKeyOnly as boolean,
  });
  return { id: created.id, redirectUrl: approved.redirectUrl };
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a process killed during key issuance, an order confirmation and a refund', () => {
  it('leaves every attempt UNKNOWN after its lease, each owner raised, and sends nothing again', async () => {
    const first = await startServer();
    // A payment to refund later: an order confirmed normally.
    const paid = await checkout(first.base, '/api/v1/orders', { method: 'CARD', amount: 5000, orderName: 'Paid' });
    expect((await fetch(paid.redirectUrl, { headers: { accept: 'application/json' } })).status).toBe(200);
    const paidPayment = await db.payment.findFirstOrThrow({ where: { oneTimeOrderId: paid.id } });

    const registration = await checkout(first.base, '/api/v1/registrations', { userId: 'crash-reg', method: 'CARD', amount: 9900, orderName: 'Plan' });
    const order = await checkout(first.base, '/api/v1/orders', { method: 'CARD', amount: 7000, orderName: 'Once' });
    // Every call is held by the gateway until after the process is gone.
    await sandbox.fault({ operation: 'ANY', kind: 'latency', latencyMs: 3000, count: 3 });
    const calls = [
      fetch(registration.redirectUrl, { headers: { accept: 'application/json' } }).catch(() => undefined),
      fetch(order.redirectUrl, { headers: { accept: 'application/json' } }).catch(() => undefined),
      api(first.base, `/admin/payments/${paidPayment.id}/cancel`, { reason: 'refund' }, ADMIN_TOKEN, 'crash-refund').catch(() => undefined),
    ];
    await waitFor('three calls in flight', async () => (await db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })) === 3);
    first.running.child.kill('SIGKILL');
    await first.running.exit;
    await Promise.all(calls);
    expect((await db.paymentAttempt.findMany({ where: { status: 'IN_FLIGHT' } })).map((a) => a.operation).sort()).toEqual(['CANCEL', 'ISSUE_KEY', 'PAYMENT_CONFIRM']);

    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 3500));
    const ledgerBefore = await sandbox.ledger();
    const second = await startServer();
    expect((await (await api(second.base, '/admin/scheduler/run', {}, ADMIN_TOKEN)).json()) as object).toMatchObject({ claimed: 0 });

    expect(await db.paymentAttempt.count({ where: { status: 'IN_FLIGHT' } })).toBe(0);
    const attempts = await db.paymentAttempt.findMany({ where: { operation: { in: ['ISSUE_KEY', 'PAYMENT_CONFIRM', 'CANCEL'] }, status: 'UNKNOWN' } });
    expect(attempts.map((a) => a.operation).sort()).toEqual(['CANCEL', 'ISSUE_KEY', 'PAYMENT_CONFIRM']);
    expect((await (await api(second.base, `/api/v1/registrations/${registration.id}`)).json()) as object).toMatchObject({ status: 'NEEDS_ATTENTION' });
    expect((await (await api(second.base, `/api/v1/orders/${order.id}`)).json()) as object).toMatchObject({ status: 'NEEDS_ATTENTION' });
    expect((await (await api(second.base, `/admin/payments/${paidPayment.id}`, undefined, ADMIN_TOKEN)).json()) as object).toMatchObject({ status: 'SUCCEEDED', refundOutcomeUnknown: true });
    const listed = ((await (await api(second.base, '/admin/payments?needsAttention=true', undefined, ADMIN_TOKEN)).json()) as { items: Array<{ id: string }> }).items;
    expect(listed).toHaveLength(3);
    // The sweep sent nothing.
    expect(await sandbox.ledger()).toEqual(ledgerBefore);
  }, 90_000);
});
