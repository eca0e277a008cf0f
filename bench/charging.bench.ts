// npm run bench: throughput of one charging pass (claim → write-before-call → gateway → fenced record) against a
// real PostgreSQL (embedded, in a temporary directory) and the sandbox gateway over HTTP, at several
// SCHEDULER_CONCURRENCY values, with and without a simulated network delay on each gateway call.
// Figures depend on the machine; compare the ratios, and the conditions printed with them.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../test/helpers/bulk.ts';
import { freePort } from '../test/setup/global-setup.ts';

const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? '1,4,16').split(',').map(Number);
const LATENCIES_MS = (process.env.BENCH_LATENCY_MS ?? '0,20').split(',').map(Number);
const EVENT_TRIGGERS = ['subscriptions', 'payments', 'registrations', 'orders'];
const TABLES = ['webhook_deliveries', 'events', 'audit_events', 'idempotency_records', 'payment_attempts', 'payments', 'subscriptions', 'billing_keys', 'orders', 'registrations'];

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    console.log(`charging pass: ${SUBSCRIPTIONS} due CARD subscriptions per run; node ${process.version}; ${os.cpus().length} CPUs; embedded PostgreSQL with default durability`);
    console.log('latency/call  concurrency  seconds  charges/s  vs concurrency 1');
    for (const latency of LATENCIES_MS) {
      let baseline: number | undefined;
      for (const concurrency of CONCURRENCY) {
        const rate = await measure(embedded.adminConnectionString, concurrency, latency, log);
        baseline ??= rate.perSecond;
        console.log(
          `${String(latency).padStart(10)}ms  ${String(concurrency).padStart(11)}  ${rate.seconds.toFixed(2).padStart(7)}  ${rate.perSecond.toFixed(0).padStart(9)}  ${(rate.perSecond / baseline).toFixed(2).padStart(8)}×`,
        );
      }
    }
    // Issue #13's budget: the outbox trigger may cost the L = 0 drain at most 10%. Alternating runs with the
    // triggers disabled (events off) and enabled, best of three each, at the highest concurrency.
    const c = Math.max(...CONCURRENCY);
    const best = { off: 0, on: 0 };
    for (let round = 0; round < 3; round += 1) {
      for (const events of [false, true]) {
        const rate = await measure(embedded.adminConnectionString, c, 0, log, events);
        best[events ? 'on' : 'off'] = Math.max(best[events ? 'on' : 'off'], rate.perSecond);
      }
    }
    console.log(`events (L=0, C=${c}, best of 3): ${best.off.toFixed(0)} charges/s with the outbox triggers disabled, ${best.on.toFixed(0)} with them: ${(best.on / best.off).toFixed(2)}× (budget ≥ 0.90×)`);
  } finally {
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function measure(databaseUrl: string, concurrency: number, latencyMs: number, log: pino.Logger, events = true) {
  const port = await freePort();
  const config = await loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    API_KEYS: 'bench_api_key_0123456789abcdef',
    ADMIN_TOKENS: 'bench_admin_token_0123456789abcdef',
    BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
    PAYMENT_SECRET_KEY: 'bench_secret_key',
    PAYMENT_MERCHANT_ID: 'BENCH',
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'error',
  });
  config.webhooks.enabled = process.env.BENCH_DISPATCHER === '1'; // the outbox's write cost alone unless asked
  const app: App = await buildApp(config, { logger: log });
  await app.listen({ host: '127.0.0.1', port });
  try {
    await app.db.$executeRawUnsafe(`TRUNCATE ${TABLES.map((t) => `"${t}"`).join(', ')} CASCADE`);
    for (const table of EVENT_TRIGGERS) await app.db.$executeRawUnsafe(`ALTER TABLE "${table}" ${events ? 'ENABLE' : 'DISABLE'} TRIGGER "${table}_merchant_events"`);
    for (const table of EVENT_TRIGGERS) await app.db.$executeRawUnsafe(`ALTER TABLE "${table}" ${events ? 'ENABLE' : 'DISABLE'} TRIGGER "${table}_merchant_events_insert"`);
    await seedDueSubscriptions(app.db, createKeyring(config.encryptionKeys), { count: SUBSCRIPTIONS, sandboxUrl: `${config.publicBaseUrl}/sandbox`, dueAt: new Date(Date.now() - 60_000) });
    if (latencyMs > 0) app.sandbox!.addFault({ operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs, count: SUBSCRIPTIONS });
    const started = process.hrtime.bigint();
    const report = await app.charges.runPass();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (report.succeeded !== SUBSCRIPTIONS) throw new Error(`expected ${SUBSCRIPTIONS} charges, got ${JSON.stringify(report)}`);
    return { seconds, perSecond: SUBSCRIPTIONS / seconds };
  } finally {
    await app.close();
  }
}

await main();
