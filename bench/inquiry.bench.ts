// The inquiry pass beside a charging pass (docs/benchmarks.md "Inquiry pass"): does looking up 10,000 unknown Toss
// charges slow the charges that are due? Each round seeds N due CARD subscriptions (charged through the Danal
// sandbox, as bench/charging.bench.ts does) and U subscriptions whose last charge is an UNKNOWN Toss attempt, seeded
// by SQL two days old (so every lookup is decided: the Toss sandbox has never seen their orderIds, NOT_FOUND_PAYMENT,
// and each is finished FAILED through the late-outcome path: the heaviest write a lookup makes). A service process
// of its own (the scheduler off, Toss pointed at the standalone sandbox's /toss) then runs one charging pass: alone
// ("alone"), or while POST /admin/inquiries/run works through the unknowns ("beside"), started first. Rounds alternate
// the order (alone, beside, beside, alone, ...); each run seeds afresh. The figure is the charging pass's charges/s
// beside the inquiry pass over its charges/s alone, median of the rounds (target ≥ 0.95). Checks after each run:
// one approved charge per subscription and cycle (our records and the sandbox's ledger agree), and every unknown
// finished exactly once (FAILED, one payment.failed event each) when the inquiry pass ran.
//
//   BENCH_SUBSCRIPTIONS (2,000)  BENCH_UNKNOWNS (10,000)  BENCH_CONCURRENCY (16)  BENCH_ROUNDS (2)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrator.ts';
import { createPrismaClient, sqlQuery, type Db } from '../src/db/prisma.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../src/dev-secrets.ts';
import { createKeyring } from '../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../test/helpers/bulk.ts';
import { freePort } from '../test/setup/global-setup.ts';
import { control, doubleCharges, postJson, prepare, startSandbox, writeResults } from './charging.bench.ts';
import { BENCH_ADMIN_TOKEN, startService } from './service-process.ts';

