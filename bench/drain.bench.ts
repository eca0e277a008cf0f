// A first of the month of 1,000,000 (docs/scaling.md "A first of the month of 1,000,000"): N CARD subscriptions
// due on the same first of the month, drained by 1, 2 and 4 service processes (src/server.ts as `npm start` runs it,
// each told to run a pass through POST /admin/scheduler/run, as the three-replica scenario does) against the sandbox
// in another process answering each charge after L = 200 ms (its latency fault), at SCHEDULER_CONCURRENCY 64.
//
// Each configuration gets a fresh book: every table emptied, the sandbox reset, the N subscriptions seeded again
// (set-based SQL, keys minted by the sandbox 10,000 at a time), then VACUUM ANALYZE and a CHECKPOINT, so that each
// drain starts from the same state. A drain runs for a window (DRAIN_SECONDS) and is then stopped the way an operator
// stops the service (SIGTERM: no new claims, the calls in flight finish and are recorded); DRAIN_FULL=1 drains every
// subscription instead. The figures are taken between the end of the warm-up (DRAIN_WARMUP seconds after the passes
// start) and the end: charges recorded in that interval (by the payment's updatedAt, the service's clock), the CPU of
// PostgreSQL (the postmaster, its live children and those it reaped, from /proc), of each service process and of the
// sandbox, the WAL written (pg_current_wal_lsn and pg_stat_wal), the machine's busy share (/proc/stat) and the load
// average. After each drain: one approved payment per subscription and cycle, every charged subscription moved on
// by exactly one cycle, and the sandbox's ledger agreeing with our payments order by order.
//
//   node bench/drain.bench.ts                                     1,000,000 due, 1, 2 and 4 processes, 120 s windows
//   DRAIN_SUBSCRIPTIONS=20000 DRAIN_SECONDS=20 node bench/drain.bench.ts      a small run (development)
//   DRAIN_FULL=1                        drain every subscription (no window)
//   DRAIN_PROCESSES=1,2,4  DRAIN_CONCURRENCY=64  DRAIN_LATENCY_MS=200  DRAIN_WARMUP=15
//   DRAIN_SEED_ONLY=1                   seed the book once, print how long it took, and stop
//
// Not part of `npm run bench`: at 1,000,000 it takes about 20 minutes on a quiet machine (three seeds of 2 to 4 minutes,
// three windows of 2 minutes, the checks).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createPrismaClient, type Db } from '../src/db/prisma.ts';
import { billingKeyAad, createKeyring, type Keyring } from '../src/lib/crypto.ts';
import { mintCardKeys } from '../test/helpers/bulk.ts';
import { truncateAll } from '../test/helpers/database.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { control, postJson, startSandbox, writeResults } from './charging.bench.ts';
import { BENCH_ADMIN_TOKEN, startService, type ServiceProcess } from './service-process.ts';

const N = Number(process.env.DRAIN_SUBSCRIPTIONS ?? 1_000_000);
const WINDOW_S = Number(process.env.DRAIN_SECONDS ?? 120);
const WARMUP_S = Number(process.env.DRAIN_WARMUP ?? 15);
const FULL = process.env.DRAIN_FULL === '1';
const PROCESSES = (process.env.DRAIN_PROCESSES ?? '1,2,4').split(',').map(Number);
const C = Number(process.env.DRAIN_CONCURRENCY ?? 64);
const L = Number(process.env.DRAIN_LATENCY_MS ?? 200);
const SEED_ONLY = process.env.DRAIN_SEED_ONLY === '1';
/** The sandbox mints at most this many keys a call (src/sandbox/sandbox.routes.ts). */
const BATCH = 10_000;
const FIRST_BATCH = 1_000;
const AMOUNT = 9900;
const KEY = Buffer.alloc(32, 1);
// The events triggers are off while seeding (as in bench/seed.ts) and on for the drain, as in production.
const EVENT_TRIGGERS = ['subscriptions', 'payments', 'registrations', 'orders'].flatMap((t) => [
  [t, `${t}_merchant_events`],
  [t, `${t}_merchant_events_insert`],
]);
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const HZ = 100;

