// npm run bench (part 6): the operator console's pages under load (issue 24's speed target). Seeds a merchant's
// history (bench/seed.ts: 100,000 subscriptions and 1,000,000 payments with their attempts over 36 months, so the
// oldest monthly subscriptions have 36 months of history), starts the service in a process of its own, imports a
// settlement file of the last 7 days (importLastWeek: reconciliation items for Needs attention), signs in to
// the console once as an operator would (the login form's CSRF token, an admin token, the session cookie), and
// drives each page with autocannon at 10 connections with that session cookie: Needs attention, the Subscription
// page of a monthly subscription with 36 months of payments (fillHistory), and a payments list page (the first one,
// and one deep in the list through its cursor). Target: p99 < 100 ms for each, rendered server-side.
//
//   BENCH_CONSOLE_SECONDS (10 per page)  BENCH_CONSOLE_ROUNDS (3: each page this many times, in turn)
//   BENCH_SEED_SUBSCRIPTIONS (100,000)  BENCH_SEED_PAYMENTS (1,000,000)  BENCH_SEED_MONTHS (36)
//   BENCH_DATABASE_URL: an already seeded database (skips the embedded cluster and the seeding).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { writeResults } from './charging.bench.ts';
import { signIn } from './cookies.ts';
import { fillHistory, seedHistory } from './seed.ts';
import { BENCH_ADMIN_TOKEN, startService } from './service-process.ts';

const SECONDS = Number(process.env.BENCH_CONSOLE_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_CONSOLE_ROUNDS ?? 3);
const SUBSCRIPTIONS = Number(process.env.BENCH_SEED_SUBSCRIPTIONS ?? 100_000);
const PAYMENTS = Number(process.env.BENCH_SEED_PAYMENTS ?? 1_000_000);
const MONTHS = Number(process.env.BENCH_SEED_MONTHS ?? 36);
const TARGET_MS = 100;
const SESSION_KEYS = Buffer.alloc(32, 3).toString('base64');

/** The pages' subjects: the subscription with 36 months of history, and a cursor 5,000 payments deep. */
async function subjects(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const history = await fillHistory(client, MONTHS);
    const deep = await client.query<{ createdAt: Date; id: string }>(
      `SELECT "createdAt", "id" FROM "payments" ORDER BY "createdAt" DESC, "id" DESC OFFSET 5000 LIMIT 1`,
    );
    const unknown = await client.query<{ count: number }>(`SELECT count(*)::int AS "count" FROM "payments" WHERE "status" = 'UNKNOWN'`);
    return { history, deep: deep.rows[0]!, unknownPayments: unknown.rows[0]!.count };
  } finally {
    await client.end();
  }
}

/**
 * A settlement file of the last 7 days' succeeded payments, every 50th left out (so the ledger has MISSING items for
 * Needs attention), imported through the admin route as an operator would: the console's reads then cover real
 * reconciliation items. Answers the import's summary.
 */
async function importLastWeek(databaseUrl: string, base: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ line: string }>(
      `SELECT concat_ws(',', p."transactionId", p."orderId", 'APPROVAL', p."amount", to_char(p."approvedAt" AT TIME ZONE 'Asia/Seoul', 'YYYYMMDDHH24MISS')) AS "line"
         FROM "payments" p
        WHERE "counts_as_paid"(p."status") AND p."approvedAt" >= now() - interval '7 days' AND p."transactionId" IS NOT NULL
        ORDER BY p."approvedAt", p."id"`,
    );
    const kept = rows.filter((_, i) => i % 50 !== 0).map((r) => r.line);
    const csv = `transactionId,orderId,type,amount,tradedAt\n${kept.join('\n')}\n`;
    const response = await fetch(`${base}/admin/settlement-imports?filename=last-week.csv`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'text/csv' },
      body: csv,
    });
    const body = (await response.json()) as Record<string, unknown>;
    if (response.status !== 201 && response.status !== 200)
      throw new Error(`the settlement import answered ${response.status}: ${JSON.stringify(body).slice(0, 500)}`);
    return { lines: kept.length, coverage: body.coverage, summary: body.summary };
  } finally {
    await client.end();
  }
}

