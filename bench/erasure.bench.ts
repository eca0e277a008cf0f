// npm run bench (part 8): erasing customers (issue 33's speed target: p99 < 200 ms for a customer with 36 months of
// history among 1,000,000 payments). Seeds a merchant's history (bench/seed.ts: 100,000 subscriptions over 36 months,
// 1,000,000 payments in all with the customers below), what the service keeps around it (bench/erasure-seed.ts: 90
// days of events delivered to a webhook endpoint, idempotency records, audit entries, portal sessions, a settlement
// file) and N erasable customers, each with 36 monthly payments, refunds, events, audit entries, idempotency records,
// portal sessions and settlement lines, its subscription CANCELED. Then starts the service in a process of its own and
// erases the customers one at a time through `POST /admin/customers/:userId/erasure` (admin token, Idempotency-Key),
// each answer checked (201, the customer's 36 payments counted). Prints p50/p95/p99 and, from pg_stat_statements,
// the statements each erasure sent and the statements that cost the most time (the service's background work, seen
// in an idle window first, left out).
//
//   BENCH_ERASURE_CUSTOMERS (200)  BENCH_ERASURE_WARMUP (5: erased first, not timed)
//   BENCH_SEED_SUBSCRIPTIONS (100,000)  BENCH_SEED_PAYMENTS (1,000,000 in all)  BENCH_SEED_MONTHS (36)
//   BENCH_DATABASE_URL: a database to use instead of an embedded cluster: an empty one is migrated and seeded; one
//     already seeded (by this benchmark) only gets new erasable customers, so one seeded copy serves many runs.
//     pg_stat_statements is read there if the server loads it (shared_preload_libraries).
//   BENCH_ERASURE_SEED_ONLY=1: seed the history and its surroundings, not the customers, and stop: a database to copy
//     (CREATE DATABASE … TEMPLATE) for each run's BENCH_DATABASE_URL, where the run adds its customers.
//   BENCH_ERASURE_EXPLAIN=<ms>: after the timed erasures, 5 more with auto_explain (ANALYZE, BUFFERS, nested
//     statements) logging every statement slower than <ms>; their plans are printed from the server's log (the
//     embedded cluster's, or BENCH_PG_LOG's with BENCH_DATABASE_URL).
//   BENCH_PROFILE=<dir>: a V8 CPU profile of the service process during the timed erasures.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { writeResults } from './charging.bench.ts';
import { type ErasableCustomer, seedErasableCustomers, seedSurroundings } from './erasure-seed.ts';
import { seedHistory } from './seed.ts';
import { BENCH_ADMIN_TOKEN, startService } from './service-process.ts';

const CUSTOMERS = Number(process.env.BENCH_ERASURE_CUSTOMERS ?? 200);
const WARMUP = Number(process.env.BENCH_ERASURE_WARMUP ?? 5);
const SUBSCRIPTIONS = Number(process.env.BENCH_SEED_SUBSCRIPTIONS ?? 100_000);
const PAYMENTS = Number(process.env.BENCH_SEED_PAYMENTS ?? 1_000_000);
const MONTHS = Number(process.env.BENCH_SEED_MONTHS ?? 36);
const SEED_ONLY = process.env.BENCH_ERASURE_SEED_ONLY === '1';
const EXPLAIN_MS = process.env.BENCH_ERASURE_EXPLAIN ? Number(process.env.BENCH_ERASURE_EXPLAIN) : undefined;
const EXPLAINED = 5;
const TARGET_P99_MS = 200;
const IDLE_MS = 5000;
// The console's cookie keys, so the service does not make development secrets of its own.
const SERVICE_ENV = { CONSOLE_SESSION_KEYS: Buffer.alloc(32, 3).toString('base64') };

