// A merchant's history in set-based SQL, for the benchmarks of the reports, the reconciliation and the console:
// subscriptions (CARD and MOBILE; month, quarter, year, week and 30-day intervals; several prices; trials, price
// changes, pauses, resumes, cancels, past-due), their payments and attempts over `months` months (declines, retries
// that recover, refunds, failures, a few UNKNOWN outcomes), and the MRR movements that history implies.
//
// The movements are written by the database's own triggers (migration 20261124170000_mrr_movements), not inserted
// here: subscriptions are inserted in their first state dated at their start, and each later change is one UPDATE
// statement over every subscription it applies to, with `changedAt` set to that change's instant, in the order the
// changes happen to each subscription (trial end, price change, pause, resume, cancel). So the movements are exactly
// what the service would have recorded, and a change of the trigger's rules is measured too. The events triggers are
// off while seeding (nobody reads events in these benchmarks), the MRR ones on; the reports' pre-aggregated figures
// are rebuilt from the rows at the end (payments and attempts are written with triggers off).
//
// Everything is derived from hashes of the row number (hashint4), so a size gives the same data on every run, except
// the uuids (gen_random_uuid) and `now`.
//
//   import { seedHistory } from './seed.ts';
//   const stats = await seedHistory(connectionString, { subscriptions: 100_000, payments: 1_000_000, months: 24 });
import pg from 'pg';

export interface HistoryOptions {
  /** Subscriptions to create (default 100,000). */
  subscriptions?: number;
  /**
   * Payments to keep (default 1,000,000). The history makes somewhat more cycles than this at the default mix; the
   * surplus is dropped at random (by hash), which leaves gaps in some subscriptions' cycle numbers. Fewer cycles than
   * this are all kept (the answer says how many).
   */
  payments?: number;
  /** How far back the history goes, in months before `now` (default 24). */
  months?: number;
  /** The end of the history (default: the system clock). Nothing is dated after it. */
  now?: Date;
  /** Share of cycles whose first charge is declined (default 0.04); three in four of them recover on a retry a day later. */
  declineRate?: number;
  /** Share of succeeded payments refunded in full three days later (default 0.01). */
  refundRate?: number;
  /** Share of the cycles due in the last 30 days whose charge is UNKNOWN, waiting for an operator (default 0.002). */
  unknownRate?: number;
  /** Prints each step's time. */
  log?: (line: string) => void;
}

export interface HistoryStats {
  subscriptions: number;
  payments: number;
  attempts: number;
  movements: number;
  /** Cycles the history made before the surplus over `payments` was dropped. */
  cycles: number;
  seconds: number;
  /** The sum of every movement equals the sum of the subscriptions' MRR now (checked). */
  mrr: number;
}

/** A uniform integer in [0, 1,000,000) from the row number `g` and a salt: the same on every run. */
const u = (salt: number, of = 'p.i') => `(((hashint4(${of} * 31 + ${salt} * 1000003)::bigint + 2147483648) % 1000000)::float8 / 1000000)`;

const EVENT_TRIGGERS: Array<[string, string]> = [
  ['subscriptions', 'subscriptions_merchant_events_insert'],
  ['subscriptions', 'subscriptions_merchant_events'],
  ['payments', 'payments_merchant_events_insert'],
  ['payments', 'payments_merchant_events'],
  ['registrations', 'registrations_merchant_events_insert'],
  ['registrations', 'registrations_merchant_events'],
];

