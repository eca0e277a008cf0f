// npm run bench (part 3): the API under load (issue #15 target 5, issue #25 target 6). Seeds 100,000 subscriptions
// with 1,000,000 payments and 100,000 events (BENCH_LARGE=1; a tenth by default) (in SQL, with the event triggers off
// while seeding), starts src/server.ts in a process of its own, and drives each route with autocannon at 50
// connections, next to a bare Fastify hello route measured in the same round. Prints p99 latency, requests/s and their
// ratio to hello, and what each request cost in CPU: the service's process and the database's backends (from /proc).
//
//   BENCH_DATABASE_URL: a database to reuse instead of an embedded cluster. One without subscriptions is migrated and
//     seeded here (and kept); one with them (this bench's seed, or bench/seed.ts's history) is used as it is, with one
//     subscription.created event per subscription written first if it holds no events. The fixtures (a deep cursor, a
//     payment, the feed's position, a completed registration to replay) are read from it.
//   BENCH_BASELINE=<worktree>: that checkout's service too (its own src/server.ts, same database), each route measured
//     on both in turn, the order flipped every round. BENCH_API_ROUNDS (1): rounds.
//   BENCH_API_SECONDS (5) per route, BENCH_API_ONLY=<text>[,<text>…]: only the routes whose name contains one of them;
//   BENCH_PROFILE=<dir>: a V8 CPU profile of the service (this checkout's).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { encodeCursor } from '../src/lib/pagination.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { writeResults } from './charging.bench.ts';
import { serviceNodeFlags } from './service-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The target's sizes (100,000 subscriptions, 1,000,000 payments) with BENCH_LARGE=1; a tenth by default.
const SUBSCRIPTIONS = Number(process.env.BENCH_API_SUBSCRIPTIONS ?? (process.env.BENCH_LARGE === '1' ? 100_000 : 10_000));
const PAYMENTS_EACH = 10;
const DURATION = Number(process.env.BENCH_API_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_API_ROUNDS ?? 1);
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;
const API_KEY = 'bench_api_key_0123456789abcdef';
const HELLO = `
const fastify = require('fastify')();
fastify.get('/hello', async () => ({ hello: 'world' }));
fastify.listen({ host: '127.0.0.1', port: Number(process.env.PORT) }).then(() => process.send('ready'));
`;
/** Linux's clock tick (USER_HZ), the unit of /proc/<pid>/stat's CPU times. */
const TICK_MS = 10;

