// npm run bench (part 1): the charging engine against a real PostgreSQL (embedded, in a temporary directory) and the
// sandbox gateway in another process with a settable latency per call. Each run seeds N due CARD subscriptions and
// times one charging pass in a service process of its own (bench/charge-worker.ts), which reports charges, CPU,
// peak RSS and SQL statements. Prints each figure with its target (issue #15) and writes
// bench/results/<date>-charging.json with the machine, Node, PostgreSQL and the commit.
//
//   npm run bench                 quick sizes
//   BENCH_LARGE=1 npm run bench   adds the 100,000-subscription drain (memory targets)
import { execFileSync, fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createPrismaClient, type Db } from '../src/db/prisma.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../test/helpers/bulk.ts';
import { truncateAll } from '../test/helpers/database.ts';
import { freePort } from '../test/setup/global-setup.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LARGE = process.argv.includes('--large') || process.env.BENCH_LARGE === '1';
const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 2000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECRET = 'bench_gateway_secret_key';
const MERCHANT = 'BENCH';
const ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const EVENT_TRIGGERS = ['subscriptions', 'payments', 'registrations', 'orders'];

interface WorkerResult {
  report: { claimed: number; succeeded: number; declined: number; unknown: number; skipped: number };
  seconds: number;
  cpuMs: number;
  statements: number;
  transactions: number;
  peakRss: number;
  idleRss: number;
}

const log = pino({ level: 'error' });
const results: Record<string, unknown>[] = [];
const MB = 1024 * 1024;