/** Seeds the history into an empty, migrated database (the connection's user must be able to disable triggers). */
export async function seedHistory(connectionString: string, options: HistoryOptions = {}): Promise<HistoryStats> {
  const subscriptions = options.subscriptions ?? 100_000;
  const keep = options.payments ?? 1_000_000;
  const months = options.months ?? 24;
  const now = (options.now ?? new Date()).toISOString();
  const decline = options.declineRate ?? 0.04;
  const refund = options.refundRate ?? 0.01;
  const unknown = options.unknownRate ?? 0.002;
  const log = options.log ?? (() => {});
  const started = Date.now();
  const client = new pg.Client({ connectionString });
  await client.connect();
  const step = async (name: string, sql: string, values: unknown[] = []) => {
    const at = Date.now();
    const result = await client.query(sql, values);
    log(`  seed: ${name} (${result.rowCount ?? 0} rows, ${((Date.now() - at) / 1000).toFixed(1)} s)`);
    return result;
  };
  try {
    await client.query('SET synchronous_commit = off');
    await client.query("SET TIME ZONE 'UTC'");
    for (const [table, trigger] of EVENT_TRIGGERS) await client.query(`ALTER TABLE "${table}" DISABLE TRIGGER "${trigger}"`);

    // One row per subscription: its terms and the instants of its changes. `base` is when it starts to count (after a
    // 14-day trial, for a twentieth of them); every later change lies between base and its end, in this order.
    await step(
      'plan',
      `CREATE UNLOGGED TABLE "bench_plan" AS
       WITH p AS (SELECT g AS i FROM generate_series(1, $1::int) g),
       terms AS (
         SELECT p.i, gen_random_uuid() AS "id", gen_random_uuid() AS "registrationId", gen_random_uuid() AS "billingKeyId",
                CASE WHEN ${u(1)} < 0.2 THEN 'MOBILE' ELSE 'CARD' END::"PaymentMethod" AS "method",
                ${u(2)} AS "shape", (ARRAY[9900, 4900, 14900, 29000, 99000, 3900])[1 + floor(${u(3)} * 6)::int] AS "price",
                $2::timestamptz - make_interval(months => $3::int) * (0.001 + 0.999 * ${u(4)}) AS "created",
                ${u(5)} < 0.05 AS "trial", ${u(6)} AS "priceRoll", ${u(7)} AS "pauseRoll", ${u(8)} AS "cancelRoll", ${u(9)} AS "cancelWhen"
           FROM p),
       shaped AS (
         SELECT t.*,
                CASE WHEN t."method" = 'MOBILE' OR t."shape" < 0.78 THEN 'month' WHEN t."shape" < 0.86 THEN 'year' WHEN t."shape" < 0.92 THEN 'month'
                     WHEN t."shape" < 0.97 THEN 'week' ELSE 'day' END::"IntervalUnit" AS "unit",
                CASE WHEN t."method" = 'MOBILE' OR t."shape" < 0.78 THEN 1 WHEN t."shape" < 0.86 THEN 1 WHEN t."shape" < 0.92 THEN 3
                     WHEN t."shape" < 0.97 THEN 1 ELSE 30 END AS "count",
                CASE WHEN t."trial" THEN t."created" + interval '14 days' ELSE t."created" END AS "base"
           FROM terms t),
       timed AS (
         SELECT s.*, CASE WHEN s."unit" = 'year' THEN s."price" * 10 ELSE s."price" END AS "amount0", $2::timestamptz - s."base" AS "life"
           FROM shaped s)
       SELECT t."i", t."id", t."registrationId", t."billingKeyId", t."method", t."unit", t."count", t."amount0", t."created", t."trial",
              t."base" < $2::timestamptz AS "started", t."base",
              CASE WHEN t."priceRoll" < 0.2 AND t."base" < $2::timestamptz THEN t."base" + t."life" * 0.3 END AS "priceAt",
              CASE WHEN t."priceRoll" < 0.14 THEN round(t."amount0" * 1.2 / 100) * 100 ELSE round(t."amount0" * 0.8 / 100) * 100 END::int AS "amount1",
              CASE WHEN t."pauseRoll" < 0.04 AND t."base" < $2::timestamptz THEN t."base" + t."life" * 0.5 END AS "pauseAt",
              CASE WHEN t."pauseRoll" < 0.02 AND t."base" < $2::timestamptz THEN t."base" + t."life" * 0.6 END AS "resumeAt",
              CASE WHEN t."cancelRoll" < 0.18 AND t."base" < $2::timestamptz THEN t."base" + t."life" * (0.7 + 0.29 * t."cancelWhen") END AS "cancelAt"
         FROM timed t`,
      [subscriptions, now, months],
    );

    // Every cycle due before the subscription's end (its cancel, else now), none while it is paused. Cycle k + 1 is
    // due at base + k intervals; the surplus over `keep` is dropped by hash.
    await step(
      'cycles',
      `CREATE UNLOGGED TABLE "bench_cycles" AS
       WITH c AS (
         SELECT p."i", p."id" AS "subscriptionId", p."method", k + 1 AS "cycle",
                p."base" + CASE p."unit" WHEN 'month' THEN make_interval(months => k * p."count") WHEN 'year' THEN make_interval(years => k * p."count")
                                        WHEN 'week' THEN make_interval(weeks => k * p."count") ELSE make_interval(days => k * p."count") END AS "dueAt",
                p."priceAt", p."amount0", p."amount1", p."pauseAt", p."resumeAt", p."cancelAt"
           FROM "bench_plan" p
           CROSS JOIN LATERAL generate_series(0, CASE p."unit" WHEN 'month' THEN $2::int / p."count" WHEN 'year' THEN $2::int / 12
                                                              WHEN 'week' THEN ($2::int * 53) / (12 * p."count") ELSE ($2::int * 31) / p."count" END + 1) k
          WHERE p."started"),
       due AS (
         SELECT c.*, ${u(11, 'c."i" * 997 + c."cycle"')} AS "roll", ${u(12, 'c."i" * 997 + c."cycle"')} AS "thin"
           FROM c
          WHERE c."dueAt" < coalesce(c."cancelAt", $1::timestamptz)
            AND NOT (c."pauseAt" IS NOT NULL AND c."dueAt" >= c."pauseAt" AND c."dueAt" < coalesce(c."resumeAt", 'infinity'))),
       outcome AS (
         SELECT d.*, gen_random_uuid() AS "paymentId",
                CASE WHEN d."priceAt" IS NOT NULL AND d."dueAt" >= d."priceAt" THEN d."amount1" ELSE d."amount0" END AS "amount",
                CASE WHEN d."dueAt" >= $1::timestamptz - interval '30 days' AND d."roll" >= 1 - $5::float8 THEN 'UNKNOWN'
                     WHEN d."roll" < $3::float8 * 0.75 THEN 'RECOVERED'
                     WHEN d."roll" < $3::float8 AND d."dueAt" < $1::timestamptz - interval '1 day' THEN 'FAILED'
                     WHEN d."roll" < $3::float8 THEN 'DECLINED_NOW'
                     WHEN d."roll" < $3::float8 + $4::float8 AND d."dueAt" < $1::timestamptz - interval '3 days' THEN 'REFUNDED'
                     ELSE 'SUCCEEDED' END AS "outcome"
           FROM due d)
       SELECT o.* FROM outcome o`,
      [now, months, decline, refund, unknown],
    );
    const cycles = Number((await client.query('SELECT count(*) AS n FROM "bench_cycles"')).rows[0].n);
    if (cycles > keep) {
      await step('thin', `DELETE FROM "bench_cycles" WHERE "paymentId" IN (SELECT "paymentId" FROM "bench_cycles" ORDER BY "thin" LIMIT $1)`, [cycles - keep]);
    }
    await client.query('CREATE INDEX ON "bench_cycles" ("subscriptionId", "cycle")');
    await client.query('VACUUM ANALYZE "bench_plan"');
    await client.query('VACUUM ANALYZE "bench_cycles"');

    await step(
      'registrations',
      `INSERT INTO "registrations" ("id", "state", "status", "orderId", "userId", "method", "amount", "orderName", "intervalUnit", "intervalCount",
                                    "issueKeyOnly", "expiresAt", "transactionId", "completedAt", "updatedAt", "createdAt")
       SELECT p."registrationId", 'seed-state-' || p."i", 'COMPLETED', 'R' || lpad(p."i"::text, 20, '0'), 'seed-user-' || (p."i" % 40000), p."method",
              p."amount0", 'Plan ' || p."amount0", p."unit", p."count", false, p."created" + interval '1 hour', 'seed-reg-' || p."i", p."created", p."created", p."created"
         FROM "bench_plan" p`,
    );
    await step(
      'billing keys',
      `INSERT INTO "billing_keys" ("id", "registrationId", "userId", "method", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext", "cardName", "cardNumber",
                                   "carrier", "phoneNumber", "updatedAt", "createdAt")
       SELECT p."billingKeyId", p."registrationId", 'seed-user-' || (p."i" % 40000), p."method", 'k1', '\\x00', '\\x00', '\\x00',
              CASE WHEN p."method" = 'CARD' THEN 'Card' END, CASE WHEN p."method" = 'CARD' THEN '1234-56**-****-7890' END,
              CASE WHEN p."method" = 'MOBILE' THEN 'SKT' END, CASE WHEN p."method" = 'MOBILE' THEN '010-****-1234' END, p."created", p."created"
         FROM "bench_plan" p`,
    );

    // The first state, dated at creation (a trial counts nothing: no movement yet). The schedule columns are what the
    // subscription holds now (the last cycle charged, the next due), which no movement reads.
    // In two statements, with an ANALYZE between: the MRR trigger's "has it counted before" lookup is planned once per
    // session, and planned against a never-analysed mrr_movements it scans the table, for every row inserted.
    const insertSubscriptions = (which: string) =>
      step(
        `subscriptions ${which}`,
        `INSERT INTO "subscriptions" ("id", "registrationId", "billingKeyId", "userId", "method", "status", "amount", "orderName", "intervalUnit", "intervalCount",
                                    "anchorAt", "cycle", "currentPeriodStart", "currentPeriodEnd", "nextChargeAt", "trialEnd", "lastTransactionId", "lastAmount",
                                    "lastTransactionAt", "changedAt", "updatedAt", "createdAt")
       SELECT p."id", p."registrationId", p."billingKeyId", 'seed-user-' || (p."i" % 40000), p."method", CASE WHEN p."trial" THEN 'TRIALING' ELSE 'ACTIVE' END::"SubscriptionStatus",
              p."amount0", 'Plan ' || p."amount0", p."unit", p."count", p."base", coalesce(l."cycle", 0),
              coalesce(l."dueAt", p."created"), coalesce(l."dueAt", p."created") + step."i", coalesce(l."dueAt", p."base") + step."i",
              CASE WHEN p."trial" THEN p."base" END,
              CASE WHEN p."method" = 'MOBILE' THEN l."transactionId" END, CASE WHEN p."method" = 'MOBILE' THEN l."amount" END,
              CASE WHEN p."method" = 'MOBILE' THEN l."dueAt" END, p."created", p."created", p."created"
         FROM "bench_plan" p
         CROSS JOIN LATERAL (SELECT CASE p."unit" WHEN 'month' THEN make_interval(months => p."count") WHEN 'year' THEN make_interval(years => p."count")
                                                  WHEN 'week' THEN make_interval(weeks => p."count") ELSE make_interval(days => p."count") END AS "i") step
         LEFT JOIN LATERAL (SELECT c."cycle", c."dueAt", c."amount", 'seed-tx-' || c."i" || '-' || c."cycle" AS "transactionId" FROM "bench_cycles" c
                             WHERE c."subscriptionId" = p."id" ORDER BY c."cycle" DESC LIMIT 1) l ON true
        WHERE ${which === 'first' ? 'p."i" <= 1000' : 'p."i" > 1000'}`,
      );
    await insertSubscriptions('first');
    await client.query('ANALYZE "mrr_movements"');
    await insertSubscriptions('rest');
    await client.query('ANALYZE "subscriptions"; ANALYZE "mrr_movements"');
    // Each later change in the order it happens to a subscription, one statement each: the triggers write NEW (a
    // trial's first paid charge), EXPANSION or CONTRACTION, CHURN (pause, cancel) and REACTIVATION (resume).
    await step(
      'trial ends',
      `UPDATE "subscriptions" s SET "status" = 'ACTIVE', "changedAt" = p."base", "updatedAt" = p."base"
         FROM "bench_plan" p WHERE p."id" = s."id" AND p."trial" AND p."started"`,
    );
    await step(
      'price changes',
      `UPDATE "subscriptions" s SET "amount" = p."amount1", "orderName" = 'Plan ' || p."amount1", "changedAt" = p."priceAt", "updatedAt" = p."priceAt"
         FROM "bench_plan" p WHERE p."id" = s."id" AND p."priceAt" IS NOT NULL`,
    );
    await step(
      'pauses',
      `UPDATE "subscriptions" s SET "status" = 'PAUSED', "pausedAt" = p."pauseAt", "nextChargeAt" = NULL, "changedAt" = p."pauseAt", "updatedAt" = p."pauseAt"
         FROM "bench_plan" p WHERE p."id" = s."id" AND p."pauseAt" IS NOT NULL`,
    );
    await step(
      'resumes',
      `UPDATE "subscriptions" s SET "status" = 'ACTIVE', "pausedAt" = NULL, "nextChargeAt" = s."currentPeriodEnd", "changedAt" = p."resumeAt", "updatedAt" = p."resumeAt"
         FROM "bench_plan" p WHERE p."id" = s."id" AND p."resumeAt" IS NOT NULL`,
    );
    await step(
      'cancels',
      `UPDATE "subscriptions" s SET "status" = 'CANCELED', "canceledAt" = p."cancelAt", "cancelReason" = 'REQUESTED', "nextChargeAt" = NULL,
                                    "changedAt" = p."cancelAt", "updatedAt" = p."cancelAt"
         FROM "bench_plan" p WHERE p."id" = s."id" AND p."cancelAt" IS NOT NULL`,
    );
    // A subscription whose last cycle was declined (and not recovered yet) is past due; one whose last charge is UNKNOWN
    // waits for an operator. Neither moves MRR (PAST_DUE counts like ACTIVE).
    await step(
      'past due and unknown',
      `UPDATE "subscriptions" s SET "status" = CASE WHEN c."outcome" = 'UNKNOWN' THEN s."status" ELSE 'PAST_DUE' END,
                                    "needsAttention" = c."outcome" = 'UNKNOWN', "attentionReason" = CASE WHEN c."outcome" = 'UNKNOWN' THEN 'PAYMENT_OUTCOME_UNKNOWN' END,
                                    "changedAt" = c."dueAt", "updatedAt" = c."dueAt"
         FROM "bench_cycles" c
        WHERE c."subscriptionId" = s."id" AND c."cycle" = s."cycle" AND s."status" = 'ACTIVE' AND c."outcome" IN ('FAILED', 'DECLINED_NOW', 'UNKNOWN')`,
    );

    // Payments and attempts are consistent by construction: their foreign-key checks (a trigger per row, most of the
    // seeding time) are skipped with session_replication_role, which needs a superuser like the events triggers' switch.
    await client.query('SET session_replication_role = replica');
    // Payments: the latest attempt's orderId; a decline then a success (RECOVERED) is two attempts a day apart; a refund
    // is a CANCEL attempt three days after the approval.
    await step(
      'payments',
      `INSERT INTO "payments" ("id", "subscriptionId", "cycle", "kind", "method", "amount", "status", "orderId", "attemptCount", "transactionId", "approvedAt",
                               "failureCode", "failureMessage", "dueAt", "nextRetryAt", "canceledAmount", "canceledAt", "attentionReason", "updatedAt", "createdAt")
       SELECT c."paymentId", c."subscriptionId", c."cycle", 'RECURRING', c."method", c."amount",
              CASE c."outcome" WHEN 'REFUNDED' THEN 'CANCELED' WHEN 'FAILED' THEN 'FAILED' WHEN 'DECLINED_NOW' THEN 'FAILED' WHEN 'UNKNOWN' THEN 'UNKNOWN'
                               ELSE 'SUCCEEDED' END::"PaymentStatus",
              'B' || c."i" || 'c' || c."cycle" || 'a' || CASE WHEN c."outcome" IN ('RECOVERED', 'FAILED') THEN 2 ELSE 1 END,
              CASE WHEN c."outcome" IN ('RECOVERED', 'FAILED') THEN 2 ELSE 1 END,
              CASE WHEN c."outcome" IN ('SUCCEEDED', 'RECOVERED', 'REFUNDED') THEN 'seed-tx-' || c."i" || '-' || c."cycle" END,
              CASE WHEN c."outcome" IN ('SUCCEEDED', 'REFUNDED') THEN c."dueAt" + interval '2 seconds'
                   WHEN c."outcome" = 'RECOVERED' THEN c."dueAt" + interval '1 day 2 seconds' END,
              CASE WHEN c."outcome" IN ('FAILED', 'DECLINED_NOW') THEN 'INSUFFICIENT_FUNDS' END,
              CASE WHEN c."outcome" IN ('FAILED', 'DECLINED_NOW') THEN 'Insufficient funds' END,
              c."dueAt", CASE WHEN c."outcome" = 'DECLINED_NOW' THEN c."dueAt" + interval '1 day' END,
              CASE WHEN c."outcome" = 'REFUNDED' THEN c."amount" ELSE 0 END,
              CASE WHEN c."outcome" = 'REFUNDED' THEN c."dueAt" + interval '3 days' END,
              CASE WHEN c."outcome" = 'UNKNOWN' THEN 'PAYMENT_OUTCOME_UNKNOWN' END,
              c."dueAt" + CASE WHEN c."outcome" = 'REFUNDED' THEN interval '3 days' WHEN c."outcome" IN ('RECOVERED', 'FAILED') THEN interval '1 day' ELSE interval '2 seconds' END,
              c."dueAt"
         FROM "bench_cycles" c`,
    );
    await step(
      'attempts',
      `INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "status", "sentAt", "completedAt", "gatewayCode",
                                       "transactionId", "approvedAt", "updatedAt", "createdAt")
       SELECT c."paymentId", a."n", a."operation"::"GatewayOperation", CASE WHEN a."operation" = 'CANCEL' THEN 'B' || c."i" || 'c' || c."cycle" || 'a1' ELSE 'B' || c."i" || 'c' || c."cycle" || 'a' || a."n" END,
              c."amount", a."status"::"AttemptStatus", a."at", CASE WHEN a."status" = 'UNKNOWN' THEN NULL ELSE a."at" + interval '1 second' END,
              CASE WHEN a."status" = 'DECLINED' THEN 'INSUFFICIENT_FUNDS' END,
              CASE WHEN a."status" = 'SUCCEEDED' THEN CASE WHEN a."operation" = 'CANCEL' THEN 'seed-cx-' ELSE 'seed-tx-' END || c."i" || '-' || c."cycle" END,
              CASE WHEN a."status" = 'SUCCEEDED' THEN a."at" + interval '2 seconds' END, a."at" + interval '2 seconds', a."at"
         FROM "bench_cycles" c
         CROSS JOIN LATERAL (VALUES
           (1, 'BILLING_CONFIRM', CASE c."outcome" WHEN 'UNKNOWN' THEN 'UNKNOWN' WHEN 'RECOVERED' THEN 'DECLINED' WHEN 'FAILED' THEN 'DECLINED'
                                                   WHEN 'DECLINED_NOW' THEN 'DECLINED' ELSE 'SUCCEEDED' END, c."dueAt"),
           (2, CASE WHEN c."outcome" = 'REFUNDED' THEN 'CANCEL' ELSE 'BILLING_CONFIRM' END,
               CASE c."outcome" WHEN 'RECOVERED' THEN 'SUCCEEDED' WHEN 'FAILED' THEN 'DECLINED' ELSE 'SUCCEEDED' END,
               c."dueAt" + CASE WHEN c."outcome" = 'REFUNDED' THEN interval '3 days' ELSE interval '1 day' END)
         ) a("n", "operation", "status", "at")
        WHERE a."n" = 1 OR c."outcome" IN ('RECOVERED', 'FAILED', 'REFUNDED')`,
    );
    await client.query('SET session_replication_role = DEFAULT');
    // The reports' pre-aggregated figures (migration 20261124210000_report_rollups): payments and attempts were written
    // with every trigger off just above, so they are rebuilt from the rows, through the same rules as the triggers.
    await step('report rollups', 'SELECT "rebuild_report_rollups"()');
    await client.query('DROP TABLE "bench_cycles"; DROP TABLE "bench_plan"');
    for (const [table, trigger] of EVENT_TRIGGERS) await client.query(`ALTER TABLE "${table}" ENABLE TRIGGER "${trigger}"`);
    const vacuumAt = Date.now();
    await client.query('VACUUM ANALYZE');
    log(`  seed: vacuum analyze (${((Date.now() - vacuumAt) / 1000).toFixed(1)} s)`);

    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM "subscriptions")::int AS "subscriptions", (SELECT count(*) FROM "payments")::int AS "payments",
              (SELECT count(*) FROM "payment_attempts")::int AS "attempts", (SELECT count(*) FROM "mrr_movements")::int AS "movements",
              (SELECT coalesce(sum("delta"), 0) FROM "mrr_movements")::float8 AS "moved",
              (SELECT coalesce(sum("subscription_mrr"("status", "amount", "intervalUnit", "intervalCount")), 0) FROM "subscriptions")::float8 AS "mrr"`,
    );
    const row = rows[0] as { subscriptions: number; payments: number; attempts: number; movements: number; moved: number; mrr: number };
    if (row.moved !== row.mrr) throw new Error(`seeded movements sum to ${row.moved}, the subscriptions' MRR is ${row.mrr}`);
    return {
      subscriptions: row.subscriptions,
      payments: row.payments,
      attempts: row.attempts,
      movements: row.movements,
      cycles,
      seconds: (Date.now() - started) / 1000,
      mrr: row.mrr,
    };
  } finally {
    await client.end();
  }
}