/** The CPU time (user + system, ms) a process has used, from /proc; 0 for one gone. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length * p) / 100) - 1)]!;
const round1 = (ms: number) => Math.round(ms * 10) / 10;
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The history, its surroundings and the erasable customers, whichever the database does not hold yet. */
async function seed(databaseUrl: string, now: Date, count: number): Promise<{ seeded: Record<string, unknown>; customers: ErasableCustomer[] }> {
  const seeded: Record<string, unknown> = {};
  const history = await withClient(databaseUrl, async (c) => Number((await c.query('SELECT count(*) AS n FROM "subscriptions"')).rows[0].n));
  if (history === 0) {
    // The erasable customers' payments count in the million.
    seeded.history = await seedHistory(databaseUrl, { subscriptions: SUBSCRIPTIONS, payments: PAYMENTS - CUSTOMERS * MONTHS, months: MONTHS, now, log });
  }
  return withClient(databaseUrl, async (client) => {
    const surrounded = await client.query(`SELECT 1 FROM "webhook_endpoints" WHERE "description" = 'erasure benchmark'`);
    if (surrounded.rowCount === 0) seeded.surroundings = await seedSurroundings(client, { now, log });
    const customers = SEED_ONLY ? [] : await seedErasableCustomers(client, { count, months: MONTHS, now, tag: Date.now().toString(36), log });
    const at = Date.now();
    await client.query('VACUUM ANALYZE');
    log(`  seed: vacuum analyze (${((Date.now() - at) / 1000).toFixed(1)} s)`);
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM "payments")::int AS "payments", (SELECT count(*) FROM "subscriptions")::int AS "subscriptions",
              (SELECT count(*) FROM "events")::int AS "events", (SELECT count(*) FROM "idempotency_records")::int AS "idempotencyRecords",
              (SELECT count(*) FROM "audit_events")::int AS "auditEvents", (SELECT count(*) FROM "portal_sessions")::int AS "portalSessions",
              (SELECT count(*) FROM "settlement_lines")::int AS "settlementLines", (SELECT count(*) FROM "webhook_deliveries")::int AS "webhookDeliveries",
              pg_size_pretty(pg_database_size(current_database())) AS "size"`,
    );
    return { seeded: { ...seeded, tables: rows[0] }, customers };
  });
}

interface Statement {
  queryid: string;
  toplevel: boolean;
  query: string;
  calls: number;
  total: number;
  mean: number;
  max: number;
  rows: number;
  read: number;
  hit: number;
}

/** pg_stat_statements of this database, or undefined when the server does not load it. */
async function statements(client: pg.Client): Promise<Statement[] | undefined> {
  try {
    const { rows } = await client.query<Statement>(
      `SELECT s."queryid"::text AS "queryid", s."toplevel", s."query", s."calls"::int AS "calls", s."total_exec_time" AS "total", s."mean_exec_time" AS "mean",
              s."max_exec_time" AS "max", s."rows"::int AS "rows", s."shared_blks_read"::int AS "read", s."shared_blks_hit"::int AS "hit"
         FROM pg_stat_statements s JOIN pg_database d ON d."oid" = s."dbid" WHERE d."datname" = current_database()`,
    );
    return rows;
  } catch {
    return undefined;
  }
}

async function resetStatements(client: pg.Client): Promise<boolean> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
    return true;
  } catch {
    return false;
  }
}

const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|START TRANSACTION|SET|SELECT pg_stat_statements|SELECT "pid" FROM pg_stat_activity)/i;

/** One erasure through the route, checked; its time in ms. */
async function erase(base: string, customer: ErasableCustomer): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/admin/customers/${encodeURIComponent(customer.userId)}/erasure`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'benchmark: the customer asked to be forgotten' }),
  });
  const body = (await response.json()) as { pseudonym?: string; counts?: { payments?: number } };
  const ms = performance.now() - started;
  if (response.status !== 201 || body.counts?.payments !== MONTHS || !body.pseudonym) {
    throw new Error(`erasing ${customer.userId} answered ${response.status}: ${JSON.stringify(body).slice(0, 400)}`);
  }
  return ms;
}

/** The erasures' own statements: those seen during them and not in the idle window (the service's background work). */
function erasureStatements(during: Statement[], idle: Statement[]): Statement[] {
  const background = new Set(idle.map((s) => s.queryid));
  return during.filter((s) => !background.has(s.queryid) && !TRANSACTION_CONTROL.test(s.query));
}

