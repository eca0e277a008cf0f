// npm run bench (part 4): importing a gateway settlement file (issue 22's speed target). Seeds a merchant's history
// (bench/seed.ts: 100,000 subscriptions, 1,000,000 payments over 24 months), writes 100,000-line settlement files
// with the sandbox's own export writer (src/sandbox/settlement-export.ts: Korean headers, UTF-8 with BOM) from what
// the gateway would have booked, and times POST /admin/settlement-imports on a service in a process of its own,
// restarted before each file, its resident memory sampled every 50 ms (and its peak read from the kernel).
//
// Each run imports a different file: run r holds the r-th most recent 100,000 gateway transactions (approvals and
// the cancels of our refunds), so every run stores new lines against the same million payments. The files carry
// what a real one does: a few amounts that differ from ours (MISMATCHED), transactions we do not know (UNMATCHED),
// and approvals of the charges whose outcome we do not know (the first file: they are resolved through the operators'
// resolve). Lines/s counts matched lines over the request's wall time.
//
//   BENCH_SETTLEMENT_LINES (100,000)  BENCH_SETTLEMENT_RUNS (3)  BENCH_SEED_SUBSCRIPTIONS (100,000)  BENCH_SEED_PAYMENTS (1,000,000)
//   BENCH_DATABASE_URL: an already seeded database (skips the embedded cluster and the seeding; files already imported
//   there are then replays or duplicates: BENCH_SETTLEMENT_FIRST=<n> starts at the n-th window).
//   BENCH_PROFILE=<dir>: a V8 CPU profile of the service.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { settlementExport } from '../src/sandbox/settlement-export.ts';
import type { LedgerEntry } from '../src/sandbox/sandbox.state.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { writeResults } from './charging.bench.ts';
import { seedHistory } from './seed.ts';
import { BENCH_ADMIN_TOKEN, memoryOf, startService } from './service-process.ts';

const LINES = Number(process.env.BENCH_SETTLEMENT_LINES ?? 100_000);
const RUNS = Number(process.env.BENCH_SETTLEMENT_RUNS ?? 3);
/** The first window (with BENCH_DATABASE_URL, to import files not imported there yet). */
const FIRST = Number(process.env.BENCH_SETTLEMENT_FIRST ?? 0);
const SUBSCRIPTIONS = Number(process.env.BENCH_SEED_SUBSCRIPTIONS ?? 100_000);
const PAYMENTS = Number(process.env.BENCH_SEED_PAYMENTS ?? 1_000_000);
/** One approval line in this many shows another amount than ours; one in FOREIGN is a transaction we never made. */
const AMOUNT_OFF = 200;
const FOREIGN = 500;

interface Booked {
  paymentId: string;
  transactionId: string | null;
  orderId: string;
  amount: number;
  method: 'CARD' | 'MOBILE';
  at: Date;
  kind: 'APPROVAL' | 'CANCEL' | 'UNKNOWN';
}

