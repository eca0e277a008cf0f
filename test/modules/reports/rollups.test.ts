// The reports' pre-aggregated figures (migration 20261124210000_report_rollups) against the raw rows: every report,
// as the routes answer it, equals the aggregation of the raw payments, attempts, external refunds and movements that
// the reports ran before the roll-ups (the oracle below is that aggregation, kept here as the test's own spelling).
// Histories: one written through the service's real paths (charges through Danal and Toss, declines and retries,
// refunds in part and in full on both gateways, an external refund, an UNKNOWN payment resolved with a back-dated
// approval, across 23:59/00:00 KST and several months); one made in SQL by the benchmarks' seeder, then changed by
// statements the triggers must follow (gateways, resolves, refunds, amounts, statuses leaving the counted ones); and
// concurrent approvals on one Korea day. The revenue report's byMethod and byGateway are each the raw rows' split.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { seedHistory } from '../../../bench/seed.ts';
import { sqlQuery } from '../../../src/db/prisma.ts';
import { monthsBetweenDays, type Period, periodsBetween, rate } from '../../../src/modules/reports/periods.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { subscribeThroughToss } from '../../helpers/gateways.ts';
import { waitFor } from '../../helpers/service.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
const ZONE = 'Asia/Seoul';
const kst = (local: string) => new Date(`${local}+09:00`);

const post = (url: string, payload: object, headers: Record<string, string> = adminHeaders) =>
  running.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, payload });