/** The cursor of lib/pagination.ts for a row's key (opaque to clients; the bench builds it like api.bench.ts). */
const cursorOf = (key: { createdAt: Date; id: string }) => Buffer.from(JSON.stringify([key.createdAt.toISOString(), key.id]), 'utf8').toString('base64url');

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-console-'));
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? embedded!.adminConnectionString;
  const results: Record<string, unknown>[] = [];
  let failed = false;
  try {
    let seeded: Record<string, unknown> = { reused: databaseUrl };
    if (embedded) {
      await migrate({ connectionString: databaseUrl, log });
      seeded = { ...(await seedHistory(databaseUrl, { subscriptions: SUBSCRIPTIONS, payments: PAYMENTS, months: MONTHS })) };
    }
    const subject = await subjects(databaseUrl);
    results.push({ seeded, subject });
    console.log(
      `\nConsole: seeded ${JSON.stringify(seeded)}; the Subscription page's subscription has ${subject.history.payments} payments (${subject.history.added} of them added to make its latest ${MONTHS} monthly cycles whole); ` +
        `${subject.unknownPayments} UNKNOWN payments; 10 connections, ${SECONDS} s per page, ${ROUNDS} rounds`,
    );
    // The console's pages are limited per operator like the admin routes (RATE_LIMIT_ADMIN): lifted, as the API bench lifts its own.
    const service = await startService(databaseUrl, { CONSOLE_SESSION_KEYS: SESSION_KEYS, RATE_LIMIT_ADMIN: '100000000' });
    const byPage = new Map<string, Array<{ p50: number; p99: number; requestsPerSecond: number }>>();
    try {
      const settlement = await importLastWeek(databaseUrl, service.base);
      results.push({ settlement });
      console.log(`Settlement file imported: ${JSON.stringify(settlement)}`);
      const headers = { cookie: await signIn(service.base) };
      const pages: Array<[string, string]> = [
        ['Needs attention', '/console'],
        [`Subscription (${subject.history.payments} payments)`, `/console/subscriptions/${subject.history.subscriptionId}`],
        ['Payments list, first page', '/console/payments'],
        ['Payments list, 5,000 deep', `/console/payments?cursor=${cursorOf(subject.deep)}`],
      ];
      for (const [name, url] of pages) {
        const warm = await fetch(`${service.base}${url}`, { headers, redirect: 'manual' });
        const body = await warm.text();
        if (warm.status !== 200 || !body.includes('<h1>')) throw new Error(`${name} (${url}) answered ${warm.status}: ${body.slice(0, 300)}`);
      }
      // One request at a time first: what a page costs when nothing queues (the machine is shared; see docs/benchmarks.md).
      for (const [name, url] of pages) {
        const times: number[] = [];
        for (let i = 0; i < 20; i += 1) {
          const started = performance.now();
          await (await fetch(`${service.base}${url}`, { headers })).text();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const alone = { name, alone: true, p50: Math.round(times[10]!), max: Math.round(times[19]!) };
        results.push(alone);
        console.log(`${name}: one at a time, 20 requests: median ${alone.p50} ms, slowest ${alone.max} ms`);
      }
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const [name, url] of pages) {
          const r = await autocannon({ url: `${service.base}${url}`, connections: 10, duration: SECONDS, headers });
          const run = {
            name,
            round,
            p50: r.latency.p50,
            p99: r.latency.p99,
            requestsPerSecond: r.requests.average,
            non2xx: r.non2xx,
            errors: r.errors,
            statusCodes: r.statusCodeStats,
          };
          if (r.non2xx) console.log(`${name}: ${r.non2xx} answers were not 2xx: ${JSON.stringify(r.statusCodeStats)}`);
          if (r.non2xx || r.errors) failed = true;
          results.push(run);
          byPage.set(name, [...(byPage.get(name) ?? []), run]);
        }
      }
    } finally {
      await service.stop();
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(`${'page'.padEnd(36)} ${'p50 ms'.padStart(7)} ${'p99 ms (median; runs)'.padStart(26)} ${'req/s'.padStart(7)}   target p99 < ${TARGET_MS} ms`);
    for (const [name, runs] of byPage) {
      const p99 = median(runs.map((r) => r.p99));
      console.log(
        `${name.padEnd(36)} ${String(median(runs.map((r) => r.p50))).padStart(7)} ${`${p99} (${runs.map((r) => r.p99).join(', ')})`.padStart(26)} ${median(
          runs.map((r) => r.requestsPerSecond),
        )
          .toFixed(0)
          .padStart(7)}   ${p99 < TARGET_MS ? 'met' : 'MISSED'}`,
      );
    }
    writeResults('console', results);
  } finally {
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

await main();
