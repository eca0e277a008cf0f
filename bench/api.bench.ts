// npm run bench (part 3): the API under load (issue #15, target 5). Seeds 100,000 subscriptions with 1,000,000
// payments and 100,000 events (BENCH_LARGE=1; a tenth by default) (in SQL, with the event triggers off while seeding), starts src/server.ts in a
// process of its own, and drives each route with autocannon at 50 connections, next to a bare Fastify hello route
// measured in the same run. Prints p99 latency and requests/s (and the ratio to hello) with the targets.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createPrismaClient } from '../src/db/prisma.ts';
import { encodeCursor } from '../src/lib/pagination.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { serviceNodeFlags, writeResults } from './charging.bench.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The target's sizes (100,000 subscriptions, 1,000,000 payments) with BENCH_LARGE=1; a tenth by default.
const SUBSCRIPTIONS = Number(process.env.BENCH_API_SUBSCRIPTIONS ?? (process.env.BENCH_LARGE === '1' ? 100_000 : 10_000));
const PAYMENTS_EACH = 10;
const DURATION = Number(process.env.BENCH_API_SECONDS ?? 5);
const API_KEY = 'bench_api_key_0123456789abcdef';
const HELLO = `
const fastify = require('fastify')();
fastify.get('/hello', async () => ({ hello: 'world' }));
fastify.listen({ host: '127.0.0.1', port: Number(process.env.PORT) }).then(() => process.send('ready'));
`;

async function waitReady(url: string) {
  for (let i = 0; i < 300; i += 1) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer`);
}

async function seed(connectionString: string) {
  const db = createPrismaClient(connectionString, { poolSize: 2 });
  const run = (sql: string) => db.$executeRawUnsafe(sql);
  const tables = ['registrations', 'billing_keys', 'subscriptions', 'payments', 'consents'];
  for (const t of tables) await run(`ALTER TABLE "${t}" DISABLE TRIGGER USER`);
  await run(`INSERT INTO "registrations" ("id", "state", "status", "orderId", "userId", "method", "amount", "orderName", "issueKeyOnly", "expiresAt", "transactionId", "completedAt", "updatedAt", "createdAt")
    SELECT gen_random_uuid(), 'state-' || g, 'COMPLETED', 'R' || lpad(g::text, 32, '0'), 'user-' || (g % 5000), 'CARD', 9900, 'Plan', false,
           now(), 'tx-' || g, now(), now(), now() - make_interval(secs => g)
      FROM generate_series(1, ${SUBSCRIPTIONS}) g`);
  await run(`INSERT INTO "billing_keys" ("id", "registrationId", "userId", "method", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext", "cardName", "cardNumber", "updatedAt")
    SELECT gen_random_uuid(), r."id", r."userId", 'CARD', 'k1', '\\x00', '\\x00', '\\x00', 'Card', '1234-56**-****-7890', now() FROM "registrations" r`);
  await run(`INSERT INTO "subscriptions" ("id", "registrationId", "billingKeyId", "userId", "method", "amount", "orderName", "intervalUnit", "intervalCount", "anchorAt", "cycle",
                                          "currentPeriodStart", "currentPeriodEnd", "nextChargeAt", "updatedAt", "createdAt")
    SELECT gen_random_uuid(), k."registrationId", k."id", k."userId", 'CARD', 9900, 'Plan', 'month', 1, now(), ${PAYMENTS_EACH + 1},
           now(), now() + interval '1 month', now() + interval '1 month', now(), r."createdAt"
      FROM "billing_keys" k JOIN "registrations" r ON r."id" = k."registrationId"`);
  await run(`INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "amount", "status", "orderId", "attemptCount", "transactionId", "approvedAt", "updatedAt", "createdAt")
    SELECT s."id", c, 'RECURRING', 'CARD', 9900, 'SUCCEEDED', 'B' || replace(s."id"::text, '-', '') || c, 1, 'tx-' || s."id" || '-' || c, now(), now(), s."createdAt" + make_interval(days => c)
      FROM "subscriptions" s, generate_series(1, ${PAYMENTS_EACH}) c`);
  await run(`INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "sequence", "xid")
    SELECT 'subscription.created', 'subscription', s."id", to_jsonb(s) - 'leaseOwner' - 'leaseExpiresAt', row_number() OVER (ORDER BY s."createdAt", s."id"), 0
      FROM "subscriptions" s`);
  await run(`UPDATE "event_sequencer" SET "last" = ${SUBSCRIPTIONS}`);
  for (const t of tables) await run(`ALTER TABLE "${t}" ENABLE TRIGGER USER`);
  await run('VACUUM ANALYZE');
  const [deep] = await db.$queryRawUnsafe<Array<{ id: string; createdAt: Date }>>(
    `SELECT "id", "createdAt" FROM "subscriptions" ORDER BY "createdAt" DESC, "id" DESC OFFSET ${SUBSCRIPTIONS - 100} LIMIT 1`,
  );
  const [payment] = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT "id" FROM "payments" OFFSET ${Math.floor((SUBSCRIPTIONS * PAYMENTS_EACH) / 2)} LIMIT 1`,
  );
  await db.$disconnect();
  return { deepCursor: encodeCursor(deep!), paymentId: payment!.id };
}