async function waitReady(url: string, child: ChildProcess) {
  for (let i = 0; i < 300; i += 1) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer`);
}

/** This bench's own data, into an empty, migrated database. */
async function seed(client: pg.Client) {
  const run = (sql: string) => client.query(sql);
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
  for (const t of tables) await run(`ALTER TABLE "${t}" ENABLE TRIGGER USER`);
}

/** One subscription.created event per subscription (what the triggers, off while seeding, would have written). */
async function seedEvents(client: pg.Client) {
  await client.query(`INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "sequence", "xid")
    SELECT 'subscription.created', 'subscription', s."id", to_jsonb(s) - 'leaseOwner' - 'leaseExpiresAt',
           (SELECT coalesce(max("sequence"), 0) FROM "events") + row_number() OVER (ORDER BY s."createdAt", s."id"), 0
      FROM "subscriptions" s`);
  await client.query(`UPDATE "event_sequencer" SET "last" = (SELECT max("sequence") FROM "events")`);
}

/** Seeds what the database lacks, then reads the routes' fixtures from it. */
async function prepare(connectionString: string, log: pino.Logger) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const count = async (table: string) => Number((await client.query(`SELECT count(*)::int AS n FROM "${table}"`)).rows[0].n);
    await migrate({ connectionString, log });
    let seeded = false;
    if ((await count('subscriptions')) === 0) {
      await seed(client);
      seeded = true;
    }
    // The feed's route reads 100 events from the end: a database with a few events (another bench's actions) gets the
    // seeded ones after them.
    if ((await count('events')) < 1000) {
      await seedEvents(client);
      seeded = true;
    }
    if (seeded) await client.query('VACUUM ANALYZE');
    const subscriptions = await count('subscriptions');
    const payments = await count('payments');
    const events = await count('events');
    const { rows: deep } = await client.query<{ id: string; createdAt: Date }>(
      `SELECT "id", "createdAt" FROM "subscriptions" ORDER BY "createdAt" DESC, "id" DESC OFFSET ${subscriptions - 100} LIMIT 1`,
    );
    const { rows: payment } = await client.query<{ id: string }>(`SELECT "id" FROM "payments" OFFSET ${Math.floor(payments / 2)} LIMIT 1`);
    const { rows: last } = await client.query<{ n: string }>('SELECT max("sequence") AS n FROM "events"');
    // The 500th registration completed, as a browser that replays the gateway's success redirect would send it.
    const { rows: registration } = await client.query<{ state: string; transactionId: string }>(
      `SELECT "state", "transactionId" FROM "registrations" WHERE "status" = 'COMPLETED' AND "transactionId" IS NOT NULL ORDER BY "createdAt", "id" OFFSET 499 LIMIT 1`,
    );
    return {
      sizes: { subscriptions, payments, events },
      deepCursor: encodeCursor(deep[0]!),
      paymentId: payment[0]!.id,
      eventsAfter: Number(last[0]!.n) - 100,
      replay: registration[0]!,
    };
  } finally {
    await client.end();
  }
}

/** CPU time (user + system) of a process so far, in ms; 0 once it is gone. */
function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The CPU spent so far by each backend of the database (other than the monitor's own), by pid. */
async function backendsCpu(monitor: pg.Client): Promise<Map<number, number>> {
  const { rows } = await monitor.query<{ pid: number }>(
    'SELECT "pid" FROM pg_stat_activity WHERE "datname" = current_database() AND "pid" <> pg_backend_pid()',
  );
  return new Map(rows.map((r) => [r.pid, cpuMsOf(r.pid)]));
}

interface Measured {
  p99: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  /** The machine's 1-minute load average when the run started. */
  load1: number;
  serviceCpuMsPerRequest?: number;
  dbCpuMsPerRequest?: number;
}

async function measure(url: string, headers: Record<string, string>, cpu?: { pid: number; monitor: pg.Client }): Promise<Measured> {
  const load = os.loadavg()[0]!;
  const serviceBefore = cpu ? cpuMsOf(cpu.pid) : 0;
  const dbBefore = cpu ? await backendsCpu(cpu.monitor) : new Map<number, number>();
  const result = await autocannon({ url, connections: 50, duration: DURATION, headers });
  const requests = result.requests.total;
  const figures = { p99: result.latency.p99, requestsPerSecond: result.requests.average, non2xx: result.non2xx, errors: result.errors, load1: load };
  if (!cpu || requests === 0) return figures;
  const serviceMs = cpuMsOf(cpu.pid) - serviceBefore;
  let dbMs = 0;
  for (const [pid, ms] of await backendsCpu(cpu.monitor)) dbMs += ms - (dbBefore.get(pid) ?? 0);
  return { ...figures, serviceCpuMsPerRequest: serviceMs / requests, dbCpuMsPerRequest: dbMs / requests };
}

function startService(tree: string, databaseUrl: string, port: number, extraFlags: string[]): ChildProcess {
  const base = `http://127.0.0.1:${port}`;
  return spawn(process.execPath, [...serviceNodeFlags(tree), ...extraFlags, path.join(tree, 'src/server.ts')], {
    cwd: tree,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      DATABASE_URL: databaseUrl,
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
}

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-api-'));
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? embedded!.adminConnectionString;
  const children: ChildProcess[] = [];
  const monitor = new pg.Client({ connectionString: databaseUrl });
  try {
    const started = Date.now();
    const fixtures = await prepare(databaseUrl, log);
    await monitor.connect();
    console.log(
      `\nAPI: ${fixtures.sizes.subscriptions} subscriptions, ${fixtures.sizes.payments} payments, ${fixtures.sizes.events} events (${embedded ? 'seeded' : 'reused'}, ${((Date.now() - started) / 1000).toFixed(0)} s); 50 connections, ${DURATION} s per route, ${ROUNDS} round(s)`,
    );

    const helloPort = await freePort();
    const hello = spawn(process.execPath, ['-e', HELLO], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: String(helloPort) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(hello);
    await new Promise((resolve) => hello.once('message', resolve));

    // BENCH_PROFILE=<dir>: a V8 CPU profile of this checkout's service process.
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const trees: Array<{ name: string; tree: string; flags: string[] }> = [{ name: 'this', tree: ROOT, flags: profile }];
    if (BASELINE) trees.push({ name: 'baseline', tree: BASELINE, flags: [] });
    const services: Array<{ name: string; base: string; pid: number }> = [];
    for (const { name, tree, flags } of trees) {
      const port = await freePort();
      const child = startService(tree, databaseUrl, port, flags);
      children.push(child);
      await waitReady(`http://127.0.0.1:${port}/ready`, child);
      services.push({ name, base: `http://127.0.0.1:${port}`, pid: child.pid! });
    }

    const auth = { authorization: `Bearer ${API_KEY}` };
    const { replay } = fixtures;
    const routes: Array<[string, string, Record<string, string>]> = [
      ['GET /api/v1/subscriptions?limit=50 (first page)', '/api/v1/subscriptions?limit=50', auth],
      ['GET /api/v1/subscriptions?limit=50 (deep page)', `/api/v1/subscriptions?limit=50&cursor=${fixtures.deepCursor}`, auth],
      ['GET /api/v1/payments/:id', `/api/v1/payments/${fixtures.paymentId}`, auth],
      ['GET /api/v1/events?after= (near the end)', `/api/v1/events?after=${fixtures.eventsAfter}&limit=50`, auth],
      [
        'GET /billing/success (replayed)',
        `/billing/success?state=${encodeURIComponent(replay.state)}&transactionId=${encodeURIComponent(replay.transactionId)}`,
        { accept: 'application/json' },
      ],
    ];
    // BENCH_API_ONLY=<text>[,<text>…]: only the routes whose name contains one of them (with BENCH_PROFILE, to profile one route).
    const only = process.env.BENCH_API_ONLY?.split(',');
    const chosen = routes.filter(([n]) => !only || only.some((text) => n.includes(text)));
    const runs: Record<string, unknown>[] = [{ fixtures: { ...fixtures.sizes, reused: !embedded }, baseline: BASELINE ?? null }];
    const header = `${'route'.padEnd(50)} ${'tree'.padEnd(8)} ${'p99 ms'.padStart(7)} ${'req/s'.padStart(8)} ${'× hello'.padStart(8)} ${'svc ms/req'.padStart(10)} ${'db ms/req'.padStart(9)} ${'load'.padStart(5)}   target`;
    for (let round = 1; round <= ROUNDS; round += 1) {
      const helloResult = await measure(`http://127.0.0.1:${helloPort}/hello`, {});
      console.log(`\nround ${round}\n${header}`);
      console.log(
        `${'bare Fastify hello (same round)'.padEnd(50)} ${''.padEnd(8)} ${String(helloResult.p99).padStart(7)} ${helloResult.requestsPerSecond.toFixed(0).padStart(8)} ${'1.00'.padStart(8)} ${''.padStart(10)} ${''.padStart(9)} ${helloResult.load1.toFixed(1).padStart(5)}`,
      );
      runs.push({ round, name: 'hello', ...helloResult });
      // With a baseline, the order of the two services flips every round.
      const order = round % 2 === 1 ? services : [...services].reverse();
      for (const [name, route, headers] of chosen) {
        for (const service of order) {
          const r = await measure(`${service.base}${route}`, headers, { pid: service.pid, monitor });
          const ok = r.p99 < 50 && r.non2xx === 0 && r.errors === 0;
          const ratio = r.requestsPerSecond / helloResult.requestsPerSecond;
          console.log(
            `${name.padEnd(50)} ${service.name.padEnd(8)} ${String(r.p99).padStart(7)} ${r.requestsPerSecond.toFixed(0).padStart(8)} ${ratio.toFixed(3).padStart(8)} ${(r.serviceCpuMsPerRequest ?? 0).toFixed(2).padStart(10)} ${(r.dbCpuMsPerRequest ?? 0).toFixed(2).padStart(9)} ${r.load1.toFixed(1).padStart(5)}   p99 < 50 ms ${ok ? 'met' : `MISSED${r.non2xx || r.errors ? ` (${r.non2xx} non-2xx, ${r.errors} errors)` : ''}`}`,
          );
          runs.push({ round, name, tree: service.name, ...r, ratioToHello: ratio });
        }
      }
    }
    writeResults('api', runs);
  } finally {
    await monitor.end().catch(() => {});
    for (const child of children) child.kill();
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the service's graceful stop (and its profile)
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
