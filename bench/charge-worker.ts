// One service process for the charging benchmark (bench/charging.bench.ts): builds the app against the database
// and the gateway it is given, waits for "go", runs one charging pass, and reports what it measured: charges,
// wall time, CPU (process.cpuUsage), peak RSS, and the SQL statements it sent besides BEGIN/COMMIT (counted at
// the pg driver, under Prisma's adapter).
import pg from 'pg';
import pino from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

let statements = 0;
/** BENCH_SQL=1: each statement's beginning and how often it was sent, printed at the end. */
const texts = new Map<string, number>();
let transactions = 0;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  const text = (typeof first === 'string' ? first : (first?.text ?? '')).trim().toUpperCase();
  if (text === 'BEGIN' || text.startsWith('BEGIN ') || text === 'COMMIT' || text === 'ROLLBACK') transactions += 1;
  else {
    statements += 1;
    if (process.env.BENCH_SQL) texts.set(text.slice(0, 90), (texts.get(text.slice(0, 90)) ?? 0) + 1);
  }
  return query.apply(this, args);
} as never;

const env = JSON.parse(process.env.BENCH_ENV!) as Record<string, string>;
const config = await loadConfig(env);
config.webhooks.enabled = process.env.BENCH_DISPATCHER === '1';
const app = await buildApp(config, { logger: pino({ level: 'error' }) });
await app.ready();

// The gateway calls' own time, to tell a slot waiting for work from a slot waiting for the gateway: the mean call and
// the share of the slots' time spent in calls (1.0: every slot was in a call all the time).
// Every gateway's adapter (Danal's and, when configured, Toss's) is timed alike.
let callMs = 0;
let calls = 0;
for (const adapter of new Set(Object.values(app.gateways))) {
  if (!adapter) continue;
  const chargeBillingKey = adapter.chargeBillingKey.bind(adapter);
  adapter.chargeBillingKey = async (...args: Parameters<typeof chargeBillingKey>) => {
    const started = process.hrtime.bigint();
    try {
      return await chargeBillingKey(...args);
    } finally {
      callMs += Number(process.hrtime.bigint() - started) / 1e6;
      calls += 1;
    }
  };
}

let atPeak = process.memoryUsage();
let peakRss = atPeak.rss;
const idleRss = peakRss;
const idle = atPeak;
// What the resident memory is made of when it peaks: V8's heap (used and reserved) and the memory outside it. The
// RSS alone is cheap to read; the whole breakdown (V8's heap statistics) cost a few per cent of the CPU per charge
// measured, so it is read only when the RSS passes its peak by a megabyte.
let brokenDownAt = peakRss;
const sample = () => {
  const rss = process.memoryUsage.rss();
  if (rss <= peakRss) return;
  peakRss = rss;
  if (rss - brokenDownAt < 1048576) return;
  atPeak = process.memoryUsage();
  brokenDownAt = rss;
};
const sampler = setInterval(sample, 50);
// BENCH_LIVE_HEAP=<seconds> (the bench then starts the worker with --expose-gc): a full collection every that many seconds of the
// pass, printing the heap still alive, to tell memory the pass keeps from garbage V8 has not collected yet.
const liveEvery = Number(process.env.BENCH_LIVE_HEAP ?? 0) * 1000;
const gc = (globalThis as { gc?: () => void }).gc;

process.send!({ ready: true, idleRss });
process.once('message', async () => {
  statements = 0;
  transactions = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const live =
    liveEvery > 0 && gc
      ? setInterval(() => {
          gc();
          const m = process.memoryUsage();
          console.error(
            `  live heap ${(m.heapUsed / 1048576).toFixed(0)} MB (reserved ${(m.heapTotal / 1048576).toFixed(0)}), RSS ${(m.rss / 1048576).toFixed(0)} MB`,
          );
        }, liveEvery)
      : undefined;
  const report = await app.charges.runPass();
  clearInterval(live);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  sample();
  clearInterval(sampler);
  if (process.env.BENCH_SQL) for (const [text, n] of [...texts].sort((a, b) => b[1] - a[1])) console.error(String(n).padStart(6), text);
  const slotBusy = callMs / (config.scheduler.concurrency * seconds * 1000);
  process.send!({
    report,
    seconds,
    cpuMs: (used.user + used.system) / 1000,
    statements,
    transactions,
    peakRss,
    idleRss,
    idle,
    atPeak,
    callMs: callMs / Math.max(calls, 1),
    slotBusy,
  });
  await app.close();
  process.exit(0);
});