const N = Number(process.env.BENCH_SUBSCRIPTIONS ?? 2000);
const U = Number(process.env.BENCH_UNKNOWNS ?? 10_000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TARGET = 0.95;

const log = pino({ level: 'error' });
const results: Record<string, unknown>[] = [];

/**
 * U subscriptions waiting on an UNKNOWN Toss charge, two days old: the payment (UNKNOWN, gateway TOSS) and its
 * attempt (UNKNOWN, BILLING_CONFIRM, an orderId Toss never saw), the subscription under attention (never charged).
 */
async function seedUnknowns(db: Db, sandboxUrl: string): Promise<void> {
  const keyring = createKeyring([{ id: 'k1', key: Buffer.alloc(32, 1) }]);
  const ids: string[] = [];
  for (let done = 0; done < U; done += 5000) {
    ids.push(...(await seedDueSubscriptions(db, keyring, { count: Math.min(5000, U - done), sandboxUrl, dueAt: new Date(Date.now() - 2 * 86_400_000) })));
  }
  // Due today (a decline's retry falls after this run), recorded UNKNOWN two days ago (every lookup is decided).
  const now = new Date();
  const lost = new Date(now.getTime() - 2 * 86_400_000);
  await sqlQuery(
    db,
    `WITH s AS (UPDATE "subscriptions" SET "needsAttention" = true, "attentionReason" = 'PAYMENT_OUTCOME_UNKNOWN' WHERE "id" = ANY ($1::uuid[])
                RETURNING "id", "cycle", "amount"),
          p AS (INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "gateway", "amount", "status", "orderId", "attemptCount", "dueAt",
                                        "attentionReason", "createdAt", "updatedAt")
                SELECT s."id", s."cycle", 'RECURRING'::"PaymentKind", 'CARD'::"PaymentMethod", 'TOSS'::"PaymentGateway", s."amount",
                       'UNKNOWN'::"PaymentStatus", 'T' || replace(s."id"::text, '-', '') || '-1', 1, $2::timestamptz, 'TIMEOUT', $3::timestamptz, $3::timestamptz
                  FROM s
                RETURNING "id", "orderId", "amount")
     INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "status", "sentAt", "completedAt", "gatewayMessage",
                                     "createdAt", "updatedAt")
     SELECT p."id", 1, 'BILLING_CONFIRM'::"GatewayOperation", p."orderId", p."amount", 'UNKNOWN'::"AttemptStatus", $3::timestamptz, $3::timestamptz,
            'seeded: the answer was lost', $3::timestamptz, $3::timestamptz FROM p`,
    [ids, now, lost],
  );
}

type Report = Record<string, number>;

async function post(base: string, route: string): Promise<Report> {
  const answer = await postJson(`${base}${route}`, { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'idempotency-key': randomUUID() }, { reason: 'benchmark' });
  if (answer.status !== 200) throw new Error(`${route} answered ${answer.status}: ${answer.body}`);
  return JSON.parse(answer.body) as Report;
}

const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;

/** One run: seed, start a service, one charging pass (beside an inquiry pass when `beside`), check. */
async function run(db: Db, databaseUrl: string, sandboxUrl: string, beside: boolean) {
  await prepare(db, sandboxUrl, N, 0, true);
  await seedUnknowns(db, sandboxUrl);
  await db.$executeRawUnsafe('VACUUM ANALYZE');
  const service = await startService(databaseUrl, {
    PAYMENT_API_BASE_URL: sandboxUrl,
    SCHEDULER_CONCURRENCY: String(C),
    TOSS_API_BASE_URL: `${sandboxUrl}/toss`,
    TOSS_SECRET_KEY: TOSS_SANDBOX_SECRET_KEY,
    TOSS_CLIENT_KEY: TOSS_SANDBOX_CLIENT_KEY,
  });
  try {
    let inquiry: Promise<{ report: Report; seconds: number }> | undefined;
    if (beside) {
      const started = process.hrtime.bigint();
      inquiry = post(service.base, '/admin/inquiries/run').then((report) => ({ report, seconds: seconds(started) }));
      // Under way before the charges start: wait until its first lookups are recorded.
      for (let i = 0; i < 600 && (await db.paymentAttempt.count({ where: { inquiryCount: { gt: 0 } } })) === 0; i += 1) await sleep(50);
    }
    const started = process.hrtime.bigint();
    const charging = await post(service.base, '/admin/scheduler/run');
    const chargingSeconds = seconds(started);
    const askedDuring = await db.paymentAttempt.count({ where: { inquiryCount: { gt: 0 } } });
    const inquired = inquiry ? await inquiry : undefined;
    const failedEvents = await db.event.count({ where: { type: 'payment.failed' } });
    const failedUnknowns = await db.payment.count({ where: { gateway: 'TOSS', status: 'FAILED' } });
    const extra = await doubleCharges(db, sandboxUrl);
    const ok = charging.succeeded === N && extra === 0 && (!beside || (failedUnknowns === U && failedEvents === U));
    return {
      beside,
      charges: charging.succeeded,
      chargingSeconds,
      perSecond: charging.succeeded! / chargingSeconds,
      askedDuringCharging: beside ? askedDuring : 0,
      inquiry: inquired ? { report: inquired.report, seconds: inquired.seconds, perSecond: inquired.report.asked! / inquired.seconds } : undefined,
      failedUnknowns,
      failedEvents,
      doubleCharges: extra,
      ok,
    };
  } finally {
    await service.stop();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

async function main() {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-inquiry-'));
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), port: await freePort(), database: 'postgres', persistent: false, log });
  const sandbox = await startSandbox();
  const db = createPrismaClient(embedded.adminConnectionString, { poolSize: 4 });
  try {
    await migrate({ connectionString: embedded.adminConnectionString, log });
    console.log(`inquiry: ${N} due CARD subscriptions charged, ${U} unknown Toss charges looked up, SCHEDULER_CONCURRENCY ${C}, ${ROUNDS} round(s)`);
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      const runs: Record<string, Awaited<ReturnType<typeof run>>> = {};
      for (const beside of order) {
        await control(sandbox.url, '/reset', {});
        const result = await run(db, embedded.adminConnectionString, sandbox.url, beside);
        runs[beside ? 'beside' : 'alone'] = result;
        results.push({ round, ...result });
        const inquiry = result.inquiry
          ? `; inquiry pass: ${result.inquiry.report.asked} asked, ${result.inquiry.report.failed} failed in ${result.inquiry.seconds.toFixed(1)} s (${result.inquiry.perSecond.toFixed(0)}/s), ${result.askedDuringCharging} asked while charging`
          : '';
        console.log(
          `  round ${round + 1} ${beside ? 'beside' : 'alone '}: ${result.charges} charges in ${result.chargingSeconds.toFixed(2)} s = ${result.perSecond.toFixed(0)}/s${inquiry}${result.ok ? '' : '  CHECK FAILED'}`,
        );
      }
      ratios.push(runs.beside!.perSecond / runs.alone!.perSecond);
    }
    const ratio = median(ratios);
    console.log(
      `charging beside the inquiry pass × alone: ${ratio.toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}), target ≥ ${TARGET}: ${ratio >= TARGET ? 'met' : 'missed'}`,
    );
    results.push({ ratio, ratios, target: TARGET, met: ratio >= TARGET });
  } finally {
    await db.$disconnect();
    sandbox.stop();
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
  writeResults('inquiry', results);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
