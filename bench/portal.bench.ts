// npm run bench (part 7): the customer portal under load (issue 32's speed target). Seeds a merchant's history
// (bench/seed.ts: 100,000 subscriptions and 1,000,000 payments over 36 months; fillHistory makes one monthly
// customer's latest 36 cycles whole), starts the service in a process of its own and measures, at 20 connections:
//   1. session creation: POST /api/v1/portal-sessions with the merchant's API key (target p99 < 50 ms);
//   2. the overview (/portal) of the customer with 36 months of history, with that session's cookie (p99 < 100 ms);
//   3. a cancel: the confirmation form's POST, each for another customer's ACTIVE subscription (one session each,
//      its form fetched beforehand, untimed), so every request cancels for real (p99 < 100 ms).
// The portal's pages are limited per address (RATE_LIMIT_BROWSER) and the API per key: both lifted for the bench.
//
//   BENCH_PORTAL_SECONDS (10 per autocannon run)  BENCH_PORTAL_ROUNDS (3)  BENCH_PORTAL_CANCELS (1,000 per round)
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
import { cookieHeader, cookiesOf } from './cookies.ts';
import { fillHistory, seedHistory } from './seed.ts';
import { BENCH_API_KEY, startService } from './service-process.ts';

const SECONDS = Number(process.env.BENCH_PORTAL_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_PORTAL_ROUNDS ?? 3);
const CANCELS = Number(process.env.BENCH_PORTAL_CANCELS ?? 1000);
const SUBSCRIPTIONS = Number(process.env.BENCH_SEED_SUBSCRIPTIONS ?? 100_000);
const PAYMENTS = Number(process.env.BENCH_SEED_PAYMENTS ?? 1_000_000);
const MONTHS = Number(process.env.BENCH_SEED_MONTHS ?? 36);
const CONNECTIONS = 20;
const TARGETS = { session: 50, overview: 100, cancel: 100 };
const SESSION_KEYS = Buffer.alloc(32, 3).toString('base64');

const api = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

/** A portal session for a customer, as the merchant makes one and the customer's browser opens it: its cookie jar. */
async function openSession(base: string, userId: string): Promise<Map<string, string>> {
  const created = await fetch(`${base}/api/v1/portal-sessions`, { method: 'POST', headers: api, body: JSON.stringify({ userId }) });
  const body = (await created.json()) as { url?: string };
  if (created.status !== 201 || !body.url) throw new Error(`portal-sessions answered ${created.status}: ${JSON.stringify(body).slice(0, 300)}`);
  const opened = await fetch(body.url, { redirect: 'manual' });
  if (opened.status !== 303) throw new Error(`the portal link answered ${opened.status}`);
  return cookiesOf(opened, new Map());
}

/** The hidden fields and action of the first POST form on a page whose action matches `action`. */
function formOf(html: string, action: RegExp): { action: string; fields: Record<string, string> } {
  for (const match of html.matchAll(/<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/gi)) {
    const target = /action="([^"]+)"/.exec(match[0])?.[1]?.replaceAll('&amp;', '&');
    if (!target || !action.test(target)) continue;
    const fields: Record<string, string> = {};
    for (const input of match[1]!.matchAll(/<input\b[^>]*type="hidden"[^>]*>/gi)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      const value = /value="([^"]*)"/.exec(input[0])?.[1];
      if (name) fields[name] = value ?? '';
    }
    return { action: target, fields };
  }
  throw new Error(`no POST form with an action like ${action} on the page`);
}

/** Runs `work` over `items` with `concurrency` in flight, answering each one's latency in ms. */
async function timedPool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const started = performance.now();
        await work(item);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}
const percentile = (sorted: number[], p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]! * 10) / 10;

/** An ACTIVE CARD subscription not yet canceling for each of `count` customers (one each): each round cancels them. */
async function cancelCandidates(databaseUrl: string, count: number, skip: string): Promise<Array<{ userId: string; subscriptionId: string }>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ userId: string; subscriptionId: string }>(
      `SELECT DISTINCT ON (s."userId") s."userId", s."id" AS "subscriptionId" FROM "subscriptions" s
        WHERE s."status" = 'ACTIVE' AND NOT s."cancelAtPeriodEnd" AND s."method" = 'CARD' AND s."userId" <> $2
        ORDER BY s."userId", s."id" LIMIT $1`,
      [count, skip],
    );
    return rows;
  } finally {
    await client.end();
  }
}

async function historyCustomer(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const history = await fillHistory(client, MONTHS);
    const { rows } = await client.query<{ userId: string }>(`SELECT "userId" FROM "subscriptions" WHERE "id" = $1`, [history.subscriptionId]);
    return { ...history, userId: rows[0]!.userId };
  } finally {
    await client.end();
  }
}