function printStatements(own: Statement[], erased: number) {
  const top = own.filter((s) => s.toplevel);
  const sent = top.reduce((n, s) => n + s.calls, 0);
  // A top-level statement's time includes the functions and triggers it ran (the nested ones below).
  const databaseMs = top.reduce((n, s) => n + s.total, 0) / erased;
  console.log(`statements per erasure (sent by the service, BEGIN/COMMIT apart): ${(sent / erased).toFixed(1)} (${top.length} distinct)`);
  console.log(
    `their execution in PostgreSQL: ${databaseMs.toFixed(1)} ms per erasure (the rest of an erasure's time is the service, the round trips and waiting for a core)`,
  );
  console.log('the costliest statements (pg_stat_statements; "nested" ran inside a function or trigger), ms per erasure:');
  for (const s of [...own].sort((a, b) => b.total - a.total).slice(0, 12)) {
    console.log(
      `  ${(s.total / erased).toFixed(2).padStart(7)} ms  ${String(s.calls).padStart(6)} calls  mean ${s.mean.toFixed(2)}  max ${s.max.toFixed(1)}  rows ${s.rows}  ` +
        `blocks hit ${s.hit} read ${s.read}  ${s.toplevel ? 'top' : 'nested'}  ${s.query.replace(/\s+/g, ' ').slice(0, 220)}`,
    );
  }
  return { perErasure: sent / erased, distinct: top.length, databaseMs };
}

/** Erases `customers` with auto_explain on for new connections of this database, and prints the plans it logged. */
async function explainSlowest(databaseUrl: string, logFile: string | undefined, customers: ErasableCustomer[], minMs: number) {
  if (!logFile || !existsSync(logFile)) {
    console.log(`BENCH_ERASURE_EXPLAIN: no server log to read (${logFile ?? 'set BENCH_PG_LOG'}); plans not printed`);
    return;
  }
  const database = new URL(databaseUrl).pathname.slice(1);
  const settings = [
    ['session_preload_libraries', 'auto_explain'],
    ['auto_explain.log_min_duration', `${minMs}ms`],
    ['auto_explain.log_analyze', 'on'],
    ['auto_explain.log_buffers', 'on'],
    ['auto_explain.log_nested_statements', 'on'],
  ];
  await withClient(databaseUrl, async (c) => {
    for (const [name, value] of settings) await c.query(`ALTER DATABASE "${database}" SET ${name} = '${value}'`);
  });
  const from = statSync(logFile).size;
  const service = await startService(databaseUrl, SERVICE_ENV);
  try {
    for (const customer of customers) await erase(service.base, customer);
  } finally {
    await service.stop();
    await withClient(databaseUrl, async (c) => {
      for (const [name] of settings) await c.query(`ALTER DATABASE "${database}" RESET ${name}`);
    });
  }
  const plans = readFileSync(logFile).subarray(from).toString('utf8');
  console.log(`plans of the statements over ${minMs} ms in ${customers.length} more erasures (auto_explain, ANALYZE, BUFFERS):\n${plans}`);
}