async function measure(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections: 50, duration: DURATION, headers });
  return { p99: result.latency.p99, requestsPerSecond: result.requests.average, non2xx: result.non2xx, errors: result.errors };
}

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-api-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const children: Array<{ kill: () => void }> = [];
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    const started = Date.now();
    const { deepCursor, paymentId } = await seed(embedded.adminConnectionString);
    console.log(
      `\nAPI: ${SUBSCRIPTIONS} subscriptions, ${SUBSCRIPTIONS * PAYMENTS_EACH} payments, ${SUBSCRIPTIONS} events (seeded in ${((Date.now() - started) / 1000).toFixed(0)} s); 50 connections, ${DURATION} s per route`,
    );

    const helloPort = await freePort();
    const hello = spawn(process.execPath, ['-e', HELLO], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: String(helloPort) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(hello);
    await new Promise((resolve) => hello.once('message', resolve));

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // BENCH_PROFILE=<dir>: a V8 CPU profile of the service process.
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const service = spawn(process.execPath, [...serviceNodeFlags(), ...profile, path.join(ROOT, 'src/server.ts')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_BASE_URL: base,
        DATABASE_URL: embedded.adminConnectionString,
        API_KEYS: API_KEY,
        ADMIN_TOKENS: 'bench_admin_token_0123456789abcdef',
        BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
        PAYMENT_SECRET_KEY: 'bench_gateway_secret_key',
        PAYMENT_MERCHANT_ID: 'BENCH',
        SCHEDULER_ENABLED: 'false',
        LOG_LEVEL: 'error',
        RATE_LIMIT_API: '100000000',
        RATE_LIMIT_BROWSER: '100000000',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(service);
    await waitReady(`${base}/ready`);

    const auth = { authorization: `Bearer ${API_KEY}` };
    const helloResult = await measure(`http://127.0.0.1:${helloPort}/hello`);
    const routes: Array<[string, string, Record<string, string>]> = [
      ['GET /api/v1/subscriptions?limit=50 (first page)', `${base}/api/v1/subscriptions?limit=50`, auth],
      ['GET /api/v1/subscriptions?limit=50 (deep page)', `${base}/api/v1/subscriptions?limit=50&cursor=${deepCursor}`, auth],
      ['GET /api/v1/payments/:id', `${base}/api/v1/payments/${paymentId}`, auth],
      ['GET /api/v1/events?after= (near the end)', `${base}/api/v1/events?after=${SUBSCRIPTIONS - 100}&limit=50`, auth],
      ['GET /billing/success (replayed)', `${base}/billing/success?state=state-500&transactionId=tx-500`, { accept: 'application/json' }],
    ];
    console.log(`${'route'.padEnd(50)} ${'p99 ms'.padStart(7)} ${'req/s'.padStart(8)} ${'× hello'.padStart(8)}   target`);
    console.log(
      `${'bare Fastify hello (same run)'.padEnd(50)} ${String(helloResult.p99).padStart(7)} ${helloResult.requestsPerSecond.toFixed(0).padStart(8)} ${'1.00'.padStart(8)}`,
    );
    const runs: Record<string, unknown>[] = [{ name: 'hello', ...helloResult }];
    // BENCH_API_ONLY=<text>: only the routes whose name contains it (with BENCH_PROFILE, to profile one route).
    for (const [name, url, headers] of routes.filter(([n]) => !process.env.BENCH_API_ONLY || n.includes(process.env.BENCH_API_ONLY))) {
      const r = await measure(url, headers);
      const ok = r.p99 < 50 && r.non2xx === 0 && r.errors === 0;
      console.log(
        `${name.padEnd(50)} ${String(r.p99).padStart(7)} ${r.requestsPerSecond.toFixed(0).padStart(8)} ${(r.requestsPerSecond / helloResult.requestsPerSecond).toFixed(2).padStart(8)}   p99 < 50 ms ${ok ? 'met' : `MISSED${r.non2xx || r.errors ? ` (${r.non2xx} non-2xx, ${r.errors} errors)` : ''}`}`,
      );
      runs.push({ name, ...r, ratioToHello: r.requestsPerSecond / helloResult.requestsPerSecond });
    }
    writeResults('api', runs);
  } finally {
    for (const child of children) child.kill();
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the service's graceful stop (and its profile)
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