/** What the gateway booked, newest first, in the run's window: approvals, refunds' cancels, and our UNKNOWN charges' approvals. */
export async function gatewayLedger(client: pg.Client, run: number): Promise<LedgerEntry[]> {
  const { rows } = await client.query<Booked>(
    `WITH approvals AS (
       SELECT p."id", p."transactionId", p."orderId", p."amount", p."method", p."approvedAt" AS "at"
         FROM "payments" p WHERE "counts_as_paid"(p."status") AND p."approvedAt" IS NOT NULL
        ORDER BY p."approvedAt" DESC OFFSET $1 LIMIT $2),
     bounds AS (SELECT min("at") AS "from", max("at") AS "to" FROM approvals)
     SELECT a."id" AS "paymentId", a."transactionId", a."orderId", a."amount", a."method", a."at", 'APPROVAL' AS "kind" FROM approvals a
     UNION ALL
     SELECT p."id", p."transactionId", r."orderId", r."amount", p."method", r."sentAt", 'CANCEL'
       FROM approvals p JOIN "payment_attempts" r ON r."paymentId" = p."id" AND r."operation" = 'CANCEL' AND r."status" = 'SUCCEEDED'
     UNION ALL
     SELECT p."id", NULL, p."orderId", p."amount", p."method", p."dueAt", 'UNKNOWN'
       FROM "payments" p, bounds b WHERE p."status" = 'UNKNOWN' AND p."dueAt" BETWEEN b."from" AND b."to"
     ORDER BY "at" DESC`,
    [run * LINES, LINES],
  );
  return rows.slice(0, LINES).map((row, seq): LedgerEntry => {
    const at = new Date(row.at).toISOString();
    if (row.kind === 'CANCEL') {
      return {
        seq,
        type: 'CANCEL',
        operation: 'CANCEL',
        method: row.method,
        merchantId: 'BENCH',
        orderId: row.orderId,
        transactionId: `gw-cancel-${run}-${seq}`,
        originalTransactionId: row.transactionId!,
        amount: row.amount,
        at,
      };
    }
    const foreign = row.kind === 'APPROVAL' && seq % FOREIGN === FOREIGN - 1;
    return {
      seq,
      type: 'CHARGE',
      operation: 'BILLING_CONFIRM',
      method: row.method,
      merchantId: 'BENCH',
      orderId: foreign ? `foreign-${run}-${seq}` : row.orderId,
      transactionId: foreign ? `gw-foreign-${run}-${seq}` : (row.transactionId ?? `gw-late-${row.paymentId}`),
      amount: row.kind === 'APPROVAL' && seq % AMOUNT_OFF === AMOUNT_OFF - 1 ? row.amount + 100 : row.amount,
      at,
    };
  });
}

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-settlement-'));
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? embedded!.adminConnectionString;
  const runs: Record<string, unknown>[] = [];
  try {
    let seeded: Record<string, unknown> = { reused: databaseUrl };
    if (embedded) {
      await migrate({ connectionString: databaseUrl, log });
      seeded = { ...(await seedHistory(databaseUrl, { subscriptions: SUBSCRIPTIONS, payments: PAYMENTS })) };
    }
    console.log(`\nSettlement import: ${LINES} lines per file, ${RUNS} files; seeded ${JSON.stringify(seeded)}`);
    console.log(
      `${'run'.padEnd(5)} ${'lines'.padStart(7)} ${'matched'.padStart(8)} ${'s'.padStart(6)} ${'lines/s'.padStart(8)} ${'matched/s'.padStart(10)} ${'peak RSS'.padStart(9)}   targets: matched ≥ 20,000/s, peak < 250 MB`,
    );
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    for (let run = FIRST; run < FIRST + RUNS; run += 1) {
      const entries = await gatewayLedger(client, run);
      const file = settlementExport(entries, { encoding: 'utf-8', delimiter: ',' });
      const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
      const service = await startService(databaseUrl, { SETTLEMENT_MAX_BYTES: String(64 * 1024 * 1024) }, profile);
      try {
        const idleMb = memoryOf(service.pid).rssMb;
        const sampler = service.sample(50);
        const started = process.hrtime.bigint();
        const response = await fetch(`${service.base}/admin/settlement-imports?filename=bench-${run}.csv`, {
          method: 'POST',
          headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'text/csv' },
          body: file,
        });
        const body = (await response.json()) as {
          rows: number;
          newLines: number;
          summary: { matched: number; mismatched: number; unmatched: number; missing: number };
          resolved: { payments: number; refunds: number };
        };
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const memory = sampler.stop();
        if (response.status !== 201 && response.status !== 200) throw new Error(`import answered ${response.status}: ${JSON.stringify(body)}`);
        const result = {
          run,
          status: response.status,
          bytes: file.length,
          rows: body.rows,
          newLines: body.newLines,
          summary: body.summary,
          resolved: body.resolved,
          seconds,
          linesPerSecond: body.rows / seconds,
          matchedPerSecond: body.summary.matched / seconds,
          idleRssMb: idleMb,
          sampledPeakRssMb: memory.sampledPeakMb,
          peakRssMb: memory.peakMb,
        };
        runs.push(result);
        console.log(
          `${String(run).padEnd(5)} ${String(body.rows).padStart(7)} ${String(body.summary.matched).padStart(8)} ${seconds.toFixed(2).padStart(6)} ${result.linesPerSecond.toFixed(0).padStart(8)} ${result.matchedPerSecond.toFixed(0).padStart(10)} ${`${memory.peakMb.toFixed(0)} MB`.padStart(9)}   ${JSON.stringify({ summary: body.summary, resolved: body.resolved, idleRssMb: Math.round(idleMb), sampledPeakMb: Math.round(memory.sampledPeakMb) })}`,
        );
      } finally {
        await service.stop();
      }
    }
    await client.end();
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const matched = median(runs.map((r) => r.matchedPerSecond as number));
    const peak = Math.max(...runs.map((r) => r.peakRssMb as number));
    console.log(
      `median matched lines/s ${matched.toFixed(0)} (target ≥ 20,000: ${matched >= 20_000 ? 'met' : 'MISSED'}); highest peak RSS ${peak.toFixed(0)} MB (target < 250: ${peak < 250 ? 'met' : 'MISSED'})`,
    );
    writeResults('settlement', [{ seeded }, ...runs]);
  } finally {
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