const log = pino({ level: 'error' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first of the month in Korea (KST, UTC+9 all year) that `now` is in: the instant every subscription is due. */
export function firstOfTheMonth(now: Date): Date {
  const korea = new Date(now.getTime() + 9 * 3600_000);
  return new Date(Date.UTC(korea.getUTCFullYear(), korea.getUTCMonth(), 1) - 9 * 3600_000);
}

/**
 * `count` ACTIVE monthly CARD subscriptions, cycle 1 due at `dueAt` (anchored a month before), each with its own
 * registration and billing key, as test/helpers/bulk.ts writes them but set-based: the sandbox mints a batch of keys
 * (one HTTP call), this process encrypts them (AES-GCM with the row id as associated data: the one thing SQL cannot
 * do here), and one statement inserts the batch's three tables from the arrays (unnest WITH ORDINALITY, the
 * registration and subscription ids drawn by gen_random_uuid). The next batch is minted while one is inserted.
 */
async function seedBook(client: pg.Client, sandboxUrl: string, keyring: Keyring, count: number, dueAt: Date, say: (line: string) => void) {
  // A month earlier: the first of the month that the instant before dueAt is in.
  const anchorAt = firstOfTheMonth(new Date(dueAt.getTime() - 1));
  for (const [table, trigger] of EVENT_TRIGGERS) await client.query(`ALTER TABLE "${table}" DISABLE TRIGGER "${trigger}"`);
  await client.query('SET synchronous_commit = off');
  // The first batch small: its MRR trigger looks for earlier movements in a table not analysed yet, a scan per row.
  const batches: Array<[number, number]> = [];
  for (let from = 0; from < count; ) {
    const size = Math.min(from === 0 ? FIRST_BATCH : BATCH, count - from);
    batches.push([from, size]);
    from += size;
  }
  const mint = async ([from, size]: [number, number]) => {
    const userIds = Array.from({ length: size }, (_, i) => `drain-user-${from + i}`);
    const keys = await mintCardKeys(sandboxUrl, userIds);
    const ids: string[] = [];
    const ivs: string[] = [];
    const tags: string[] = [];
    const texts: string[] = [];
    for (const key of keys) {
      const id = randomUUID();
      const envelope = keyring.encrypt(key.billingKey, billingKeyAad(id));
      ids.push(id);
      ivs.push(envelope.iv.toString('hex'));
      tags.push(envelope.tag.toString('hex'));
      texts.push(envelope.ciphertext.toString('hex'));
    }
    return [keys.map((k) => k.userId), ids, ivs, tags, texts];
  };
  const started = Date.now();
  let next = batches[0] ? mint(batches[0]) : undefined;
  // Time spent waiting for keys (minting beyond the inserts' time) and inserting.
  let waitedMs = 0;
  let insertMs = 0;
  for (const [index, [from]] of batches.entries()) {
    const waited = Date.now();
    const batch = await next!;
    waitedMs += Date.now() - waited;
    next = batches[index + 1] ? mint(batches[index + 1]!) : undefined;
    const inserting = Date.now();
    await client.query(
      `WITH k AS (
         SELECT k."userId", k."billingKeyId", decode(k.iv, 'hex') AS iv, decode(k.tag, 'hex') AS tag, decode(k.text, 'hex') AS text,
                gen_random_uuid() AS "registrationId", gen_random_uuid() AS "subscriptionId"
           FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS k("userId", "billingKeyId", iv, tag, text, n)),
       r AS (
         INSERT INTO "registrations" ("id", "state", "status", "orderId", "userId", "method", "amount", "orderName", "issueKeyOnly", "expiresAt",
                                      "completedAt", "createdAt", "updatedAt")
         SELECT k."registrationId", 'drain-' || k."registrationId", 'COMPLETED', 'R' || replace(k."registrationId"::text, '-', ''), k."userId", 'CARD',
                $6::int, 'Monthly plan', true, $7::timestamptz, $7::timestamptz, $7::timestamptz, $7::timestamptz
           FROM k),
       b AS (
         INSERT INTO "billing_keys" ("id", "registrationId", "userId", "method", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext", "cardName",
                                     "cardNumber", "createdAt", "updatedAt")
         SELECT k."billingKeyId", k."registrationId", k."userId", 'CARD', $9, k.iv, k.tag, k.text, 'Sandbox Card', '5365-10**-****-1234',
                $7::timestamptz, $7::timestamptz
           FROM k)
       INSERT INTO "subscriptions" ("id", "registrationId", "billingKeyId", "userId", "method", "amount", "orderName", "intervalUnit", "intervalCount",
                                    "anchorAt", "cycle", "currentPeriodStart", "currentPeriodEnd", "nextChargeAt", "changedAt", "createdAt", "updatedAt")
       SELECT k."subscriptionId", k."registrationId", k."billingKeyId", k."userId", 'CARD', $6::int, 'Monthly plan', 'month', 1,
              $7::timestamptz, 1, $7::timestamptz, $8::timestamptz, $8::timestamptz, $7::timestamptz, $7::timestamptz, $7::timestamptz
         FROM k`,
      [...batch, AMOUNT, anchorAt, dueAt, keyring.currentKeyId],
    );
    insertMs += Date.now() - inserting;
    // The first batch is written with every trigger and foreign-key check, as the service's writes would be; the
    // rest, consistent by construction, in a replica session (no ordinary trigger, no foreign-key check: PostgreSQL's
    // row triggers were most of the seeding's time, the MRR one alone about 0.5 ms a row), their MRR movements
    // written below in one statement and compared with what the trigger wrote for the first batch.
    if (from === 0) await client.query('SET session_replication_role = replica');
    else if (index % 20 === 0) say(`  seeded ${from.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  const inserted = (Date.now() - started) / 1000;
  say(`  seed: waited ${(waitedMs / 1000).toFixed(1)} s for keys, ${(insertMs / 1000).toFixed(1)} s inserting`);
  const movementsAt = Date.now();
  // What the insert trigger (prisma/functions/mrr.sql, record_mrr_movement) writes for a subscription created
  // ACTIVE: NEW, from 0 to its MRR, dated by its changedAt. Checked against the trigger's own rows just after.
  await client.query(
    `INSERT INTO "mrr_movements" ("subscriptionId", "at", "kind", "mrrBefore", "mrrAfter", "delta", "method", "statusBefore", "statusAfter", "createdAt")
     SELECT s."id", s."changedAt", 'NEW', 0, subscription_mrr(s."status", s."amount", s."intervalUnit", s."intervalCount"),
            subscription_mrr(s."status", s."amount", s."intervalUnit", s."intervalCount"), s."method", NULL, s."status", s."changedAt"
       FROM "subscriptions" s
      WHERE NOT EXISTS (SELECT 1 FROM "mrr_movements" m WHERE m."subscriptionId" = s."id")`,
  );
  await client.query('RESET session_replication_role');
  const [shape] = (
    await client.query<{ shapes: string; movements: string }>(
      `SELECT count(DISTINCT ("kind", "mrrBefore", "mrrAfter", "delta", "method", "statusBefore", "statusAfter", "at", "createdAt")) AS shapes,
              count(*) AS movements FROM "mrr_movements"`,
    )
  ).rows;
  if (Number(shape!.shapes) !== 1 || Number(shape!.movements) !== count) {
    throw new Error(`the seeded MRR movements differ from the trigger's (${shape!.shapes} shapes, ${shape!.movements} movements for ${count})`);
  }
  say(`  seed: MRR movements ${((Date.now() - movementsAt) / 1000).toFixed(1)} s`);
  for (const [table, trigger] of EVENT_TRIGGERS) await client.query(`ALTER TABLE "${table}" ENABLE TRIGGER "${trigger}"`);
  const vacuumAt = Date.now();
  await client.query('VACUUM ANALYZE');
  await client.query('CHECKPOINT');
  return { insertSeconds: inserted, vacuumSeconds: (Date.now() - vacuumAt) / 1000, seconds: (Date.now() - started) / 1000 };
}

/** user + system CPU of a process, ms; with `reaped`, its waited-for children's too. */
function cpuMsOf(pid: number, reaped = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / HZ;
  } catch {
    return 0; // gone
  }
}

/**
 * PostgreSQL's CPU, ms: the postmaster's with the children it has reaped (backends and workers that exited), and
 * every live child's (backends, checkpointer, WAL writer, autovacuum).
 */
function postgresCpuMs(postmaster: number): number {
  let total = cpuMsOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.split(') ')[1]!.split(' ')[1]);
      if (ppid === postmaster) total += cpuMsOf(Number(entry));
    } catch {
      // exited meanwhile: counted in the postmaster's reaped children
    }
  }
  return total;
}

