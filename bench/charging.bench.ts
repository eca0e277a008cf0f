// npm run bench (part 1): the charging engine against a real PostgreSQL (embedded, in a temporary directory) and the
// sandbox gateway in another process with a settable latency per call. Each run seeds N due CARD subscriptions and
// times one charging pass in a service process of its own (bench/charge-worker.ts), which reports charges, CPU,
// peak RSS and SQL statements. The plain-SQL floor (a script outside this repository that runs the same protocol
// without the service, given by BENCH_FLOOR) runs against the same cluster, alternately with the service's L = 0 drain. Prints each figure with its
// target (issue #25) and writes bench/results/<date>-charging.json with the machine, Node, PostgreSQL and the commit.
//
//   npm run bench                        quick sizes, one round
//   BENCH_ROUNDS=3                       every run three times, alternated (medians and ranges printed)
//   BENCH_BASELINE=<worktree>            also runs that checkout's engine (its bench/charge-worker.ts) in turn with
//                                        this one, on the same database and sandbox: each figure side by side
//   BENCH_ONLY=L50,L0,...                only these runs (L50, L200, L0, floor, replicas, events, large, service,
//                                        service-large, toss)
//   BENCH_TOSS_SUBSCRIPTIONS (1000), BENCH_TOSS_REPEATS (3)
//                                        run `toss`: the Toss path beside the Danal path at L = 50 ms, that many due
//                                        subscriptions each, that many pairs per round, alternated (Danal first, then
//                                        Toss first); the ratio Toss ÷ Danal pair by pair
//   BENCH_FLOOR=<path>                   the plain-SQL floor's script (none by default: the floor is then not run)
//   BENCH_LARGE=1 npm run bench          adds the 100,000-subscription drains (memory targets)
//   BENCH_LIVE_HEAP=<seconds>            each worker collects garbage that often during its pass and prints the heap
//                                        still alive (what the pass keeps, apart from garbage not yet collected)
//
// Memory (target 5) is measured on the service as `npm start` runs it (run `service`): src/server.ts in a process of
// its own, with the start script's node flags and compile cache, started twice (the first start fills the cache, as a
// checkout's first `npm start` does); its RSS from /proc when idle after start, every 50 ms during a pass driven
// through POST /admin/scheduler/run, and idle again after it. The bench workers' own RSS is printed too.
import { execFileSync, fork, spawn } from 'node:child_process';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createPrismaClient, type Db } from '../src/db/prisma.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../src/dev-secrets.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../test/helpers/bulk.ts';
import { truncateAll } from '../test/helpers/database.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { BENCH_ADMIN_TOKEN, memoryOf, serviceNodeEnv, serviceNodeFlags, startService } from './service-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LARGE = process.argv.includes('--large') || process.env.BENCH_LARGE === '1';
const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 2000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
const FLOOR = process.env.BENCH_FLOOR ?? '';
const TOSS_N = Number(process.env.BENCH_TOSS_SUBSCRIPTIONS ?? 1000);
const TOSS_REPEATS = Number(process.env.BENCH_TOSS_REPEATS ?? 3);
/** Toss's sandbox is served by the same sandbox process, under /toss, with its development keys (src/sandbox/server.ts). */
const TOSS_PREFIX = '/toss';
type Gateway = 'DANAL' | 'TOSS';
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
  /** process.memoryUsage() when idle and at the RSS peak (older workers report neither). */
  idle?: NodeJS.MemoryUsage;
  atPeak?: NodeJS.MemoryUsage;
  /** The mean gateway call, and the share of the slots' time spent in calls (older workers report neither). */
  callMs?: number;
  slotBusy?: number;
}

const log = pino({ level: 'error' });
const results: Record<string, unknown>[] = [];
const MB = 1024 * 1024;

export async function startSandbox() {
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
      if ((await fetch(`${url}/_control/ledger`)).ok) return { url, pid: child.pid!, stop: () => child.kill() };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('sandbox did not start');
}