async function main() {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-erasure-'));
  const pgLog = process.env.BENCH_DATABASE_URL ? process.env.BENCH_PG_LOG : path.join(workDir, 'pg', 'server.log');
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: path.join(workDir, 'pg'),
        port: await freePort(),
        database: 'postgres',
        persistent: false,
        settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' },
        log: pino({ level: 'error' }),
      });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? embedded!.adminConnectionString;
  const results: Record<string, unknown>[] = [];
  try {
    await migrate({ connectionString: databaseUrl, log: pino({ level: 'error' }) });
    const extra = EXPLAIN_MS === undefined ? 0 : EXPLAINED;
    const { seeded, customers } = await seed(databaseUrl, new Date(), CUSTOMERS + extra);
    log(`seeded: ${JSON.stringify(seeded)}`);
    results.push({ seeded, customers: CUSTOMERS, warmup: WARMUP, months: MONTHS });
    if (SEED_ONLY) return;
    const load = os.loadavg();
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const service = await startService(databaseUrl, SERVICE_ENV, profile);
    const times: number[] = [];
    let own: Statement[] | undefined;
    let cpu = { service: 0, database: 0 };
    try {
      const probe = await fetch(`${service.base}/admin/customers/${encodeURIComponent('nobody-at-all')}/erasure`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'benchmark probe' }),
      });
      const answer = (await probe.json()) as { code?: string };
      if (answer.code !== 'CUSTOMER_NOT_FOUND')
        throw new Error(`the erasure route is not there: an unknown customer answered ${probe.status} ${JSON.stringify(answer)}`);
      for (const customer of customers.slice(0, WARMUP)) await erase(service.base, customer);
      own = await withClient(databaseUrl, async (client) => {
        // The service's background work alone (the webhook dispatcher's polls), to leave it out of the erasures' count.
        const tracked = await resetStatements(client);
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        const idle = tracked ? ((await statements(client)) ?? []) : [];
        if (tracked) await resetStatements(client);
        // The CPU the service and its PostgreSQL backends use during the erasures (the machine is shared: beside the
        // wall time, what the erasures cost).
        const backends = (
          await client.query<{ pid: number }>('SELECT "pid" FROM pg_stat_activity WHERE "datname" = current_database() AND "pid" <> pg_backend_pid()')
        ).rows.map((r) => r.pid);
        const cpuBefore = { service: cpuMsOf(service.pid), database: backends.reduce((n, pid) => n + cpuMsOf(pid), 0) };
        for (const customer of customers.slice(WARMUP, CUSTOMERS)) times.push(await erase(service.base, customer));
        cpu = { service: cpuMsOf(service.pid) - cpuBefore.service, database: backends.reduce((n, pid) => n + cpuMsOf(pid), 0) - cpuBefore.database };
        const during = tracked ? await statements(client) : undefined;
        return during && erasureStatements(during, idle);
      });
    } finally {
      await service.stop();
    }
    const sorted = [...times].sort((a, b) => a - b);
    const figures = {
      erased: times.length,
      p50: round1(percentile(sorted, 50)),
      p95: round1(percentile(sorted, 95)),
      p99: round1(percentile(sorted, 99)),
      max: round1(sorted.at(-1)!),
      mean: round1(times.reduce((a, b) => a + b, 0) / times.length),
      loadBefore: load.map((l) => Math.round(l * 100) / 100),
      loadAfter: os.loadavg().map((l) => Math.round(l * 100) / 100),
      serviceCpuMsPerErasure: round1(cpu.service / times.length),
      databaseCpuMsPerErasure: round1(cpu.database / times.length),
    };
    console.log(
      `\nErasure: ${figures.erased} customers with ${MONTHS} months of history, one at a time (after ${WARMUP} not timed); load average ${figures.loadBefore.join(' ')} before, ${figures.loadAfter.join(' ')} after`,
    );
    console.log(`p50 ${figures.p50} ms  p95 ${figures.p95} ms  p99 ${figures.p99} ms  max ${figures.max} ms  mean ${figures.mean} ms`);
    console.log(
      `CPU per erasure: the service ${(cpu.service / times.length).toFixed(1)} ms, its PostgreSQL backends ${(cpu.database / times.length).toFixed(1)} ms (from /proc; the wall time beyond them is waiting, for a core or a round trip)`,
    );
    const counted = own ? printStatements(own, times.length) : undefined;
    if (!own) console.log('statements: pg_stat_statements is not loaded by this server (shared_preload_libraries); not counted');
    console.log(`p99 ${figures.p99} ms   target < ${TARGET_P99_MS} ms   ${figures.p99 < TARGET_P99_MS ? 'met' : 'MISSED'}`);
    results.push({
      ...figures,
      statementsPerErasure: counted?.perErasure,
      databaseMsPerErasure: counted && round1(counted.databaseMs),
      costliest: own
        ?.sort((a, b) => b.total - a.total)
        .slice(0, 12)
        .map((s) => ({
          query: s.query.replace(/\s+/g, ' ').slice(0, 300),
          toplevel: s.toplevel,
          calls: s.calls,
          msPerErasure: round1(s.total / times.length),
          max: round1(s.max),
        })),
    });
    if (EXPLAIN_MS !== undefined) await explainSlowest(databaseUrl, pgLog, customers.slice(CUSTOMERS), EXPLAIN_MS);
    writeResults('erasure', results);
  } finally {
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