async function main() {
  const log = pino({ level: 'error' });
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'billing-bench-portal-'));
  const embedded = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? embedded!.adminConnectionString;
  const results: Record<string, unknown>[] = [];
  const figures: Record<keyof typeof TARGETS, number[]> = { session: [], overview: [], cancel: [] };
  let failed = false;
  try {
    let seeded: Record<string, unknown> = { reused: databaseUrl };
    await migrate({ connectionString: databaseUrl, log });
    if (embedded) seeded = { ...(await seedHistory(databaseUrl, { subscriptions: SUBSCRIPTIONS, payments: PAYMENTS, months: MONTHS })) };
    const customer = await historyCustomer(databaseUrl);
    results.push({ seeded, customer: { payments: customer.payments, added: customer.added } });
    console.log(
      `\nPortal: seeded ${JSON.stringify(seeded)}; the overview's customer has ${customer.payments} payments (${customer.added} added to make ${MONTHS} monthly cycles whole); ` +
        `${CONNECTIONS} connections, ${SECONDS} s per autocannon run, ${CANCELS} cancels per round, ${ROUNDS} rounds`,
    );
    // BENCH_PROFILE=<dir>: a V8 CPU profile of the service process.
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const service = await startService(databaseUrl, { CONSOLE_SESSION_KEYS: SESSION_KEYS, RETURN_URL: 'https://merchant.example/account' }, profile);
    try {
      const overviewCookie = cookieHeader(await openSession(service.base, customer.userId));
      const warm = await fetch(`${service.base}/portal`, { headers: { cookie: overviewCookie } });
      const page = await warm.text();
      if (warm.status !== 200 || !page.includes('<h1')) throw new Error(`the overview answered ${warm.status}: ${page.slice(0, 300)}`);
      // One request at a time first: what each costs when nothing queues (the machine is shared; docs/benchmarks.md).
      const alone = async (name: string, send: () => Promise<Response>) => {
        const times: number[] = [];
        for (let i = 0; i < 20; i += 1) {
          const started = performance.now();
          await (await send()).arrayBuffer();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        results.push({ name, alone: true, p50: Math.round(times[10]!), max: Math.round(times[19]!) });
        console.log(`${name}: one at a time, 20 requests: median ${times[10]!.toFixed(1)} ms, slowest ${times[19]!.toFixed(1)} ms`);
      };
      await alone('session creation', () =>
        fetch(`${service.base}/api/v1/portal-sessions`, { method: 'POST', headers: api, body: JSON.stringify({ userId: customer.userId }) }),
      );
      await alone('overview', () => fetch(`${service.base}/portal`, { headers: { cookie: overviewCookie } }));
      for (let round = 0; round < ROUNDS; round += 1) {
        const sessions = await autocannon({
          url: `${service.base}/api/v1/portal-sessions`,
          method: 'POST',
          connections: CONNECTIONS,
          duration: SECONDS,
          headers: api,
          body: JSON.stringify({ userId: customer.userId }),
        });
        const overview = await autocannon({ url: `${service.base}/portal`, connections: CONNECTIONS, duration: SECONDS, headers: { cookie: overviewCookie } });
        // Each cancel is another customer's, prepared untimed: a session, its cookie, the confirmation form.
        const prepared: Array<{ cookie: string; form: ReturnType<typeof formOf> }> = [];
        for (const candidate of await cancelCandidates(databaseUrl, CANCELS, customer.userId)) {
          // The confirmation page sets the form's CSRF cookie beside the session's, as in a browser.
          const jar = await openSession(service.base, candidate.userId);
          const confirm = await fetch(`${service.base}/portal/subscriptions/${candidate.subscriptionId}/cancel`, { headers: { cookie: cookieHeader(jar) } });
          const form = formOf(await confirm.text(), /cancel$/);
          prepared.push({ cookie: cookieHeader(cookiesOf(confirm, jar)), form });
        }
        let cancelFailures = 0;
        const cancelOne = async ({ cookie, form }: (typeof prepared)[number]) => {
          const response = await fetch(new URL(form.action, service.base), {
            method: 'POST',
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(form.fields).toString(),
            redirect: 'manual',
          });
          await response.arrayBuffer();
          if (response.status !== 303) cancelFailures += 1;
        };
        // The first 20 one at a time (what a cancel costs when nothing queues), the rest at CONNECTIONS.
        const cancelsAlone = await timedPool(prepared.slice(0, 20), 1, cancelOne);
        console.log(
          `cancel: one at a time, ${cancelsAlone.length} requests: median ${percentile(cancelsAlone, 50)} ms, slowest ${cancelsAlone.at(-1)!.toFixed(1)} ms`,
        );
        const cancels = await timedPool(prepared.slice(20), CONNECTIONS, cancelOne);
        const run = {
          round,
          session: { p50: sessions.latency.p50, p99: sessions.latency.p99, requestsPerSecond: sessions.requests.average, non2xx: sessions.non2xx },
          overview: { p50: overview.latency.p50, p99: overview.latency.p99, requestsPerSecond: overview.requests.average, non2xx: overview.non2xx },
          cancel: { count: cancels.length, p50: percentile(cancels, 50), p99: percentile(cancels, 99), failures: cancelFailures },
        };
        if (sessions.non2xx || sessions.errors || overview.non2xx || overview.errors || cancelFailures) failed = true;
        results.push(run);
        figures.session.push(run.session.p99);
        figures.overview.push(run.overview.p99);
        figures.cancel.push(run.cancel.p99);
        console.log(`round ${round}: ${JSON.stringify(run)}`);
      }
    } finally {
      await service.stop();
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(`${'measure'.padEnd(34)} ${'p99 ms (median; runs)'.padStart(26)}   target`);
    for (const [name, label] of [
      ['session', 'session creation (API)'],
      ['overview', `overview, ${customer.payments} payments`],
      ['cancel', 'cancel (confirmation POST)'],
    ] as const) {
      const p99 = median(figures[name]);
      console.log(
        `${label.padEnd(34)} ${`${p99} (${figures[name].join(', ')})`.padStart(26)}   < ${TARGETS[name]} ms ${p99 < TARGETS[name] ? 'met' : 'MISSED'}`,
      );
    }
    writeResults('portal', results);
  } finally {
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

await main();