/**
 * A customer with a long history (the console's Subscription page, the portal's overview): the monthly subscription with the most cycles, its latest `months` cycles made
 * whole. The seeder drops its surplus cycles at random, so no subscription keeps a full run; the missing ones are
 * copied from its latest payment and that payment's first attempt (new ids, orderIds and transactionIds; the cycle's
 * month earlier), succeeded. The payments' own triggers write their events, as the service's writes would.
 */
export async function fillHistory(client: pg.Client, months: number): Promise<{ subscriptionId: string; payments: number; added: number }> {
  const { rows } = await client.query<{ subscriptionId: string; cycle: number }>(
    `SELECT p."subscriptionId", max(p."cycle")::int AS "cycle" FROM "payments" p JOIN "subscriptions" s ON s."id" = p."subscriptionId"
      WHERE s."intervalUnit" = 'month' AND s."intervalCount" = 1 AND s."method" = 'CARD'
      GROUP BY p."subscriptionId" ORDER BY max(p."cycle") DESC, p."subscriptionId" LIMIT 1`,
  );
  const target = rows[0]!;
  const shift = (column: string) => `to_jsonb(t."${column}" - make_interval(months => t."cycle" - g))`;
  const added = await client.query(
    `WITH t AS (SELECT * FROM "payments" WHERE "subscriptionId" = $1 AND "cycle" = $2),
     made AS (
       INSERT INTO "payments"
       SELECT (jsonb_populate_record(NULL::"payments", to_jsonb(t) || jsonb_build_object('id', gen_random_uuid(), 'cycle', g, 'status', 'SUCCEEDED',
                 'attentionReason', NULL, 'canceledAmount', 0, 'orderId', t."orderId" || '-h' || g, 'transactionId', coalesce(t."transactionId", 'tx') || '-h' || g,
                 'approvedAt', ${shift('createdAt')}, 'createdAt', ${shift('createdAt')}, 'updatedAt', ${shift('createdAt')}))).*
         FROM t CROSS JOIN generate_series(greatest(1, $2 - $3 + 1), $2) g
        WHERE NOT EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = $1 AND p."cycle" = g)
       RETURNING "id", "orderId", "transactionId", "createdAt")
     INSERT INTO "payment_attempts"
     SELECT (jsonb_populate_record(NULL::"payment_attempts", to_jsonb(a) || jsonb_build_object('id', gen_random_uuid(), 'paymentId', m."id",
               'orderId', m."orderId", 'transactionId', m."transactionId", 'status', 'SUCCEEDED', 'approvedAt', m."createdAt", 'sentAt', m."createdAt",
               'completedAt', m."createdAt", 'createdAt', m."createdAt", 'updatedAt', m."createdAt"))).*
       FROM made m CROSS JOIN LATERAL (SELECT * FROM "payment_attempts" WHERE "paymentId" = (SELECT "id" FROM t) ORDER BY "attemptNumber" LIMIT 1) a`,
    [target.subscriptionId, target.cycle, months],
  );
  const count = await client.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM "payments" WHERE "subscriptionId" = $1`, [target.subscriptionId]);
  return { subscriptionId: target.subscriptionId, payments: count.rows[0]!.n, added: added.rowCount ?? 0 };
}