async function get(url: string) {
  const response = await running.app.inject({ method: 'GET', url, headers: adminHeaders });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

// ── The oracle: the raw rows, aggregated as the reports did before the roll-ups ──────────────────────────────────
type Money = { count: number; amount: number };
type Figures = { payments: Money; refunds: Money; net: number };

async function oracleRevenue(periods: Period[]) {
  const rows = await sqlQuery<{
    start: Date;
    label: string;
    method: 'CARD' | 'MOBILE';
    gateway: 'DANAL' | 'TOSS';
    pc: number;
    pa: number;
    rc: number;
    ra: number;
  }>(
    running.app.db,
    `WITH periods AS (SELECT * FROM unnest($1::timestamptz[], $2::timestamptz[], $3::text[]) AS p("start", "end", "label")),
     moved AS (
       SELECT pay."method", pay."gateway", pay."approvedAt" AS "at", pay."amount", 1 AS "payments", 0 AS "refunds"
         FROM "payments" pay WHERE pay."status" IN ('SUCCEEDED', 'CANCELED') AND pay."approvedAt" IS NOT NULL
       UNION ALL
       SELECT pay."method", pay."gateway", COALESCE(a."sentAt", a."completedAt", a."createdAt"), a."amount", 0, 1
         FROM "payment_attempts" a JOIN "payments" pay ON pay."id" = a."paymentId"
        WHERE a."operation" = 'CANCEL' AND a."status" = 'SUCCEEDED'
       UNION ALL
       SELECT pay."method", pay."gateway", e."recordedAt", e."amount", 0, 1 FROM "external_refunds" e JOIN "payments" pay ON pay."id" = e."paymentId")
     SELECT p."label", m."method", m."gateway", sum(m."payments")::int AS "pc", COALESCE(sum(m."amount") FILTER (WHERE m."payments" = 1), 0)::float8 AS "pa",
            sum(m."refunds")::int AS "rc", COALESCE(sum(m."amount") FILTER (WHERE m."refunds" = 1), 0)::float8 AS "ra"
       FROM periods p JOIN moved m ON m."at" >= p."start" AND m."at" < p."end"
      GROUP BY 1, 2, 3`,
    [periods.map((p) => p.start), periods.map((p) => p.end), periods.map((p) => p.label)],
  );
  const figures = (found: typeof rows): Figures => {
    const payments = { count: found.reduce((s, r) => s + r.pc, 0), amount: found.reduce((s, r) => s + r.pa, 0) };
    const refunds = { count: found.reduce((s, r) => s + r.rc, 0), amount: found.reduce((s, r) => s + r.ra, 0) };
    return { payments, refunds, net: payments.amount - refunds.amount };
  };
  return periods.map((period) => {
    const mine = rows.filter((r) => r.label === period.label);
    return {
      period: period.label,
      ...figures(mine),
      byMethod: { CARD: figures(mine.filter((r) => r.method === 'CARD')), MOBILE: figures(mine.filter((r) => r.method === 'MOBILE')) },
      byGateway: { DANAL: figures(mine.filter((r) => r.gateway === 'DANAL')), TOSS: figures(mine.filter((r) => r.gateway === 'TOSS')) },
    };
  });
}

async function oracleRecovery(periods: Period[]) {
  const rows = await sqlQuery<{ label: string; failed: number; recovered: number; lost: number; amount: number }>(
    running.app.db,
    `WITH periods AS (SELECT * FROM unnest($1::timestamptz[], $2::timestamptz[], $3::text[]) AS p("start", "end", "label")),
     declined AS (
       SELECT pay."subscriptionId", pay."cycle", min(a."completedAt") AS "at"
         FROM "payments" pay JOIN "payment_attempts" a ON a."paymentId" = pay."id"
        WHERE pay."subscriptionId" IS NOT NULL AND pay."cycle" IS NOT NULL AND pay."kind" <> 'INITIAL'
          AND a."operation" = 'BILLING_CONFIRM' AND a."status" = 'DECLINED' AND a."completedAt" IS NOT NULL
        GROUP BY 1, 2),
     paid AS (
       SELECT pay."subscriptionId", pay."cycle", sum(pay."amount") AS "amount"
         FROM "payments" pay WHERE pay."status" IN ('SUCCEEDED', 'CANCELED') AND pay."approvedAt" IS NOT NULL
        GROUP BY 1, 2)
     SELECT p."label", count(*)::int AS "failed", count(paid."amount")::int AS "recovered",
            count(*) FILTER (WHERE paid."amount" IS NULL
                               AND (s."status" = 'CANCELED' OR (s."attentionReason" = 'MOBILE_WINDOW_CLOSED' AND s."cycle" = d."cycle")))::int AS "lost",
            COALESCE(sum(paid."amount"), 0)::float8 AS "amount"
       FROM periods p JOIN declined d ON d."at" >= p."start" AND d."at" < p."end"
       JOIN "subscriptions" s ON s."id" = d."subscriptionId"
       LEFT JOIN paid ON paid."subscriptionId" = d."subscriptionId" AND paid."cycle" = d."cycle"
      GROUP BY 1`,
    [periods.map((p) => p.start), periods.map((p) => p.end), periods.map((p) => p.label)],
  );
  return periods.map((period) => {
    const row = rows.find((r) => r.label === period.label) ?? { failed: 0, recovered: 0, lost: 0, amount: 0 };
    return {
      month: period.label,
      failedCycles: row.failed,
      recovered: row.recovered,
      lost: row.lost,
      open: row.failed - row.recovered - row.lost,
      recoveryRate: rate(row.recovered, row.failed),
      recoveredAmount: row.amount,
    };
  });
}

async function oracleMrr(periods: Period[]) {
  const [before] = await sqlQuery<{ mrr: number; subscriptions: number }>(
    running.app.db,
    `SELECT COALESCE(sum("delta"), 0)::float8 AS "mrr",
            COALESCE(sum(CASE "kind" WHEN 'NEW' THEN 1 WHEN 'REACTIVATION' THEN 1 WHEN 'CHURN' THEN -1 ELSE 0 END), 0)::int AS "subscriptions"
       FROM "mrr_movements" WHERE "at" < $1`,
    [periods[0]!.start],
  );
  const rows = await sqlQuery<{ label: string; kind: string; delta: number; n: number }>(
    running.app.db,
    `SELECT p."label", m."kind"::text AS "kind", sum(m."delta")::float8 AS "delta", count(*)::int AS "n"
       FROM unnest($1::timestamptz[], $2::timestamptz[], $3::text[]) AS p("start", "end", "label")
       JOIN "mrr_movements" m ON m."at" >= p."start" AND m."at" < p."end"
      GROUP BY 1, 2`,
    [periods.map((p) => p.start), periods.map((p) => p.end), periods.map((p) => p.label)],
  );
  let mrr = before!.mrr;
  let subscriptions = before!.subscriptions;
  return periods.map((period) => {
    const of = (kind: string) => rows.find((r) => r.label === period.label && r.kind === kind) ?? { delta: 0, n: 0 };
    const startingMrr = mrr;
    const startingSubscriptions = subscriptions;
    const moved = {
      new: of('NEW').delta,
      expansion: of('EXPANSION').delta,
      reactivation: of('REACTIVATION').delta,
      contraction: 0 - of('CONTRACTION').delta,
      churn: 0 - of('CHURN').delta,
    };
    mrr += moved.new + moved.expansion + moved.reactivation - moved.contraction - moved.churn;
    subscriptions += of('NEW').n + of('REACTIVATION').n - of('CHURN').n;
    return {
      month: period.label,
      startingMrr,
      ...moved,
      endingMrr: mrr,
      startingSubscriptions,
      endingSubscriptions: subscriptions,
      newSubscriptions: of('NEW').n,
      churnedSubscriptions: of('CHURN').n,
    };
  });
}

/** Every report over [fromDay, toDay] (and its months) as the routes answer it, against the oracle. */
async function expectReportsEqualRaw(fromDay: string, toDay: string): Promise<{ payments: number }> {
  const now = running.app.clock.now();
  const fromMonth = fromDay.slice(0, 7);
  const toMonth = toDay.slice(0, 7);
  const daily = await get(`/admin/reports/revenue?from=${fromDay}&to=${toDay}`);
  expect(daily.items).toEqual(await oracleRevenue(periodsBetween(fromDay, toDay, 'day', ZONE, now)));
  const monthly = await get(`/admin/reports/revenue?from=${fromDay}&to=${toDay}&granularity=month`);
  expect(monthly.items).toEqual(await oracleRevenue(monthsBetweenDays(fromDay, toDay, ZONE, now)));
  const recovery = await get(`/admin/reports/recovery?from=${fromMonth}&to=${toMonth}`);
  expect(recovery.months).toEqual(await oracleRecovery(periodsBetween(fromMonth, toMonth, 'month', ZONE, now)));
  const mrr = await get(`/admin/reports/mrr?from=${fromMonth}&to=${toMonth}`);
  const expected = await oracleMrr(periodsBetween(fromMonth, toMonth, 'month', ZONE, now));
  // The oracle's fields (the rates follow from them, through the same code as before the roll-ups).
  const fields = Object.keys(expected[0]!);
  expect(mrr.months.map((month: Record<string, unknown>) => Object.fromEntries(fields.map((field) => [field, month[field]])))).toEqual(expected);
  return { payments: daily.items.reduce((sum: number, item: Figures) => sum + item.payments.count, 0) };
}

describe('the reports from their pre-aggregated figures equal the raw rows', () => {
  it('a history through the service’s own paths, across 23:59/00:00 KST and several months, checked at each step', async () => {
    const check = async () => {
      await expectReportsEqualRaw('2030-01-01', '2030-06-30');
      await expectReportsEqualRaw('2030-02-01', '2030-02-01'); // one day, whole or the one that holds now
    };
    await setClock(running.app, new Date('2030-01-31T14:59:30Z')); // 23:59:30 KST, January 31
    const card = await subscribe(running.app, { amount: 9900 });
    const declined = await subscribe(running.app, { amount: 7000 });
    // A Toss subscription (key-only: this pass charges it, through Toss, on January 31; its renewals come with the others).
    const { subscriptionId: toss } = await subscribeThroughToss(running.app, { amount: 12_000, userId: 'toss-user' });
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    await setClock(running.app, new Date('2030-01-31T15:00:00Z')); // 00:00 KST, February 1: the day that holds now
    const mobile = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    const lost = await subscribe(running.app, { amount: 3000 });
    await check();

    // A refund in part, then the rest, on the next day: the payment still counts on its own day.
    await setClock(running.app, kst('2030-02-01T00:00:30'));
    const [first] = await paymentsOf(running.app, card);
    expect((await post(`/admin/payments/${first!.id}/cancel`, { amount: 1000, reason: 'part' })).statusCode).toBe(200);
    // And a part of the Toss payment, through Toss: on the Toss line of the day.
    const [tossFirst] = await paymentsOf(running.app, toss);
    const tossRefund = await post(`/admin/payments/${tossFirst!.id}/cancel`, { amount: 2_500, reason: 'part' });
    expect(tossRefund.json(), tossRefund.body).toMatchObject({ gateway: 'TOSS', canceledAmount: 2_500 });
    await check();
    await setClock(running.app, kst('2030-02-02T09:00:00'));
    expect((await post(`/admin/payments/${first!.id}/cancel`, { reason: 'rest' })).statusCode).toBe(200);
    await check();

    // The renewals at the end of February (approved in one batch by the charging pass), two declined, one UNKNOWN.
    await setClock(running.app, kst('2030-02-28T23:59:50'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 2 });
    await runPass(running.app);
    await setClock(running.app, kst('2030-03-01T00:00:10'));
    await runPass(running.app);
    await check();
    await setClock(running.app, kst('2030-03-01T10:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    await runPass(running.app);
    await check();

    // An operator cancels one past-due subscription: its declined cycle is lost (its subscription's trigger).
    const pastDue = await running.app.db.subscription.findMany({ where: { status: 'PAST_DUE' }, orderBy: { id: 'asc' } });
    expect(pastDue.length).toBeGreaterThanOrEqual(1);
    await setClock(running.app, kst('2030-03-01T11:00:00'));
    const cancelled = await post(`/admin/subscriptions/${pastDue[0]!.id}/cancel`, { reason: 'customer left' });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    await check();

    // The retries: the others recover, or are declined again.
    for (const day of ['03-02', '03-04', '03-06', '03-08']) {
      await setClock(running.app, kst(`2030-${day}T10:00:00`));
      await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 1 });
      await runPass(running.app);
      await check();
    }

    // An UNKNOWN payment resolved SUCCEEDED on a later day, with the approval time it really had (the day before).
    const unknown = (await Promise.all([card, declined, mobile, lost].map((id) => paymentsOf(running.app, id)))).flat().filter((p) => p.status === 'UNKNOWN');
    for (const payment of unknown) {
      await setClock(running.app, kst('2030-03-12T10:00:00'));
      const resolved = await post(`/admin/payments/${payment.id}/resolve`, {
        outcome: 'SUCCEEDED',
        transactionId: `tx-resolved-${payment.id.slice(0, 8)}`,
        approvedAt: kst('2030-03-10T23:59:59').toISOString(),
        reason: 'confirmed with the gateway',
      });
      expect(resolved.statusCode, resolved.body).toBe(200);
    }
    await check();

    // An external refund of the MOBILE payment after its month, recorded at 00:00 KST.
    await setClock(running.app, new Date('2030-03-31T15:00:00Z'));
    const [mobilePayment] = await paymentsOf(running.app, mobile);
    const external = await post(`/admin/payments/${mobilePayment!.id}/refunds/external`, { amount: 2_000, reason: 'bank transfer' });
    expect(external.statusCode, external.body).toBe(201);
    await check();

    // Months later: the whole history is in whole days and months of the tables.
    for (const at of ['2030-04-30T23:59:00', '2030-05-31T12:00:00', '2030-07-02T10:00:00']) {
      await setClock(running.app, kst(at));
      await runPass(running.app);
    }
    const { payments } = await expectReportsEqualRaw('2030-01-01', '2030-07-31');
    expect(payments).toBeGreaterThanOrEqual(8);
    // The history holds what it promises: three gateway refunds (one through Toss) and an external one, a resolve, declined cycles
    // recovered and lost.
    expect(unknown.length).toBeGreaterThanOrEqual(1);
    const [kinds] = await sqlQuery<{ refunds: number; external: number; recovered: number; lost: number }>(
      running.app.db,
      `SELECT (SELECT count(*) FROM "payment_attempts" WHERE "operation" = 'CANCEL' AND "status" = 'SUCCEEDED')::int AS "refunds",
              (SELECT count(*) FROM "external_refunds")::int AS "external",
              (SELECT count(*) FROM "recovery_cycles" WHERE "paidAmount" IS NOT NULL)::int AS "recovered",
              (SELECT count(*) FROM "recovery_cycles" WHERE "lost")::int AS "lost"`,
      [],
    );
    expect(kinds).toMatchObject({ refunds: 3, external: 1 });
    const [tossPaid] = await sqlQuery<{ n: number }>(
      running.app.db,
      `SELECT count(*)::int AS "n" FROM "payments" WHERE "gateway" = 'TOSS' AND "status" = 'SUCCEEDED'`,
      [],
    );
    expect(tossPaid!.n).toBeGreaterThanOrEqual(3); // its first charge and renewals, through Toss
    expect(kinds!.recovered).toBeGreaterThanOrEqual(1);
    expect(kinds!.lost).toBeGreaterThanOrEqual(1);
  });

  it('the test helpers empty every roll-up table between tests (the history above filled each of them)', async () => {
    const [counts] = await sqlQuery<Record<string, number>>(
      running.app.db,
      `SELECT (SELECT count(*) FROM "revenue_days")::int AS "revenue_days", (SELECT count(*) FROM "recovery_cycles")::int AS "recovery_cycles",
              (SELECT count(*) FROM "recovery_months")::int AS "recovery_months", (SELECT count(*) FROM "mrr_months")::int AS "mrr_months"`,
      [],
    );
    expect(counts).toEqual({ revenue_days: 0, recovery_cycles: 0, recovery_months: 0, mrr_months: 0 });
  });

  it('a history made in SQL (the seeder’s rebuild), then changed by statements the triggers follow', async () => {
    const now = kst('2030-06-15T12:00:00');
    await setClock(running.app, now);
    await seedHistory(running.databaseUrl, { subscriptions: 300, payments: 2500, months: 6, now, declineRate: 0.2, unknownRate: 0.3 });
    await expectReportsEqualRaw('2029-12-01', '2030-06-30');
    await expectReportsEqualRaw('2030-03-17', '2030-06-15');

    const changes = [
      // A third of the CARD payments not refunded yet on Toss (the refunds below then count under Toss). The service
      // never changes a payment's gateway once written (it is charged and refunded where it was made); the payments'
      // trigger moves its own line all the same, as for its method. (A refund already counted keeps its line.)
      `UPDATE "payments" p SET "gateway" = 'TOSS' WHERE p."method" = 'CARD' AND hashtext(p."id"::text) % 3 = 0
          AND NOT EXISTS (SELECT 1 FROM "payment_attempts" a WHERE a."paymentId" = p."id" AND a."operation" = 'CANCEL')
          AND NOT EXISTS (SELECT 1 FROM "external_refunds" e WHERE e."paymentId" = p."id")`,
      // Resolves of UNKNOWN payments, approved the day before they were due (back-dated), one statement for all.
      `UPDATE "payments" SET "status" = 'SUCCEEDED', "approvedAt" = "dueAt" - interval '1 day', "transactionId" = 'r-' || "id", "attentionReason" = NULL
        WHERE "status" = 'UNKNOWN'`,
      // Gateway refunds in part of every twentieth success, on the day after the approval; a full refund cancels it.
      `INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "status", "sentAt", "completedAt", "updatedAt")
       SELECT p."id", 10, 'CANCEL', 'cx-' || p."id", p."amount" / 3, 'SUCCEEDED', p."approvedAt" + interval '1 day', p."approvedAt" + interval '1 day', now()
         FROM "payments" p WHERE p."status" = 'SUCCEEDED' AND hashtext(p."id"::text) % 20 = 0`,
      `UPDATE "payments" SET "status" = 'CANCELED', "canceledAmount" = "amount" WHERE "status" = 'SUCCEEDED' AND hashtext("id"::text) % 20 = 1`,
      // External refunds, recorded at 23:59:59.999 KST of the approval's day.
      `INSERT INTO "external_refunds" ("paymentId", "amount", "reason", "actor", "recordedAt")
       SELECT p."id", 100, 'bank transfer', 'test', date_trunc('day', p."approvedAt" AT TIME ZONE 'Asia/Seoul') AT TIME ZONE 'Asia/Seoul' + interval '1 day' - interval '1 millisecond'
         FROM "payments" p WHERE p."status" IN ('SUCCEEDED', 'CANCELED') AND p."method" = 'MOBILE' AND hashtext(p."id"::text) % 10 = 2`,
      // Amounts and approval instants move (subtract the old day, add the new), and some leave the counted statuses.
      `UPDATE "payments" SET "amount" = "amount" + 1, "approvedAt" = "approvedAt" + interval '13 hours' WHERE "status" = 'SUCCEEDED' AND hashtext("id"::text) % 20 = 3`,
      `UPDATE "payments" SET "status" = 'FAILED', "approvedAt" = NULL WHERE "status" = 'SUCCEEDED' AND hashtext("id"::text) % 50 = 4`,
      // A late decline of a paid cycle (a new declined cycle, already recovered), and a recovered cycle's payment failing.
      `INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "status", "sentAt", "completedAt", "updatedAt")
       SELECT p."id", 11, 'BILLING_CONFIRM', 'late-' || p."id", p."amount", 'DECLINED', p."dueAt" - interval '2 days', p."dueAt" - interval '2 days', now()
         FROM "payments" p WHERE p."status" = 'SUCCEEDED' AND p."kind" = 'RECURRING' AND hashtext(p."id"::text) % 25 = 5`,
      `UPDATE "payments" p SET "status" = 'FAILED', "approvedAt" = NULL
         FROM "recovery_cycles" r WHERE r."paymentId" = p."id" AND r."paidAmount" IS NOT NULL AND hashtext(p."id"::text) % 3 = 0`,
      // One statement in which a paid declined cycle's payment stops counting and an unpaid one (same method and amount)
      // starts counting at the same instant: the day's revenue is unchanged, but both cycles' paid amounts move.
      `WITH pair AS (
         SELECT paid."id" AS "paidId", unpaid."id" AS "unpaidId", paid."approvedAt"
           FROM "payments" paid JOIN "recovery_cycles" rp ON rp."paymentId" = paid."id" AND rp."paidAmount" IS NOT NULL
           JOIN "payments" unpaid ON unpaid."method" = paid."method" AND unpaid."amount" = paid."amount" AND unpaid."status" = 'FAILED'
           JOIN "recovery_cycles" ru ON ru."paymentId" = unpaid."id" AND ru."paidAmount" IS NULL
          WHERE paid."status" = 'SUCCEEDED' ORDER BY paid."id", unpaid."id" LIMIT 1)
       UPDATE "payments" p SET "status" = (CASE WHEN p."id" = pair."paidId" THEN 'FAILED' ELSE 'SUCCEEDED' END)::"PaymentStatus",
              "approvedAt" = CASE WHEN p."id" = pair."paidId" THEN NULL ELSE pair."approvedAt" END,
              "transactionId" = CASE WHEN p."id" = pair."paidId" THEN p."transactionId" ELSE 'swap-' || p."id" END
         FROM pair WHERE p."id" IN (pair."paidId", pair."unpaidId")`,
      // An operator cancels some past-due subscriptions: their open cycles become lost (the subscriptions' trigger).
      `UPDATE "subscriptions" SET "status" = 'CANCELED', "canceledAt" = "changedAt", "cancelReason" = 'REQUESTED', "nextChargeAt" = NULL
        WHERE "status" = 'PAST_DUE' AND hashtext("id"::text) % 2 = 0`,
    ];
    for (const change of changes) {
      const changed = await running.app.db.$executeRawUnsafe(change);
      expect(changed, change).toBeGreaterThan(0);
      await expectReportsEqualRaw('2029-12-01', '2030-06-30');
    }
    await expectReportsEqualRaw('2030-03-17', '2030-06-15');
    // The triggers' figures are the rebuild's: summed by day, method and gateway, shard by shard or all at once.
    const kept = `SELECT "day", "method", "gateway", sum("paymentCount")::int AS "pc", sum("paymentAmount")::float8 AS "pa", sum("refundCount")::int AS "rc",
                         sum("refundAmount")::float8 AS "ra" FROM "revenue_days" GROUP BY 1, 2, 3 HAVING sum("paymentCount") <> 0 OR sum("refundCount") <> 0 ORDER BY 1, 2, 3`;
    const recovery = `SELECT * FROM "recovery_cycles" ORDER BY "paymentId"`;
    const before = { revenue: await sqlQuery(running.app.db, kept, []), recovery: await sqlQuery(running.app.db, recovery, []) };
    await sqlQuery(running.app.db, 'SELECT "rebuild_report_rollups"()', []);
    expect({ revenue: await sqlQuery(running.app.db, kept, []), recovery: await sqlQuery(running.app.db, recovery, []) }).toEqual(before);
  });

  it('concurrent transactions approving payments on the same Korea day neither deadlock nor lose counts', async () => {
    const now = kst('2030-06-15T12:00:00');
    await setClock(running.app, now);
    await seedHistory(running.databaseUrl, { subscriptions: 300, payments: 2500, months: 6, now, declineRate: 0.6 });
    const failed = await sqlQuery<{ id: string }>(running.app.db, `SELECT "id" FROM "payments" WHERE "status" = 'FAILED' ORDER BY "id"`, []);
    const clients = 9; // more than the 8 shards: one of them waits for another to commit and adds to its rows
    expect(failed.length).toBeGreaterThanOrEqual(clients * 4);
    const groups = Array.from({ length: clients }, (_, i) => failed.filter((_, j) => j % clients === i).map((p) => p.id));
    const day = kst('2030-06-14T23:00:00');
    const approve = async (ids: string[], index: number) => {
      const client = new pg.Client({ connectionString: running.databaseUrl });
      await client.connect();
      try {
        await client.query('BEGIN');
        // Two statements, each over both methods and two Korea days (23:00 and 00:30 KST), in opposite orders.
        const half = Math.ceil(ids.length / 2);
        for (const part of index % 2 === 0 ? [ids.slice(0, half), ids.slice(half)] : [ids.slice(half), ids.slice(0, half)]) {
          await client.query(
            `UPDATE "payments" SET "status" = 'SUCCEEDED', "failureCode" = NULL, "failureMessage" = NULL, "nextRetryAt" = NULL,
                    "transactionId" = 'c-' || "id", "approvedAt" = $2::timestamptz + CASE WHEN hashtext("id"::text) % 2 = 0 THEN interval '90 minutes' ELSE interval '0' END
              WHERE "id" = ANY ($1::uuid[])`,
            [part, day],
          );
          await client.query('SELECT pg_sleep(0.05)');
        }
        await client.query('COMMIT');
      } finally {
        await client.end();
      }
    };
    await Promise.all(groups.map((ids, index) => approve(ids, index)));
    await expectReportsEqualRaw('2030-06-01', '2030-06-15');
    const [shards] = await sqlQuery<{ n: number }>(
      running.app.db,
      `SELECT count(DISTINCT "shard")::int AS "n" FROM "revenue_days" WHERE "day" = '2030-06-14' AND "shard" <> 0`,
      [],
    );
    expect(shards!.n).toBeGreaterThan(1);
  });

  it('two transactions on one shard that reach its roll-up rows in crossing orders, statement by statement, do not deadlock', async () => {
    // The case above made certain: two connections whose backends share a shard (found among nine: 8 shards), each
    // approving one payment per statement, A first on day 1 then day 2, B first on day 2 then day 1. Per statement the
    // rows are locked in key order, but across statements the orders cross; the shard is taken for the whole
    // transaction before its first row, so B waits for A instead of holding day 2 while A waits for it.
    const now = kst('2030-09-15T12:00:00');
    await setClock(running.app, now);
    await seedHistory(running.databaseUrl, { subscriptions: 40, payments: 200, months: 2, now, declineRate: 0.6 });
    const failed = await sqlQuery<{ id: string }>(
      running.app.db,
      `SELECT "id" FROM "payments" WHERE "status" = 'FAILED' AND "method" = 'CARD' ORDER BY "id" LIMIT 4`,
      [],
    );
    expect(failed).toHaveLength(4);
    const clients = Array.from({ length: 9 }, () => new pg.Client({ connectionString: running.databaseUrl }));
    await Promise.all(clients.map((c) => c.connect()));
    const watcher = new pg.Client({ connectionString: running.databaseUrl });
    await watcher.connect();
    try {
      const pids = await Promise.all(clients.map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid));
      const first = pids.findIndex((pid, i) => pids.some((other, j) => j > i && other % 8 === pid % 8));
      const second = pids.findIndex((pid, j) => j > first && pid % 8 === pids[first]! % 8);
      const [a, b] = [clients[first]!, clients[second]!];
      const approve = (client: pg.Client, id: string, at: string) =>
        client.query(
          `UPDATE "payments" SET "status" = 'SUCCEEDED', "failureCode" = NULL, "failureMessage" = NULL, "nextRetryAt" = NULL,
                  "transactionId" = 'x-' || "id", "approvedAt" = $2::timestamptz WHERE "id" = $1::uuid`,
          [id, at],
        );
      const day1 = '2030-09-14T10:00:00+09:00';
      const day2 = '2030-09-15T10:00:00+09:00';
      // Settled: done, failed, or blocked on a lock.
      const settled = (pid: number, step: Promise<unknown>) => {
        let done = false;
        step.then(
          () => {
            done = true;
          },
          () => {
            done = true;
          },
        );
        return waitFor(`backend ${pid} finished or waiting on a lock`, async () => {
          if (done) return true;
          const { rows } = await watcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [
            pid,
          ]);
          return rows[0]!.n > 0;
        });
      };
      await a.query('BEGIN');
      await b.query('BEGIN');
      await approve(a, failed[0]!.id, day1);
      const b1 = approve(b, failed[1]!.id, day2);
      await settled(pids[second]!, b1);
      const a2 = approve(a, failed[2]!.id, day2);
      await settled(pids[first]!, a2);
      const b2 = b1.then(() => approve(b, failed[3]!.id, day1));
      const outcomes = await Promise.allSettled([a2.then(() => a.query('COMMIT')), b2.then(() => b.query('COMMIT'))]);
      expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'committed'))).toEqual(['committed', 'committed']);
    } finally {
      await Promise.all([...clients, watcher].map((c) => c.end()));
    }
    const [approved] = await sqlQuery<{ n: number }>(
      running.app.db,
      `SELECT count(*)::int AS n FROM "payments" WHERE "id" = ANY ($1::uuid[]) AND "status" = 'SUCCEEDED'`,
      [failed.map((p) => p.id)],
    );
    expect(approved!.n).toBe(4);
    await expectReportsEqualRaw('2030-09-01', '2030-09-15');
  });
});