export async function control(url: string, pathname: string, body?: unknown) {
  const response = await fetch(`${url}/_control${pathname}`, {
    method: body === undefined ? 'DELETE' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`sandbox ${pathname}: ${response.status} ${await response.text()}`);
}

export async function prepare(db: Db, sandboxUrl: string, count: number, latencyMs: number, events: boolean, gateway: Gateway = 'DANAL') {
  // The same emptying as between test files: every domain table, one list (test/helpers/database.ts).
  await truncateAll(db);
  for (const table of EVENT_TRIGGERS) {
    for (const trigger of [`${table}_merchant_events`, `${table}_merchant_events_insert`]) {
      await db.$executeRawUnsafe(`ALTER TABLE "${table}" ${events ? 'ENABLE' : 'DISABLE'} TRIGGER "${trigger}"`);
    }
  }
  await control(sandboxUrl, '/reset', {});
  await control(`${sandboxUrl}${TOSS_PREFIX}`, '/reset', {});
  // The gateway's own sandbox mints the keys and adds the latency to its charges.
  const gatewayUrl = gateway === 'TOSS' ? `${sandboxUrl}${TOSS_PREFIX}` : sandboxUrl;
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
  for (let done = 0; done < count; done += 5000) {
    await seedDueSubscriptions(db, keyring, { count: Math.min(5000, count - done), sandboxUrl: gatewayUrl, dueAt: new Date(Date.now() - 60_000), gateway });
  }
  await db.$executeRawUnsafe('VACUUM ANALYZE');
  const operation = gateway === 'TOSS' ? 'CHARGE' : 'BILLING_CONFIRM';
  if (latencyMs > 0) await control(gatewayUrl, '/faults', { operation, kind: 'latency', latencyMs, count: count * 2 });
}

/** Starts `replicas` service processes, releases them together, and sums what they report. */
/** `onWorkers`: told the service processes' pids once they are ready, before they start (bench/pin.ts pins them). */
export async function drain(
  databaseUrl: string,
  sandboxUrl: string,
  replicas: number,
  concurrency: number,
  tree: string,
  onWorkers?: (pids: number[]) => void,
) {
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    PAYMENT_API_BASE_URL: sandboxUrl,
    PAYMENT_SECRET_KEY: SECRET,
    PAYMENT_MERCHANT_ID: MERCHANT,
    // Both gateways configured as in production (no sandbox mounted in the service): Toss at the sandbox's /toss.
    TOSS_API_BASE_URL: `${sandboxUrl}${TOSS_PREFIX}`,
    TOSS_SECRET_KEY: TOSS_SANDBOX_SECRET_KEY,
    TOSS_CLIENT_KEY: TOSS_SANDBOX_CLIENT_KEY,
    PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    API_KEYS: 'bench_api_key_0123456789abcdef',
    ADMIN_TOKENS: 'bench_admin_token_0123456789abcdef',
    BILLING_KEY_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
    SCHEDULER_ENABLED: 'false',
    SCHEDULER_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'error',
  };
  const workers = Array.from({ length: replicas }, () =>
    fork(path.join(tree, 'bench/charge-worker.ts'), [], {
      env: { ...process.env, ...serviceNodeEnv(tree), BENCH_ENV: JSON.stringify(env) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // BENCH_PROFILE=<dir>: a V8 CPU profile of each service process (open it in Chrome DevTools).
      // BENCH_LIVE_HEAP=<seconds>: the worker collects and prints its live heap that often (bench/charge-worker.ts).
      execArgv: [
        ...serviceNodeFlags(tree),
        ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
        ...(process.env.BENCH_LIVE_HEAP ? ['--expose-gc'] : []),
      ],
    }),
  );
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  onWorkers?.(workers.map((w) => w.pid!));
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
    idleMemory: reports[0]?.idle,
    peakMemory: reports[0]?.atPeak,
    callMs: reports.reduce((n, r) => n + (r.callMs ?? Number.NaN), 0) / reports.length,
    slotBusy: reports.reduce((n, r) => n + (r.slotBusy ?? Number.NaN), 0) / reports.length,
    reports: reports.map((r) => r.report),
  };
}

