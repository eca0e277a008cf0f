// Replicas: three app processes, one database, one sandbox gateway. Each runs a charging pass at the same moment
// over 2,000 due subscriptions; leases and SKIP LOCKED must give every subscription to exactly one of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import { createKeyring } from '../../src/lib/crypto.ts';
import { parseEncryptionKeys } from '../../src/config.ts';
import { freePort } from '../setup/global-setup.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { run, waitUntilReady, type Running } from '../helpers/process.ts';
import { SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';
import { seedDueSubscriptions } from '../helpers/bulk.ts';

const ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 9).toString('base64')}`;
const ADMIN_TOKEN = 'replica_admin_token_0123456789';
const SUBSCRIPTIONS = 2000;

let database: TestDatabase;
let db: Db;
let sandbox: RunningSandbox;
const replicas: Array<{ port: number; running: Running }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
  sandbox = await startSandbox();
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url,
    PAYMENT_API_BASE_URL: sandbox.url,
    PAYMENT_SECRET_KEY: SANDBOX_SECRET,
    PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT,
    API_KEYS: 'replica_api_key_0123456789abcdef',
    ADMIN_TOKENS: ADMIN_TOKEN,
    BILLING_KEY_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_BATCH_SIZE: '50',
    SCHEDULER_CONCURRENCY: '8',
  };
  for (let i = 0; i < 3; i += 1) {
    const port = await freePort();
    replicas.push({ port, running: run('src/server.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }) });
  }
  await Promise.all(replicas.map((r) => waitUntilReady(r.port, r.running)));
});

afterAll(async () => {
  for (const r of replicas) r.running.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.running.exit));
  await db?.$disconnect();
  await sandbox?.close();
  await database?.drop();
});

describe('three replicas', () => {
  it('drain 2,000 due subscriptions at once: exactly 2,000 charges, each subscription once', async () => {
    const ids = await seedDueSubscriptions(db, createKeyring(parseEncryptionKeys(ENCRYPTION_KEYS)), {
      count: SUBSCRIPTIONS,
      sandboxUrl: sandbox.url,
      dueAt: new Date(Date.now() - 60_000),
    });

    const reports = await Promise.all(
      replicas.map(async (r) => {
        const response = await fetch(`http://127.0.0.1:${r.port}/admin/scheduler/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(response.status).toBe(200);
        return (await response.json()) as { claimed: number; succeeded: number; declined: number; unknown: number; skipped: number };
      }),
    );
    const total = reports.reduce((sum, r) => ({
      claimed: sum.claimed + r.claimed,
      succeeded: sum.succeeded + r.succeeded,
      declined: sum.declined + r.declined,
      unknown: sum.unknown + r.unknown,
      skipped: sum.skipped + r.skipped,
    }));
    expect(total).toEqual({ claimed: SUBSCRIPTIONS, succeeded: SUBSCRIPTIONS, declined: 0, unknown: 0, skipped: 0 });
    // Every replica took part (passes start together and claim in batches of 50).
    expect(reports.filter((r) => r.claimed > 0).length).toBeGreaterThanOrEqual(2);

    const ledger = (await sandbox.ledger()).filter((e) => e.type === 'CHARGE');
    expect(ledger).toHaveLength(SUBSCRIPTIONS);
    const chargedSubscriptions = new Set(ledger.map((e) => e.orderId!.split('-')[0]));
    expect(chargedSubscriptions.size).toBe(SUBSCRIPTIONS);
    expect(chargedSubscriptions).toEqual(new Set(ids.map((id) => `S${id.replace(/-/g, '')}`)));

    const payments = await db.payment.findMany({ where: { kind: 'RECURRING' }, select: { status: true, transactionId: true, subscriptionId: true } });
    expect(payments).toHaveLength(SUBSCRIPTIONS);
    expect(payments.every((p) => p.status === 'SUCCEEDED')).toBe(true);
    expect(new Set(payments.map((p) => p.transactionId))).toEqual(new Set(ledger.map((e) => e.transactionId)));
    expect(await db.subscription.count({ where: { cycle: 2, leaseOwner: null, needsAttention: false } })).toBe(SUBSCRIPTIONS);

    // Another round on every replica finds nothing due.
    const again = await Promise.all(
      replicas.map(
        async (r) =>
          (await (
            await fetch(`http://127.0.0.1:${r.port}/admin/scheduler/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
          ).json()) as { claimed: number },
      ),
    );
    expect(again.map((r) => r.claimed)).toEqual([0, 0, 0]);
    expect((await sandbox.ledger()).filter((e) => e.type === 'CHARGE')).toHaveLength(SUBSCRIPTIONS);
  });
});