async function startSandbox() {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'src/sandbox/server.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      SANDBOX_PORT: String(port),
      PAYMENT_SECRET_KEY: SECRET,
      PAYMENT_MERCHANT_ID: MERCHANT,
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i += 1) {
    try {
      if ((await fetch(`${url}/_control/ledger`)).ok) return { url, stop: () => child.kill() };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('sandbox did not start');
}

async function control(url: string, pathname: string, body?: unknown) {
  const response = await fetch(`${url}/_control${pathname}`, {
    method: body === undefined ? 'DELETE' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`sandbox ${pathname}: ${response.status} ${await response.text()}`);
}

async function prepare(db: Db, sandboxUrl: string, count: number, latencyMs: number, events: boolean) {
  // The same emptying as between test files: every domain table, one list (test/helpers/database.ts).
  await truncateAll(db);
  for (const table of EVENT_TRIGGERS) {
    for (const trigger of [`${table}_merchant_events`, `${table}_merchant_events_insert`]) {
      await db.$executeRawUnsafe(`ALTER TABLE "${table}" ${events ? 'ENABLE' : 'DISABLE'} TRIGGER "${trigger}"`);
    }
  }
  await control(sandboxUrl, '/reset', {});
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
  for (let done = 0; done < count; done += 5000) {
    await seedDueSubscriptions(db, keyring, { count: Math.min(5000, count - done), sandboxUrl, dueAt: new Date(Date.now() - 60_000) });
  }
  await db.$executeRawUnsafe('VACUUM ANALYZE');
  if (latencyMs > 0) await control(sandboxUrl, '/faults', { operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs, count: count * 2 });
}

/** Starts `replicas` service processes, releases them together, and sums what they report. */
async function drain(databaseUrl: string, sandboxUrl: string, replicas: number, concurrency: number) {
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PAYMENT_API_BASE_URL: sandboxUrl,
    PAYMENT_SECRET_KEY: SECRET,
    PAYMENT_MERCHANT_ID: MERCHANT,
    PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    API_KEYS: 'bench_api_key_0123456789abcdef',
    ADMIN_TOKENS: 'bench_admin_token_0123456789abcdef',
    BILLING_KEY_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'error',
  };
  const workers = Array.from({ length: replicas }, () =>
    fork(path.join(ROOT, 'bench/charge-worker.ts'), [], {
      env: { ...process.env, BENCH_ENV: JSON.stringify(env) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // BENCH_PROFILE=<dir>: a V8 CPU profile of each service process (open it in Chrome DevTools).
      execArgv: [...serviceNodeFlags(), ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [])],
    }),
  );
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  const started = process.hrtime.bigint();
  const done = workers.map((w) => new Promise<WorkerResult>((resolve) => w.once('message', (m) => resolve(m as WorkerResult))));
  for (const w of workers) w.send('go');
  const reports = await Promise.all(done);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const succeeded = reports.reduce((n, r) => n + r.report.succeeded, 0);
  return {
    seconds,
    succeeded,
    perSecond: succeeded / seconds,
    cpuMsPerCharge: reports.reduce((n, r) => n + r.cpuMs, 0) / succeeded,
    statementsPerCharge: reports.reduce((n, r) => n + r.statements, 0) / succeeded,
    transactionsPerCharge: reports.reduce((n, r) => n + r.transactions, 0) / succeeded,
    peakRssMb: Math.max(...reports.map((r) => r.peakRss)) / MB,
    idleRssMb: Math.max(...reports.map((r) => r.idleRss)) / MB,
    reports: reports.map((r) => r.report),
  };
}

/** Exactly one approved charge per subscription and cycle, in our records and in the gateway's ledger. */
async function doubleCharges(db: Db, sandboxUrl: string): Promise<number> {
  const [row] = await db.$queryRaw<{ extra: bigint }[]>`
    SELECT count(*) - count(DISTINCT ("subscriptionId", cycle)) AS extra FROM "payments" WHERE status = 'SUCCEEDED' AND kind = 'RECURRING'`;
  const ledger = (await (await fetch(`${sandboxUrl}/_control/ledger`)).json()) as { entries: Array<{ type: string; operation: string; orderId?: string }> };
  const charges = ledger.entries.filter((e) => e.type === 'CHARGE' && e.operation === 'BILLING_CONFIRM');
  const payments = await db.payment.count({ where: { status: 'SUCCEEDED', kind: 'RECURRING' } });
  return Number(row!.extra) + Math.abs(charges.length - payments);
}

function line(name: string, figure: string, target: string, met: boolean) {
  console.log(`${name.padEnd(44)} ${figure.padStart(22)}   ${target.padEnd(24)} ${met ? 'met' : 'MISSED'}`);
}

async function main() {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const sandbox = await startSandbox();
  const db = createPrismaClient(embedded.adminConnectionString, { poolSize: 4 });
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    const version = (await db.$queryRaw<{ version: string }[]>`SELECT version()`)[0]!.version;
    console.log(
      `charging: ${N} due CARD subscriptions per run, SCHEDULER_CONCURRENCY ${C}; node ${process.version}; ${os.cpus().length} × ${os.cpus()[0]?.model}; ${version.split(' on ')[0]}`,
    );
    console.log(`${'benchmark'.padEnd(44)} ${'figure'.padStart(22)}   ${'target'.padEnd(24)}`);
    const run = async (name: string, options: { count?: number; latencyMs: number; replicas?: number; events?: boolean }) => {
      await prepare(db, sandbox.url, options.count ?? N, options.latencyMs, options.events ?? true);
      const result = await drain(embedded.adminConnectionString, sandbox.url, options.replicas ?? 1, C);
      const doubles = await doubleCharges(db, sandbox.url);
      results.push({ name, count: options.count ?? N, concurrency: C, ...options, ...result, doubleCharges: doubles });
      return { ...result, doubles };
    };

    if (process.env.BENCH_PROFILE) {
      // Profiling: the L = 0 drain alone.
      const r = await run('drain L=0', { latencyMs: 0 });
      console.log(`${r.perSecond.toFixed(0)} charges/s, ${r.cpuMsPerCharge.toFixed(2)} ms CPU and ${r.statementsPerCharge.toFixed(1)} statements per charge`);
      return;
    }
    const slow = await run('drain L=50ms', { latencyMs: 50 });
    const ideal = (C * 1000) / 50;
    line(
      'drain, L=50 ms, C=16 (charges/s)',
      `${slow.perSecond.toFixed(0)} (${(slow.perSecond / ideal).toFixed(2)} × C/L)`,
      `≥ ${(0.9 * ideal).toFixed(0)} (0.9 × C/L)`,
      slow.perSecond >= 0.9 * ideal,
    );
    const fast = await run('drain L=0', { latencyMs: 0 });
    line('drain, L=0, C=16 (charges/s)', fast.perSecond.toFixed(0), '≥ 400', fast.perSecond >= 400);
    line('  service CPU per charge (ms)', fast.cpuMsPerCharge.toFixed(2), '≤ 2', fast.cpuMsPerCharge <= 2);
    line(
      '  SQL statements per charge',
      `${fast.statementsPerCharge.toFixed(2)} (+${fast.transactionsPerCharge.toFixed(2)} BEGIN/COMMIT)`,
      '≤ 6',
      fast.statementsPerCharge <= 6,
    );
    const two = await run('two replicas L=50ms', { latencyMs: 50, replicas: 2 });
    line(
      'two replicas, L=50 ms (× one process)',
      `${(two.perSecond / slow.perSecond).toFixed(2)} (${two.perSecond.toFixed(0)}/s)`,
      '≥ 1.8',
      two.perSecond / slow.perSecond >= 1.8,
    );
    line('  double charges', String(two.doubles + slow.doubles + fast.doubles), '0', two.doubles + slow.doubles + fast.doubles === 0);
    line('idle RSS after start (MB)', fast.idleRssMb.toFixed(0), '< 150', fast.idleRssMb < 150);
    // Issue #13's budget: the outbox triggers' cost on the L = 0 drain, alternating runs, best of two each.
    const best = { off: 0, on: 0 };
    for (let round = 0; round < 2; round += 1) {
      for (const events of [false, true]) {
        const r = await run(`drain L=0 events ${events ? 'on' : 'off'}`, { latencyMs: 0, events });
        best[events ? 'on' : 'off'] = Math.max(best[events ? 'on' : 'off'], r.perSecond);
      }
    }
    line(
      'events on vs off, L=0 (× off)',
      `${(best.on / best.off).toFixed(2)} (${best.on.toFixed(0)} vs ${best.off.toFixed(0)})`,
      '≥ 0.90',
      best.on / best.off >= 0.9,
    );
    if (LARGE) {
      const large = await run('drain 100k L=0', { count: 100_000, latencyMs: 0 });
      line('100,000 due, L=0: peak RSS (MB)', `${large.peakRssMb.toFixed(0)} (${large.perSecond.toFixed(0)}/s)`, '< 250', large.peakRssMb < 250);
    }
  } finally {
    await db.$disconnect();
    sandbox.stop();
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  if (!process.env.BENCH_PROFILE) writeResults('charging', results);
}

/** The node flags `npm start` runs the service with (package.json), so that the benchmarks measure it as deployed. */
export function serviceNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const match = /exec node ((?:--\S+ )*)src\/server\.ts$/.exec(start);
  if (!match) throw new Error(`package.json's start script does not run node src/server.ts: ${start}`);
  return match[1]!.trim().split(' ').filter(Boolean);
}

export function writeResults(name: string, runs: Record<string, unknown>[]) {
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().slice(0, 10)}-${name}.json`);
  const machine = { cpu: os.cpus()[0]?.model, cpus: os.cpus().length, memoryMb: Math.round(os.totalmem() / MB), platform: `${os.platform()} ${os.release()}` };
  writeFileSync(file, `${JSON.stringify({ name, at: new Date().toISOString(), commit, node: process.version, machine, large: LARGE, runs }, null, 2)}\n`);
  console.log(`results: ${path.relative(ROOT, file)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