/** The CPU time (user + system, ms) a process has used, from /proc. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** POST without a client timeout: a 100,000 pass answers after minutes (fetch gives up on headers after 300 s). */
export function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** " (heap used/reserved, outside the heap: idle → at the peak)", in MB, when the worker reports them. */
function memoryParts(idle?: NodeJS.MemoryUsage, peak?: NodeJS.MemoryUsage): string {
  if (!idle || !peak) return '';
  const parts = (m: NodeJS.MemoryUsage) => `${(m.heapUsed / MB).toFixed(0)}/${(m.heapTotal / MB).toFixed(0)}, ${((m.rss - m.heapTotal) / MB).toFixed(0)}`;
  return ` (heap used/reserved, rest: ${parts(idle)} → ${parts(peak)})`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One charging pass on the service as `npm start` runs it (target 5): idle RSS after start (the second start; the
 * first fills the compile cache), the RSS sampled every 50 ms during a pass run through the admin API, and the idle
 * RSS after it.
 */
async function serviceDrain(databaseUrl: string, sandboxUrl: string, tree: string) {
  const env = { PAYMENT_API_BASE_URL: sandboxUrl, SCHEDULER_CONCURRENCY: String(C) };
  const first = await startService(databaseUrl, env, [], tree);
  await sleep(3000);
  const firstIdleMb = memoryOf(first.pid).rssMb;
  await first.stop();
  const service = await startService(databaseUrl, env, [], tree);
  try {
    await sleep(3000);
    const idleRssMb = memoryOf(service.pid).rssMb;
    const cpu = cpuMsOf(service.pid);
    const sampler = service.sample(50);
    const started = process.hrtime.bigint();
    const answer = await postJson(
      `${service.base}/admin/scheduler/run`,
      { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID() },
      { reason: 'benchmark' },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const memory = sampler.stop();
    const cpuMs = cpuMsOf(service.pid) - cpu;
    if (answer.status !== 200) throw new Error(`scheduler/run answered ${answer.status}: ${answer.body}`);
    const report = JSON.parse(answer.body) as { succeeded: number };
    await sleep(3000);
    const afterRssMb = memoryOf(service.pid).rssMb;
    return {
      seconds,
      succeeded: report.succeeded,
      perSecond: report.succeeded / seconds,
      cpuMsPerCharge: cpuMs / report.succeeded,
      firstIdleRssMb: firstIdleMb,
      idleRssMb,
      peakRssMb: memory.sampledPeakMb,
      afterRssMb,
    };
  } finally {
    await service.stop();
  }
}

/**
 * Exactly one approved charge per subscription and cycle, in our records and in the gateway's ledger (the gateway
 * the run charged through: Danal's ledger, or Toss's, each orderId approved once).
 */
export async function doubleCharges(db: Db, sandboxUrl: string, gateway: Gateway = 'DANAL'): Promise<number> {
  const [row] = await db.$queryRaw<{ extra: bigint }[]>`
    SELECT count(*) - count(DISTINCT ("subscriptionId", cycle)) AS extra FROM "payments" WHERE status = 'SUCCEEDED' AND kind = 'RECURRING'`;
  const ledgerUrl = gateway === 'TOSS' ? `${sandboxUrl}${TOSS_PREFIX}/_control/ledger` : `${sandboxUrl}/_control/ledger`;
  const ledger = (await (await fetch(ledgerUrl)).json()) as { entries: Array<{ type: string; operation?: string; orderId?: string }> };
  const charges = ledger.entries.filter((e) => e.type === 'CHARGE' && (gateway === 'TOSS' || e.operation === 'BILLING_CONFIRM'));
  const repeated = charges.length - new Set(charges.map((e) => e.orderId)).size;
  const payments = await db.payment.count({ where: { status: 'SUCCEEDED', kind: 'RECURRING', gateway } });
  return Number(row!.extra) + repeated + Math.abs(charges.length - payments);
}

/** The plain-SQL floor at latency L on the same cluster (its own database), as its --json line reports it. */
function runFloor(adminUrl: string, latencyMs: number, count: number): { rate: number; cpuMsPerCharge: number; peakRssMB: number; ok: boolean } {
  const url = new URL(adminUrl);
  const out = execFileSync(
    process.execPath,
    [FLOOR, `--L=${latencyMs}`, `--N=${count}`, `--C=${C}`, '--json', `--node-flags=${serviceNodeFlags().join(' ')}`],
    {
      env: {
        PATH: process.env.PATH ?? '',
        PLAIN_DEPS: path.join(ROOT, 'node_modules'),
        PGHOST: url.hostname,
        PGPORT: url.port,
        PGUSER: decodeURIComponent(url.username),
        PGPASSWORD: decodeURIComponent(url.password),
      },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [result] = JSON.parse(out.trim().split('\n').at(-1)!) as { rate: number; cpuMsPerCharge: number; peakRssMB: number; ok: boolean }[];
  if (!result!.ok) throw new Error(`the plain-SQL floor's checks failed: ${out}`);
  return result!;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
/** "median (lowest–highest)" of a figure over the rounds, or the one value. */
function spread(values: number[], digits: number) {
  if (values.length === 0) return 'n/a';
  if (values.length === 1) return values[0]!.toFixed(digits);
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

function line(name: string, figure: string, target: string, met: boolean, baseline?: string) {
  console.log(
    `${name.padEnd(46)} ${figure.padStart(24)}   ${target.padEnd(26)} ${(met ? 'met' : 'MISSED').padEnd(7)}${baseline === undefined ? '' : `baseline ${baseline}`}`,
  );
}

async function main() {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const sandbox = await startSandbox();
  const db = createPrismaClient(embedded.adminConnectionString, { poolSize: 4 });
  const wanted = (run: string) => (ONLY ? ONLY.has(run) : (run !== 'large' && run !== 'service-large') || LARGE);
  const trees: Array<['this' | 'baseline', string]> = [['this', ROOT], ...(BASELINE ? [['baseline', BASELINE] as ['baseline', string]] : [])];
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    const version = (await db.$queryRaw<{ version: string }[]>`SELECT version()`)[0]!.version;
    console.log(
      `charging: ${N} due CARD subscriptions per run, SCHEDULER_CONCURRENCY ${C}, ${ROUNDS} round(s)${BASELINE ? `, alternated with the baseline ${BASELINE}` : ''}; node ${process.version}; ${os.cpus().length} × ${os.cpus()[0]?.model}; ${version.split(' on ')[0]}`,
    );
    type Figures = Awaited<ReturnType<typeof drain>> & { doubles: number; sandboxCpuMsPerCharge: number };
    const figures = new Map<string, Figures[]>();
    const keep = (key: string, r: Figures) => figures.set(key, [...(figures.get(key) ?? []), r]);
    const run = async (
      name: string,
      tree: ['this' | 'baseline', string],
      options: { count?: number; latencyMs: number; replicas?: number; events?: boolean; concurrency?: number; gateway?: Gateway },
    ) => {
      await prepare(db, sandbox.url, options.count ?? N, options.latencyMs, options.events ?? true, options.gateway);
      const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
      // The sandbox's CPU too: it shares the cores, and one gateway's sandbox may cost more per charge than the other's.
      const sandboxCpu = cpuMsOf(sandbox.pid);
      const drained = await drain(embedded.adminConnectionString, sandbox.url, options.replicas ?? 1, options.concurrency ?? C, tree[1]);
      const result = { ...drained, sandboxCpuMsPerCharge: (cpuMsOf(sandbox.pid) - sandboxCpu) / drained.succeeded };
      const doubles = await doubleCharges(db, sandbox.url, options.gateway);
      results.push({
        name,
        code: tree[0],
        count: options.count ?? N,
        concurrency: options.concurrency ?? C,
        ...options,
        ...result,
        doubleCharges: doubles,
        load,
      });
      console.error(
        `  ${tree[0].padEnd(8)} ${name.padEnd(22)} ${result.perSecond.toFixed(0).padStart(5)}/s  CPU ${result.cpuMsPerCharge.toFixed(2)} ms/charge  peak RSS ${result.peakRssMb.toFixed(0)} MB${memoryParts(result.idleMemory, result.peakMemory)}  statements ${result.statementsPerCharge.toFixed(2)}/charge  call ${result.callMs.toFixed(1)} ms  slots busy ${result.slotBusy.toFixed(2)}  sandbox CPU ${result.sandboxCpuMsPerCharge.toFixed(2)} ms/charge  doubles ${doubles}`,
      );
      keep(`${tree[0]} ${name}`, { ...result, doubles });
      return { ...result, doubles };
    };
    // The floor at L = 0 and, when the L = 50 ms drain runs, at L = 50 ms too: each round's floor of that latency.
    const floors: Array<{ rate: number; cpuMsPerCharge: number; peakRssMB: number }> = [];
    const floors50: Array<{ rate: number; cpuMsPerCharge: number; peakRssMB: number }> = [];
    type ServiceFigures = Awaited<ReturnType<typeof serviceDrain>> & { doubles: number };
    const serviceFigures = new Map<string, ServiceFigures[]>();
    const runService = async (name: string, tree: ['this' | 'baseline', string], count: number) => {
      await prepare(db, sandbox.url, count, 0, true);
      const result = await serviceDrain(embedded.adminConnectionString, sandbox.url, tree[1]);
      const doubles = await doubleCharges(db, sandbox.url);
      results.push({ name, code: tree[0], count, concurrency: C, latencyMs: 0, ...result, doubleCharges: doubles });
      console.error(
        `  ${tree[0].padEnd(8)} ${name.padEnd(22)} ${result.perSecond.toFixed(0).padStart(5)}/s  CPU ${result.cpuMsPerCharge.toFixed(2)} ms/charge  RSS: first start ${result.firstIdleRssMb.toFixed(0)} MB, idle ${result.idleRssMb.toFixed(0)} MB, peak ${result.peakRssMb.toFixed(0)} MB, idle after ${result.afterRssMb.toFixed(0)} MB  doubles ${doubles}`,
      );
      const key = `${tree[0]} ${name}`;
      serviceFigures.set(key, [...(serviceFigures.get(key) ?? []), { ...result, doubles }]);
    };

    if (process.env.BENCH_PROFILE && ONLY?.has('toss')) {
      // Profiling the two paths: a Danal drain, then a Toss drain, at L = 0 (profiles written in that order).
      for (const gateway of ['DANAL', 'TOSS'] as const) {
        const r = await run(`${gateway === 'TOSS' ? 'Toss' : 'Danal'} drain L=0`, trees[0]!, { count: TOSS_N, latencyMs: 0, gateway });
        console.log(`${gateway}: ${r.perSecond.toFixed(0)} charges/s, ${r.cpuMsPerCharge.toFixed(2)} ms CPU per charge`);
      }
      return;
    }
    if (process.env.BENCH_PROFILE) {
      // Profiling: the L = 0 drain alone.
      const r = await run('drain L=0', trees[0]!, { latencyMs: 0 });
      console.log(`${r.perSecond.toFixed(0)} charges/s, ${r.cpuMsPerCharge.toFixed(2)} ms CPU and ${r.statementsPerCharge.toFixed(1)} statements per charge`);
      return;
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternated: the order of the checkouts flips every round, so neither always runs first.
      const order = round % 2 === 0 ? trees : [...trees].reverse();
      for (const tree of order) {
        if (wanted('L50')) await run('drain L=50ms', tree, { latencyMs: 50 });
        if (wanted('L200')) await run('drain L=200ms C=64', tree, { latencyMs: 200, concurrency: 64 });
        if (wanted('L0')) await run('drain L=0', tree, { latencyMs: 0 });
        if (wanted('events')) await run('drain L=0 events off', tree, { latencyMs: 0, events: false });
        if (wanted('replicas')) await run('two replicas L=50ms', tree, { latencyMs: 50, replicas: 2 });
        if (wanted('large') && round === 0) await run('drain 100k L=0', tree, { count: 100_000, latencyMs: 0 });
        if (wanted('service')) await runService('service L=0', tree, N);
        if (wanted('service-large') && round === 0) await runService('service 100k L=0', tree, 100_000);
      }
      if (wanted('toss')) {
        // The Toss path beside the Danal path, this checkout only: the same count and concurrency, pairs whose order
        // flips every time so that neither path always gets the quieter moment.
        for (let pair = 0; pair < TOSS_REPEATS; pair += 1) {
          const tossFirst = (round * TOSS_REPEATS + pair) % 2 === 1;
          const paths: Gateway[] = tossFirst ? ['TOSS', 'DANAL'] : ['DANAL', 'TOSS'];
          for (const gateway of paths) {
            const name = gateway === 'TOSS' ? 'pair Toss L=50ms' : 'pair Danal L=50ms';
            await run(name, trees[0]!, { count: TOSS_N, latencyMs: 50, gateway });
          }
        }
      }
      if (wanted('floor') && (!FLOOR || !existsSync(FLOOR))) {
        if (round === 0) console.error(`  the plain-SQL floor's script ${FLOOR ? `is not at ${FLOOR}` : 'is not given'}: not run (set BENCH_FLOOR)`);
      } else if (wanted('floor')) {
        for (const latencyMs of wanted('L50') ? [50, 0] : [0]) {
          const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
          const floor = runFloor(embedded.adminConnectionString, latencyMs, N);
          (latencyMs === 0 ? floors : floors50).push(floor);
          results.push({
            name: `plain-SQL floor L=${latencyMs}`,
            code: 'floor',
            rate: floor.rate,
            cpuMsPerCharge: floor.cpuMsPerCharge,
            peakRssMB: floor.peakRssMB,
            load,
          });
          console.error(
            `  floor    plain-SQL L=${String(latencyMs).padEnd(15)}${floor.rate.toFixed(0).padStart(5)}/s  CPU ${floor.cpuMsPerCharge.toFixed(2)} ms/charge  peak RSS ${floor.peakRssMB.toFixed(0)} MB  load ${load.join(' ')}`,
          );
        }
      }
    }

    console.log(`${'figure (median and range over the rounds)'.padEnd(46)} ${'this checkout'.padStart(24)}   ${'target (issue #25)'.padEnd(26)}`);
    const of = (code: string, name: string) => figures.get(`${code} ${name}`) ?? [];
    const show = (
      label: string,
      name: string,
      pick: (r: Figures, index: number) => number,
      digits: number,
      target: string,
      met: (value: number) => boolean,
    ) => {
      const mine = of('this', name).map(pick);
      if (mine.length === 0) return;
      const base = BASELINE ? spread(of('baseline', name).map(pick), digits) : undefined;
      line(label, spread(mine, digits), target, met(median(mine)), base);
    };
    const ideal = (latencyMs: number, concurrency: number) => (concurrency * 1000) / latencyMs;
    show(
      '1. drain, L=50 ms, C=16 (× C/L)',
      'drain L=50ms',
      (r) => r.perSecond / ideal(50, C),
      2,
      '≥ 0.95 × C/L',
      (v) => v >= 0.95,
    );
    show(
      '2. drain, L=200 ms, C=64 (× C/L)',
      'drain L=200ms C=64',
      (r) => r.perSecond / ideal(200, 64),
      2,
      '≥ 0.9 × C/L',
      (v) => v >= 0.9,
    );
    show(
      '3. drain, L=0, C=16 (charges/s)',
      'drain L=0',
      (r) => r.perSecond,
      0,
      'report',
      () => true,
    );
    if (floors.length > 0) {
      // Each round's service drain against the floor of the same round.
      const ratio = (code: string) => of(code, 'drain L=0').map((r, i) => r.perSecond / floors[Math.min(i, floors.length - 1)]!.rate);
      line(
        '   plain-SQL floor, L=0 (charges/s)',
        spread(
          floors.map((f) => f.rate),
          0,
        ),
        'reference',
        true,
      );
      line(
        '   drain L=0 × the floor',
        spread(ratio('this'), 2),
        '≥ 0.9 × floor',
        median(ratio('this')) >= 0.9,
        BASELINE ? spread(ratio('baseline'), 2) : undefined,
      );
      line(
        '   floor worker CPU per charge (ms)',
        spread(
          floors.map((f) => f.cpuMsPerCharge),
          2,
        ),
        'reference',
        true,
      );
      // The CPU ratio is less disturbed by a busy machine than throughput.
      const cpuRatio = of('this', 'drain L=0').map((r, i) => r.cpuMsPerCharge / floors[Math.min(i, floors.length - 1)]!.cpuMsPerCharge);
      line('   service CPU per charge ÷ the floor worker’s', spread(cpuRatio, 2), '≤ 1.5', median(cpuRatio) <= 1.5);
    }
    if (floors50.length > 0 && of('this', 'drain L=50ms').length > 0) {
      const ratio50 = of('this', 'drain L=50ms').map((r, i) => r.perSecond / floors50[Math.min(i, floors50.length - 1)]!.rate);
      line(
        '   plain-SQL floor, L=50 ms (charges/s)',
        spread(
          floors50.map((f) => f.rate),
          0,
        ),
        'reference',
        true,
      );
      line('   drain L=50 ms × the floor', spread(ratio50, 2), '≥ 0.97 × floor', median(ratio50) >= 0.97);
    }
    show(
      '   service CPU per charge, L=0 (ms)',
      'drain L=0',
      (r) => r.cpuMsPerCharge,
      2,
      '≤ 1.0',
      (v) => v <= 1.0,
    );
    show(
      '   SQL statements per charge, L=0',
      'drain L=0',
      (r) => r.statementsPerCharge,
      2,
      'report (BEGIN/COMMIT apart)',
      () => true,
    );
    const replicaRatio = (code: string) => of(code, 'two replicas L=50ms').map((r, i) => r.perSecond / of(code, 'drain L=50ms')[i]!.perSecond);
    if (of('this', 'two replicas L=50ms').length > 0 && of('this', 'drain L=50ms').length > 0) {
      line(
        '4. two replicas, L=50 ms (× one process)',
        spread(replicaRatio('this'), 2),
        '≥ 1.9',
        median(replicaRatio('this')) >= 1.9,
        BASELINE ? spread(replicaRatio('baseline'), 2) : undefined,
      );
    }
    const danalPairs = of('this', 'pair Danal L=50ms');
    const tossPairs = of('this', 'pair Toss L=50ms');
    if (tossPairs.length > 0 && danalPairs.length === tossPairs.length) {
      const tossRatio = tossPairs.map((r, i) => r.perSecond / danalPairs[i]!.perSecond);
      line(
        `Danal path, L=50 ms, ${TOSS_N.toLocaleString('en')} due (charges/s)`,
        spread(
          danalPairs.map((r) => r.perSecond),
          0,
        ),
        'reference',
        true,
      );
      line(
        `   Toss path, L=50 ms, ${TOSS_N.toLocaleString('en')} due (charges/s)`,
        spread(
          tossPairs.map((r) => r.perSecond),
          0,
        ),
        'report',
        true,
      );
      line('   Toss ÷ Danal, pair by pair', spread(tossRatio, 2), '≥ 0.95', median(tossRatio) >= 0.95);
      line(
        '   sandbox CPU per charge, Toss ÷ Danal',
        spread(
          tossPairs.map((r, i) => r.sandboxCpuMsPerCharge / danalPairs[i]!.sandboxCpuMsPerCharge),
          2,
        ),
        'report',
        true,
      );
      line(
        '   service CPU per charge, Toss ÷ Danal',
        spread(
          tossPairs.map((r, i) => r.cpuMsPerCharge / danalPairs[i]!.cpuMsPerCharge),
          2,
        ),
        'report',
        true,
      );
    }
    const doubles = [...figures].filter(([key]) => key.startsWith('this ')).flatMap(([, rs]) => rs.map((r) => r.doubles));
    line(
      '   double charges (every run)',
      String(doubles.reduce((a, b) => a + b, 0)),
      '0',
      doubles.every((d) => d === 0),
    );
    // Target 5 on the service as `npm start` runs it; then the bench workers' own figures (buildApp in a worker
    // process, the webhook dispatcher off), kept comparable with the earlier stops.
    const showService = (label: string, name: string, pick: (r: ServiceFigures) => number, target: string, met: (value: number) => boolean) => {
      const mine = (serviceFigures.get(`this ${name}`) ?? []).map(pick);
      if (mine.length === 0) return;
      const base = BASELINE ? spread((serviceFigures.get(`baseline ${name}`) ?? []).map(pick), 0) : undefined;
      line(label, spread(mine, 0), target, met(median(mine)), base);
    };
    showService(
      '5. npm start: idle RSS after start (MB)',
      'service L=0',
      (r) => r.idleRssMb,
      '< 120',
      (v) => v < 120,
    );
    showService(
      '   npm start: first of the two starts (MB)',
      'service L=0',
      (r) => r.firstIdleRssMb,
      'report',
      () => true,
    );
    showService(
      `   npm start: peak RSS, ${N.toLocaleString('en')} pass (MB)`,
      'service L=0',
      (r) => r.peakRssMb,
      '< 200',
      (v) => v < 200,
    );
    showService(
      '   npm start: idle RSS after the pass (MB)',
      'service L=0',
      (r) => r.afterRssMb,
      '< 120',
      (v) => v < 120,
    );
    showService(
      '   npm start: peak RSS, 100,000 pass (MB)',
      'service 100k L=0',
      (r) => r.peakRssMb,
      '< 200',
      (v) => v < 200,
    );
    showService(
      '   npm start: idle RSS after 100,000 (MB)',
      'service 100k L=0',
      (r) => r.afterRssMb,
      '< 120',
      (v) => v < 120,
    );
    show(
      '   bench worker: idle RSS after start (MB)',
      'drain L=0',
      (r) => r.idleRssMb,
      0,
      '< 120',
      (v) => v < 120,
    );
    show(
      `   bench worker: peak RSS, ${N.toLocaleString('en')} drain (MB)`,
      'drain L=0',
      (r) => r.peakRssMb,
      0,
      '< 200',
      (v) => v < 200,
    );
    show(
      '   bench worker: peak RSS, 100,000 drain (MB)',
      'drain 100k L=0',
      (r) => r.peakRssMb,
      0,
      '< 200',
      (v) => v < 200,
    );
    const eventsRatio = (code: string) => of(code, 'drain L=0').map((r, i) => r.perSecond / (of(code, 'drain L=0 events off')[i]?.perSecond ?? Number.NaN));
    if (of('this', 'drain L=0 events off').length > 0 && of('this', 'drain L=0').length > 0) {
      line(
        '7. events on vs off, L=0 (× off)',
        spread(eventsRatio('this'), 2),
        '≥ 0.95',
        median(eventsRatio('this')) >= 0.95,
        BASELINE ? spread(eventsRatio('baseline'), 2) : undefined,
      );
    }
  } finally {
    await db.$disconnect();
    sandbox.stop();
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  if (!process.env.BENCH_PROFILE) writeResults('charging', results);
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