/** The machine's busy and total CPU time, ms (every core, every process: other sessions' too). */
function machineCpuMs(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const ticks = fields.slice(0, 8).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3]! + ticks[4]!;
  return { busy: ((total - idle) * 1000) / HZ, total: (total * 1000) / HZ };
}

interface Snapshot {
  at: number;
  postgres: number;
  services: number[];
  sandbox: number;
  machine: { busy: number; total: number };
  lsn: string;
  wal?: { records: number; fpi: number; bytes: number };
  load: number[];
}

async function snapshot(db: Db, postmaster: number, services: ServiceProcess[], sandboxPid: number): Promise<Snapshot> {
  const [lsn] = await db.$queryRawUnsafe<{ lsn: string }[]>('SELECT pg_current_wal_lsn()::text AS lsn');
  // pg_stat_wal: PostgreSQL 14 and later.
  const wal = await db
    .$queryRawUnsafe<{ records: bigint; fpi: bigint; bytes: string }[]>(
      'SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes::text AS bytes FROM pg_stat_wal',
    )
    .then(([w]) => (w ? { records: Number(w.records), fpi: Number(w.fpi), bytes: Number(w.bytes) } : undefined))
    .catch(() => undefined);
  return {
    at: Date.now(),
    postgres: postgresCpuMs(postmaster),
    services: services.map((s) => cpuMsOf(s.pid)),
    sandbox: cpuMsOf(sandboxPid),
    machine: machineCpuMs(),
    lsn: lsn!.lsn,
    wal,
    load: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/**
 * What the WAL between two positions is made of, by record type (Heap/INSERT, Btree/INSERT_LEAF, …), largest
 * first: pg_walinspect (PostgreSQL 16 and later; none on older servers). The cluster keeps enough WAL for it
 * (wal_keep_size, set in main).
 */
async function walByRecord(db: Db, from: string, to: string): Promise<Array<{ kind: string; count: number; bytes: number }>> {
  try {
    await db.$executeRawUnsafe('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const rows = await db.$queryRawUnsafe<{ kind: string; count: bigint; bytes: bigint }[]>(
      `SELECT "resource_manager/record_type" AS kind, count, combined_size AS bytes
         FROM pg_get_wal_stats('${from}', '${to}', true) WHERE count > 0 ORDER BY combined_size DESC`,
    );
    return rows.map((r) => ({ kind: r.kind, count: Number(r.count), bytes: Number(r.bytes) }));
  } catch {
    return [];
  }
}

/**
 * The checks of the charging benchmark, on the whole book: no subscription and cycle approved twice; every
 * subscription that moved on moved by one cycle and has its approved payment, and none that did not; nothing left
 * IN_FLIGHT or UNKNOWN by the stop; and the sandbox's ledger holds exactly our approved payments' orderIds, once each.
 */
async function check(db: Db, sandboxUrl: string) {
  const [row] = await db.$queryRawUnsafe<{ approved: bigint; pairs: bigint; advanced: bigint; beyond: bigint; unpaid: bigint; open: bigint }[]>(`
    SELECT (SELECT count(*) FROM "payments" WHERE status = 'SUCCEEDED') AS approved,
           (SELECT count(DISTINCT ("subscriptionId", cycle)) FROM "payments" WHERE status = 'SUCCEEDED') AS pairs,
           (SELECT count(*) FROM "subscriptions" WHERE cycle = 2) AS advanced,
           (SELECT count(*) FROM "subscriptions" WHERE cycle > 2) AS beyond,
           (SELECT count(*) FROM "subscriptions" s WHERE (s.cycle = 2) <> EXISTS (
              SELECT 1 FROM "payments" p WHERE p."subscriptionId" = s.id AND p.cycle = 1 AND p.status = 'SUCCEEDED')) AS unpaid,
           (SELECT count(*) FROM "payment_attempts" WHERE status IN ('IN_FLIGHT', 'UNKNOWN')) AS open`);
  const ledger = (await (await fetch(`${sandboxUrl}/_control/ledger`)).json()) as { entries: Array<{ type: string; operation?: string; orderId?: string }> };
  const charged = ledger.entries.filter((e) => e.type === 'CHARGE' && e.operation === 'BILLING_CONFIRM').map((e) => e.orderId!);
  const ours = (await db.$queryRawUnsafe<{ orderId: string }[]>(`SELECT "orderId" FROM "payments" WHERE status = 'SUCCEEDED' AND kind = 'RECURRING'`)).map(
    (p) => p.orderId,
  );
  const theirs = new Set(charged);
  const missing = ours.filter((o) => !theirs.has(o)).length;
  const result = {
    approved: Number(row!.approved),
    doubleApprovals: Number(row!.approved - row!.pairs),
    advanced: Number(row!.advanced),
    movedTooFar: Number(row!.beyond),
    advancedWithoutPaymentOrPaidWithoutAdvance: Number(row!.unpaid),
    leftOpen: Number(row!.open),
    ledgerCharges: charged.length,
    ledgerRepeated: charged.length - theirs.size,
    ledgerMissing: missing,
    ledgerExtra: theirs.size - (ours.length - missing),
  };
  const ok =
    result.doubleApprovals === 0 &&
    result.movedTooFar === 0 &&
    result.advancedWithoutPaymentOrPaidWithoutAdvance === 0 &&
    result.leftOpen === 0 &&
    result.advanced === result.approved &&
    result.ledgerRepeated === 0 &&
    result.ledgerMissing === 0 &&
    result.ledgerExtra === 0;
  return { ...result, ok };
}

/**
 * The component nearest its limit: a service process near one core (node runs JavaScript on one thread), the
 * machine's cores near full, or the gateway's bound P × C / L (every slot waiting on a call).
 */
function saturation(figures: { cores: Record<string, number>; machineBusy: number; gatewayShare: number }): string {
  const cores = os.cpus().length;
  const [top, topCores] = Object.entries(figures.cores).sort((a, b) => b[1] - a[1])[0]!;
  if (figures.gatewayShare >= 0.9) return `gateway concurrency (${(figures.gatewayShare * 100).toFixed(0)}% of P × C / L)`;
  if (figures.machineBusy >= 0.9)
    return `the machine's ${cores} cores (${(figures.machineBusy * 100).toFixed(0)}% busy; largest: ${top} at ${topCores.toFixed(2)} cores)`;
  if (top.startsWith('service') && topCores >= 0.9) return `${top}: one core (${topCores.toFixed(2)})`;
  return `nothing at its limit (largest: ${top} at ${topCores.toFixed(2)} cores, machine ${(figures.machineBusy * 100).toFixed(0)}% busy, gateway ${(figures.gatewayShare * 100).toFixed(0)}%)`;
}

async function drainWith(db: Db, databaseUrl: string, postmaster: number, sandbox: { url: string; pid: number }, processes: number) {
  // A console session key of its own: without one the service makes development secrets and prints them.
  const env = { PAYMENT_API_BASE_URL: sandbox.url, SCHEDULER_CONCURRENCY: String(C), CONSOLE_SESSION_KEYS: Buffer.alloc(32, 3).toString('base64') };
  const services = await Promise.all(Array.from({ length: processes }, () => startService(databaseUrl, env)));
  try {
    const go = Date.now();
    const passes = services.map((s) =>
      postJson(
        `${s.base}/admin/scheduler/run`,
        { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID() },
        { reason: 'drain benchmark' },
      ),
    );
    const all = Promise.allSettled(passes);
    await Promise.race([all, sleep(WARMUP_S * 1000)]);
    const from = await snapshot(db, postmaster, services, sandbox.pid);
    if (FULL) await all;
    else await Promise.race([all, sleep(Math.max(0, WINDOW_S * 1000 - (Date.now() - go)))]);
    const to = await snapshot(db, postmaster, services, sandbox.pid);
    // Stopped as an operator stops the service: SIGTERM, the calls in flight finish and are recorded.
    await Promise.all(services.map((s) => s.stop()));
    const answers = await all;
    return { go, from, to, answers: answers.map((a) => (a.status === 'fulfilled' ? a.value.status : String(a.reason))) };
  } catch (error) {
    await Promise.all(services.map((s) => s.stop().catch(() => undefined)));
    throw error;
  }
}

async function main() {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-drain-'));
  const dataDir = path.join(workDir, 'pg');
  // Four service processes hold up to 4 × (C + 12) connections; a larger shared_buffers than the default 128 MB so
  // that the book's hot pages stay in PostgreSQL's own cache, as on a primary sized for it; the window's WAL kept for
  // pg_walinspect (retention only: what is written is the same).
  const embedded = await startEmbeddedPostgres({
    dataDir,
    port: await freePort(),
    database: 'postgres',
    persistent: false,
    settings: { max_connections: '400', shared_buffers: '1GB', wal_keep_size: '4GB' },
    log,
  });
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const sandbox = await startSandbox();
  const db = createPrismaClient(embedded.adminConnectionString, { poolSize: 4 });
  const client = new pg.Client({ connectionString: embedded.adminConnectionString });
  const keyring = createKeyring([{ id: 'k1', key: KEY }]);
  const runs: Record<string, unknown>[] = [];
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    await client.connect();
    const version = (await client.query<{ version: string }>('SELECT version()')).rows[0]!.version.split(' on ')[0];
    const dueAt = firstOfTheMonth(new Date());
    console.log(
      `drain: ${N.toLocaleString('en')} CARD subscriptions due ${dueAt.toISOString()} (the first of the month, KST); ${PROCESSES.join(', ')} process(es), ` +
        `C = ${C}, L = ${L} ms; ${FULL ? 'full drains' : `windows of ${WINDOW_S} s (figures after ${WARMUP_S} s of warm-up)`}; ` +
        `node ${process.version}; ${os.cpus().length} × ${os.cpus()[0]?.model}; ${version}`,
    );
    for (const processes of SEED_ONLY ? [0] : PROCESSES) {
      await truncateAll(db);
      await control(sandbox.url, '/reset', {});
      const seedLoad = os.loadavg().map((l) => Math.round(l * 100) / 100);
      const seeded = await seedBook(client, sandbox.url, keyring, N, dueAt, (line) => console.error(line));
      const sizes = (
        await client.query<{ name: string; mb: string }>(
          `SELECT relname AS name, round(pg_total_relation_size(c.oid) / 1048576.0) AS mb FROM pg_class c
            WHERE relname IN ('subscriptions', 'registrations', 'billing_keys', 'mrr_movements') ORDER BY relname`,
        )
      ).rows.map((r) => `${r.name} ${r.mb} MB`);
      console.log(
        `  seed: ${N.toLocaleString('en')} in ${seeded.seconds.toFixed(0)} s (inserts ${seeded.insertSeconds.toFixed(0)} s, VACUUM ANALYZE and CHECKPOINT ` +
          `${seeded.vacuumSeconds.toFixed(0)} s), load average ${seedLoad.join(' ')} → ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}; ${sizes.join(', ')}; ` +
          `sandbox RSS ${(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${sandbox.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024).toFixed(0)} MB`,
      );
      if (SEED_ONLY) {
        runs.push({ name: 'seed', count: N, ...seeded, load: seedLoad, loadAfter: os.loadavg() });
        break;
      }
      await control(sandbox.url, '/faults', { operation: 'BILLING_CONFIRM', kind: 'latency', latencyMs: L, count: N * 2 });
      const drained = await drainWith(db, embedded.adminConnectionString, postmaster, sandbox, processes);
      const { from, to } = drained;
      // The interval's two halves apart too: a rate that falls as the book drains (the claims walking past the rows
      // already charged, say) shows there, and would not carry over to a book ten times larger.
      const middle = (from.at + to.at) / 2;
      const [counted] = await db.$queryRawUnsafe<{ first: bigint; second: bigint; all: bigint }[]>(
        `SELECT count(*) FILTER (WHERE "updatedAt" >= $1 AND "updatedAt" < $2) AS first, count(*) FILTER (WHERE "updatedAt" >= $2 AND "updatedAt" < $3) AS second,
                count(*) AS all FROM "payments" WHERE status = 'SUCCEEDED'`,
        new Date(from.at),
        new Date(middle),
        new Date(to.at),
      );
      const charges = Number(counted!.first + counted!.second);
      const seconds = (to.at - from.at) / 1000;
      const halves = [Number(counted!.first) / (seconds / 2), Number(counted!.second) / (seconds / 2)];
      const [wal] = await db.$queryRawUnsafe<{ bytes: string }[]>(`SELECT pg_wal_lsn_diff('${to.lsn}', '${from.lsn}')::text AS bytes`);
      const walBytes = Number(wal!.bytes);
      const walKinds = await walByRecord(db, from.lsn, to.lsn);
      const ms = seconds * 1000;
      const serviceCpu = to.services.map((v, i) => v - from.services[i]!);
      const cores: Record<string, number> = {
        PostgreSQL: (to.postgres - from.postgres) / ms,
        sandbox: (to.sandbox - from.sandbox) / ms,
        ...Object.fromEntries(serviceCpu.map((v, i) => [`service ${i + 1}`, v / ms])),
      };
      const machineBusy = (to.machine.busy - from.machine.busy) / (to.machine.total - from.machine.total);
      const rate = charges / seconds;
      const gatewayShare = rate / ((processes * C * 1000) / L);
      const checked = await check(db, sandbox.url);
      const perCharge = (cpuMs: number) => cpuMs / charges;
      const result = {
        name: `${processes} process(es)`,
        processes,
        count: N,
        concurrency: C,
        latencyMs: L,
        full: FULL,
        windowSeconds: FULL ? undefined : WINDOW_S,
        warmupSeconds: WARMUP_S,
        seed: seeded,
        seedLoad,
        measuredSeconds: seconds,
        charges,
        chargedInAll: Number(counted!.all),
        perSecond: rate,
        perSecondByHalf: halves,
        gatewayShare,
        postgresCpuMsPerCharge: perCharge(to.postgres - from.postgres),
        serviceCpuMsPerCharge: perCharge(serviceCpu.reduce((a, b) => a + b, 0)),
        sandboxCpuMsPerCharge: perCharge(to.sandbox - from.sandbox),
        cores,
        machineBusy,
        walBytesPerCharge: walBytes / charges,
        walBytes,
        pgStatWal:
          from.wal && to.wal
            ? {
                bytesPerCharge: (to.wal.bytes - from.wal.bytes) / charges,
                recordsPerCharge: (to.wal.records - from.wal.records) / charges,
                fullPageImagesPerCharge: (to.wal.fpi - from.wal.fpi) / charges,
              }
            : undefined,
        walByRecord: walKinds.map((k) => ({ ...k, bytesPerCharge: k.bytes / charges, perCharge: k.count / charges })),
        loadFrom: from.load,
        loadTo: to.load,
        saturates: saturation({ cores, machineBusy, gatewayShare }),
        passAnswers: drained.answers,
        check: checked,
      };
      runs.push(result);
      const f = (v: number, d = 2) => v.toFixed(d);
      console.log(
        `  ${processes} process(es): ${f(rate, 0)} charges/s over ${f(seconds, 0)} s (${charges.toLocaleString('en')} charges; ${(gatewayShare * 100).toFixed(0)}% of P × C / L = ${(processes * C * 1000) / L}/s; ${f(halves[0]!, 0)}/s then ${f(halves[1]!, 0)}/s by halves)\n` +
          `    CPU per charge: PostgreSQL ${f(result.postgresCpuMsPerCharge)} ms, service ${f(result.serviceCpuMsPerCharge)} ms, sandbox ${f(result.sandboxCpuMsPerCharge)} ms\n` +
          `    cores: ${Object.entries(cores)
            .map(([k, v]) => `${k} ${f(v)}`)
            .join(', ')}; machine ${(machineBusy * 100).toFixed(0)}% busy of ${os.cpus().length} cores\n` +
          `    WAL per charge: ${f(walBytes / charges, 0)} bytes (pg_current_wal_lsn)` +
          (result.pgStatWal
            ? `, pg_stat_wal ${f(result.pgStatWal.bytesPerCharge, 0)} bytes, ${f(result.pgStatWal.recordsPerCharge, 1)} records, ${f(result.pgStatWal.fullPageImagesPerCharge)} full-page images`
            : '') +
          (walKinds.length > 0
            ? `\n    WAL by record (bytes per charge): ${walKinds
                .slice(0, 8)
                .map((k) => `${k.kind} ${f(k.bytes / charges, 0)} (${f(k.count / charges, 1)})`)
                .join(', ')}`
            : '') +
          `\n    load average ${from.load.join(' ')} → ${to.load.join(' ')}; saturates first: ${result.saturates}\n` +
          `    checks ${checked.ok ? 'passed' : 'FAILED'}: ${checked.approved.toLocaleString('en')} approved in all, ${checked.doubleApprovals} double, ${checked.leftOpen} left open, ledger ${checked.ledgerCharges.toLocaleString('en')} charges (${checked.ledgerRepeated} repeated, ${checked.ledgerMissing} missing, ${checked.ledgerExtra} extra)`,
      );
      if (!checked.ok) process.exitCode = 1;
    }
  } finally {
    await client.end().catch(() => undefined);
    await db.$disconnect();
    sandbox.stop();
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  writeResults(SEED_ONLY ? 'drain-seed' : 'drain', runs);
}

await main();
