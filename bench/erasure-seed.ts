// What the erasure benchmark (bench/erasure.bench.ts) seeds besides the ledger of bench/seed.ts, in set-based SQL:
//
// 1. seedSurroundings: the rows the service writes around a history and keeps, which an erasure has to look through:
//    the events of the last EVENT_RETENTION (90 days; older ones the dispatcher deletes), numbered, each delivered to
//    one webhook endpoint (now disabled, so the service sends nothing); an idempotency record for every registration
//    and every cancel (kept: nothing deletes an expired record but a reuse of its key); an audit entry for every
//    cancel and refund; a day of portal sessions; the settlement files of the whole history (one a month: a line for
//    every approval and every refund, kept for ever like every import) whose lines carry the buyer's columns in `extra`.
// 2. seedErasableCustomers: `count` customers, each with `months` months of monthly history, all of it erasable: a
//    completed registration (name, phone number), a billing key, one subscription CANCELED yesterday, `months`
//    payments (every twelfth refunded, every twelfth declined once then recovered) with their attempts (the stored
//    gateway answer names the buyer), the events the database's triggers write for those rows (numbered and
//    delivered; those older than 90 days gone, as the dispatcher's retention leaves them), audit entries (the cancel,
//    each refund), idempotency records (the registration, the cancel, the refunds, a portal session), two portal
//    sessions, and a settlement line for each of its charges and refunds. Their rows are written with every trigger
//    on, as the service's writes would be.
//
// Everything is derived from the row number except the uuids; `tag` keeps a second batch's identifiers apart from the
// first's (a reused database gets new customers on every run).
import type pg from 'pg';

/** How far back the events are kept (EVENT_RETENTION's default, 90 days). */
const EVENT_DAYS = 90;

export interface SurroundingsStats {
  events: number;
  idempotencyRecords: number;
  auditEvents: number;
  portalSessions: number;
  settlementLines: number;
  webhookDeliveries: number;
}

const step = async (client: pg.Client, log: (line: string) => void, name: string, sql: string, values: unknown[] = []) => {
  const at = Date.now();
  const result = await client.query(sql, values);
  log(`  seed: ${name} (${result.rowCount ?? 0} rows, ${((Date.now() - at) / 1000).toFixed(1)} s)`);
  return result.rowCount ?? 0;
};

/** A subscription's public columns as an event, an audit entry or an idempotent answer holds them (the lease left out). */
const subscriptionJson = (alias: string) => `(to_jsonb(${alias}) - '{leaseOwner,leaseExpiresAt}'::text[])`;
const paymentJson = (alias: string) => `(to_jsonb(${alias}) || '{"refundAttempts": [], "externalRefunds": []}'::jsonb)`;

/** The surroundings of a seeded history (bench/seed.ts) as of `now`; run once, on a history without them. */
export async function seedSurroundings(client: pg.Client, options: { now: Date; log?: (line: string) => void }): Promise<SurroundingsStats> {
  const log = options.log ?? (() => {});
  const now = options.now.toISOString();
  const since = `$1::timestamptz - interval '${EVENT_DAYS} days'`;
  await client.query('SET synchronous_commit = off');
  // Payments, subscriptions and registrations of the retention window, as their triggers wrote them: one event each
  // (a payment's latest state; a subscription's creation and its cancel; a registration's completion).
  const events = await step(
    client,
    log,
    'events',
    `INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous", "createdAt")
     SELECT e."type", e."objectType", e."objectId", e."snapshot", e."previous", e."at" FROM (
       SELECT CASE p."status" WHEN 'SUCCEEDED' THEN 'payment.succeeded' WHEN 'FAILED' THEN 'payment.failed' WHEN 'UNKNOWN' THEN 'payment.unknown'
                              ELSE 'payment.canceled' END AS "type", 'payment' AS "objectType", p."id" AS "objectId", ${paymentJson('p')} AS "snapshot",
              NULL::jsonb AS "previous", p."updatedAt" AS "at"
         FROM "payments" p WHERE p."updatedAt" >= ${since} AND p."status" <> 'PENDING'
       UNION ALL
       SELECT 'subscription.created', 'subscription', s."id", ${subscriptionJson('s')}, NULL, s."createdAt" FROM "subscriptions" s WHERE s."createdAt" >= ${since}
       UNION ALL
       SELECT 'subscription.canceled', 'subscription', s."id", ${subscriptionJson('s')}, '{"status": "ACTIVE"}'::jsonb, s."canceledAt"
         FROM "subscriptions" s WHERE s."status" = 'CANCELED' AND s."canceledAt" >= ${since}
       UNION ALL
       SELECT 'registration.completed', 'registration', r."id", to_jsonb(r) - '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}'::text[], NULL, r."createdAt"
         FROM "registrations" r WHERE r."createdAt" >= ${since}) e
      ORDER BY e."at"`,
    [now],
  );
  await numberEvents(client);
  await client.query(
    `INSERT INTO "webhook_endpoints" ("url", "eventTypes", "description", "status", "disabledReason", "secrets", "createdAt", "updatedAt")
     VALUES ('https://merchant.example/hooks', '{*}', 'erasure benchmark', 'DISABLED', 'benchmark: nothing is sent', '[]', $1::timestamptz - interval '3 years', $1)`,
    [now],
  );
  const webhookDeliveries = await deliverEvents(client, log, 'TRUE');
  const idempotencyRecords =
    (await step(
      client,
      log,
      'idempotency: registrations',
      `INSERT INTO "idempotency_records" ("scope", "key", "requestHash", "status", "responseStatus", "responseBody", "createdAt", "expiresAt")
       SELECT 'POST /api/v1/registrations', 'seed-registration-' || r."orderId", md5(r."orderId"), 'COMPLETED', 201,
              jsonb_build_object('id', r."id", 'status', 'PENDING', 'orderId', r."orderId", 'userId', r."userId", 'method', r."method", 'amount', r."amount",
                                 'orderName', r."orderName", 'checkoutUrl', 'https://billing.example/billing/checkout?state=' || r."state", 'expiresAt', r."expiresAt"),
              r."createdAt", r."createdAt" + interval '1 day'
         FROM "registrations" r`,
    )) +
    (await step(
      client,
      log,
      'idempotency: cancels',
      `INSERT INTO "idempotency_records" ("scope", "key", "requestHash", "status", "responseStatus", "responseBody", "createdAt", "expiresAt")
       SELECT 'POST /api/v1/subscriptions/:id/cancel ' || s."id", 'seed-cancel-' || s."id", md5(s."id"::text), 'COMPLETED', 200, ${subscriptionJson('s')},
              s."canceledAt", s."canceledAt" + interval '1 day'
         FROM "subscriptions" s WHERE s."status" = 'CANCELED'`,
    ));
  const auditEvents =
    (await step(
      client,
      log,
      'audit: cancels',
      `INSERT INTO "audit_events" ("actor", "action", "entityType", "entityId", "reason", "before", "after", "createdAt")
       SELECT 'admin', 'subscription.cancel', 'subscription', s."id"::text, 'customer request',
              ${subscriptionJson('s')} || '{"status": "ACTIVE", "canceledAt": null, "cancelReason": null}'::jsonb, ${subscriptionJson('s')}, s."canceledAt"
         FROM "subscriptions" s WHERE s."status" = 'CANCELED'`,
    )) +
    (await step(
      client,
      log,
      'audit: refunds',
      `INSERT INTO "audit_events" ("actor", "action", "entityType", "entityId", "reason", "before", "after", "createdAt")
       SELECT 'admin', 'payment.refund', 'payment', p."id"::text, 'customer request',
              ${paymentJson('p')} || '{"status": "SUCCEEDED", "canceledAmount": 0}'::jsonb, ${paymentJson('p')}, p."canceledAt"
         FROM "payments" p WHERE p."status" = 'CANCELED'`,
    ));
  const portalSessions = await step(
    client,
    log,
    'portal sessions',
    `INSERT INTO "portal_sessions" ("linkHash", "userId", "returnUrl", "locale", "linkExpiresAt", "usedAt", "secretHash", "expiresAt", "createdAt")
     SELECT md5('seed-link-' || g), 'seed-user-' || (hashint4(g) & 32767), 'https://merchant.example/account', 'ko',
            $1::timestamptz - make_interval(secs => g * 17) + interval '10 minutes', $1::timestamptz - make_interval(secs => g * 17) + interval '1 minute',
            md5('seed-secret-' || g), $1::timestamptz - make_interval(secs => g * 17) + interval '1 hour', $1::timestamptz - make_interval(secs => g * 17)
       FROM generate_series(1, 5000) g`,
    [now],
  );
  const settlementLines = await settlementFiles(client, log, 'seed', now, 'TRUE');
  return { events, idempotencyRecords, auditEvents, portalSessions, settlementLines, webhookDeliveries };
}

/** Numbers every event not numbered yet, in the order they were written, as the sequencer would have. */
async function numberEvents(client: pg.Client): Promise<void> {
  await client.query(
    `WITH last AS (SELECT "last" FROM "event_sequencer" WHERE "id" = 1 FOR UPDATE),
     numbered AS (
       UPDATE "events" e SET "sequence" = (SELECT "last" FROM last) + n."n"
         FROM (SELECT "id", "createdAt", row_number() OVER (ORDER BY "xid", "pos") AS "n" FROM "events" WHERE "sequence" IS NULL) n
        WHERE e."id" = n."id" AND e."createdAt" = n."createdAt" RETURNING 1)
     UPDATE "event_sequencer" SET "last" = "last" + (SELECT count(*) FROM numbered) WHERE "id" = 1`,
  );
}

/** A delivery (answered 204) of every event matching `where` (on `e`) to the benchmark's endpoint. */
function deliverEvents(client: pg.Client, log: (line: string) => void, where: string, values: unknown[] = []): Promise<number> {
  return step(
    client,
    log,
    'webhook deliveries',
    `INSERT INTO "webhook_deliveries" ("eventId", "eventCreatedAt", "endpointId", "status", "attempts", "lastStatusCode", "deliveredAt", "createdAt", "updatedAt")
     SELECT e."id", e."createdAt", w."id", 'SUCCEEDED', 1, 204, e."createdAt" + interval '1 second', e."createdAt", e."createdAt" + interval '1 second'
       FROM "events" e JOIN "webhook_endpoints" w ON w."description" = 'erasure benchmark'
      WHERE ${where}
     ON CONFLICT DO NOTHING`,
    values,
  );
}

/**
 * The settlement files of the payments matching `where` (on `p`; `$2` is now, `$3` and on the values given): one
 * import per Korea month, covering the dates of its lines, with a line for every approval and every refund; the
 * gateway's columns, and the buyer's name and phone number in `extra`. `name` keeps the files of two calls apart.
 */
async function settlementFiles(
  client: pg.Client,
  log: (line: string) => void,
  name: string,
  now: string,
  where: string,
  values: unknown[] = [],
): Promise<number> {
  return step(
    client,
    log,
    'settlement lines',
    `WITH l AS (
       SELECT l."type", l."transactionId", l."orderId", l."amount", l."at", p."method", r."userName", r."userPhoneNumber", r."id" AS "registrationId",
              to_char(l."at" AT TIME ZONE 'Asia/Seoul', 'YYYY-MM-DD') AS "tradeDate", to_char(l."at" AT TIME ZONE 'Asia/Seoul', 'YYYY-MM') AS "month"
         FROM "payments" p
         JOIN "subscriptions" s ON s."id" = p."subscriptionId"
         JOIN "registrations" r ON r."id" = s."registrationId"
         CROSS JOIN LATERAL (VALUES ('APPROVAL', p."transactionId", p."orderId", p."amount", p."approvedAt"),
                                    ('CANCEL', CASE WHEN p."canceledAt" IS NOT NULL THEN p."transactionId" END, p."orderId", p."canceledAmount", p."canceledAt")
                            ) l("type", "transactionId", "orderId", "amount", "at")
        WHERE (${where}) AND l."transactionId" IS NOT NULL AND l."at" IS NOT NULL AND l."amount" > 0 AND l."at" <= $2::timestamptz),
     files AS (
       INSERT INTO "settlement_imports" ("filename", "sha256", "encoding", "rows", "newLines", "duplicateLines", "coverageFrom", "coverageTo", "summary", "actor", "createdAt")
       SELECT $1 || '-' || l."month" || '.csv', encode(sha256(convert_to($1 || '-' || l."month", 'UTF8')), 'hex'), 'utf-8', count(*), count(*), 0,
              min(l."tradeDate"), max(l."tradeDate"), '{}', 'admin', least($2::timestamptz, max(l."at") + interval '2 days')
         FROM l GROUP BY l."month"
       RETURNING "id", "filename", "createdAt")
     INSERT INTO "settlement_lines" ("importId", "line", "transactionId", "orderId", "type", "amount", "tradedAt", "tradeDate", "method", "fee", "settlementDate", "extra", "createdAt")
     SELECT f."id", row_number() OVER (PARTITION BY l."month" ORDER BY l."at", l."transactionId")::int, l."transactionId", l."orderId", l."type"::"SettlementLineType",
            l."amount", l."at", l."tradeDate", l."method", (l."amount" * 0.03)::int, to_char(l."at" AT TIME ZONE 'Asia/Seoul' + interval '2 days', 'YYYY-MM-DD'),
            jsonb_build_object('구매자명', coalesce(l."userName", 'Buyer ' || l."registrationId"), '구매자연락처', coalesce(l."userPhoneNumber", '010-0000-0000')), f."createdAt"
       FROM l JOIN files f ON f."filename" = $1 || '-' || l."month" || '.csv'`,
    [name, now, ...values],
  );
}

export interface ErasableCustomer {
  userId: string;
  subscriptionId: string;
}

/** `count` customers with `months` monthly payments each, every one erasable (see the file's comment). */
export async function seedErasableCustomers(
  client: pg.Client,
  options: { count: number; months: number; now: Date; tag: string; log?: (line: string) => void },
): Promise<ErasableCustomer[]> {
  const log = options.log ?? (() => {});
  const now = options.now.toISOString();
  const { count, months, tag } = options;
  await client.query('SET synchronous_commit = off');
  await client.query('DROP TABLE IF EXISTS "bench_erasable"');
  // Customer k: created `months` - 1 months and 3 days (and k mod 20 hours) ago, so its last cycle fell 3 days ago.
  await client.query(
    `CREATE UNLOGGED TABLE "bench_erasable" AS
     SELECT k, 'erasable-' || $2 || '-' || k AS "userId", gen_random_uuid() AS "registrationId", gen_random_uuid() AS "billingKeyId",
            gen_random_uuid() AS "subscriptionId", 'Erasable Customer ' || $2 || ' ' || k AS "name", '010-' || lpad((k % 10000)::text, 4, '0') || '-' || lpad(((k * 7) % 10000)::text, 4, '0') AS "phone",
            $1::timestamptz - make_interval(months => $4::int - 1, days => 3, hours => k % 20) AS "created"
       FROM generate_series(1, $3::int) k`,
    [now, tag, count, months],
  );
  await step(
    client,
    log,
    'erasable registrations',
    `INSERT INTO "registrations" ("id", "state", "status", "orderId", "userId", "method", "amount", "orderName", "intervalUnit", "intervalCount", "issueKeyOnly",
                                  "userName", "userPhoneNumber", "returnUrl", "expiresAt", "transactionId", "completedAt", "updatedAt", "createdAt")
     SELECT c."registrationId", 'erasable-state-' || $1 || '-' || c.k, 'COMPLETED', 'ER' || $1 || '-' || c.k, c."userId", 'CARD', 9900, 'Plan 9900', 'month', 1, false,
            c."name", c."phone", 'https://merchant.example/account', c."created" + interval '1 hour', 'erasable-reg-' || $1 || '-' || c.k, c."created", c."created", c."created"
       FROM "bench_erasable" c`,
    [tag],
  );
  await step(
    client,
    log,
    'erasable billing keys',
    `INSERT INTO "billing_keys" ("id", "registrationId", "userId", "method", "encryptionKeyId", "keyIv", "keyTag", "keyCiphertext", "cardCode", "cardName", "cardNumber",
                                 "updatedAt", "createdAt")
     SELECT c."billingKeyId", c."registrationId", c."userId", 'CARD', 'k1', '\\x00', '\\x00', '\\x00', '41', 'Card', '1234-56**-****-7890', c."created", c."created"
       FROM "bench_erasable" c`,
  );
  // Created ACTIVE and canceled yesterday in a second statement, so the MRR and events triggers write a NEW and a
  // CHURN movement and a created and a canceled event, as the service's writes do.
  await step(
    client,
    log,
    'erasable subscriptions',
    `INSERT INTO "subscriptions" ("id", "registrationId", "billingKeyId", "userId", "method", "status", "amount", "orderName", "intervalUnit", "intervalCount",
                                  "anchorAt", "cycle", "currentPeriodStart", "currentPeriodEnd", "nextChargeAt", "changedAt", "updatedAt", "createdAt")
     SELECT c."subscriptionId", c."registrationId", c."billingKeyId", c."userId", 'CARD', 'ACTIVE', 9900, 'Plan 9900', 'month', 1, c."created", $1::int,
            c."created" + make_interval(months => $1::int - 1), c."created" + make_interval(months => $1::int), c."created" + make_interval(months => $1::int),
            c."created", c."created", c."created"
       FROM "bench_erasable" c`,
    [months],
  );
  await step(
    client,
    log,
    'erasable cancels',
    `UPDATE "subscriptions" s SET "status" = 'CANCELED', "canceledAt" = $1::timestamptz - interval '1 day', "cancelReason" = 'REQUESTED', "nextChargeAt" = NULL,
                                  "changedAt" = $1::timestamptz - interval '1 day', "updatedAt" = $1::timestamptz - interval '1 day'
       FROM "bench_erasable" c WHERE s."id" = c."subscriptionId"`,
    [now],
  );
  // Cycle n is due n - 1 months after the start: cycles 6, 18, 30 refunded three days later, 9, 21, 33 declined then
  // recovered a day later.
  await step(
    client,
    log,
    'erasable payments',
    `INSERT INTO "payments" ("id", "subscriptionId", "registrationId", "cycle", "kind", "method", "amount", "status", "orderId", "attemptCount", "transactionId",
                             "approvedAt", "dueAt", "canceledAmount", "canceledAt", "updatedAt", "createdAt")
     SELECT gen_random_uuid(), c."subscriptionId", CASE WHEN n = 1 THEN c."registrationId" END, n, CASE WHEN n = 1 THEN 'INITIAL' ELSE 'RECURRING' END::"PaymentKind",
            'CARD', 9900, CASE WHEN n % 12 = 6 THEN 'CANCELED' ELSE 'SUCCEEDED' END::"PaymentStatus",
            'E' || $1 || '-' || c.k || 'c' || n || 'a' || CASE WHEN n % 12 = 9 THEN 2 ELSE 1 END, CASE WHEN n % 12 = 9 THEN 2 ELSE 1 END,
            'etx-' || $1 || '-' || c.k || '-' || n, d."due" + CASE WHEN n % 12 = 9 THEN interval '1 day 2 seconds' ELSE interval '2 seconds' END, d."due",
            CASE WHEN n % 12 = 6 THEN 9900 ELSE 0 END, CASE WHEN n % 12 = 6 THEN d."due" + interval '3 days' END,
            d."due" + CASE WHEN n % 12 = 6 THEN interval '3 days' WHEN n % 12 = 9 THEN interval '1 day 2 seconds' ELSE interval '2 seconds' END, d."due"
       FROM "bench_erasable" c CROSS JOIN generate_series(1, $2::int) n CROSS JOIN LATERAL (SELECT c."created" + make_interval(months => n - 1) AS "due") d`,
    [tag, months],
  );
  await step(
    client,
    log,
    'erasable attempts',
    `INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "status", "sentAt", "completedAt", "gatewayCode", "gatewayMessage",
                                     "transactionId", "approvedAt", "rawResponse", "reason", "updatedAt", "createdAt")
     SELECT p."id", a."n", a."operation"::"GatewayOperation", CASE WHEN a."operation" = 'CANCEL' THEN regexp_replace(p."orderId", 'a[0-9]+$', 'a1') ELSE regexp_replace(p."orderId", 'a[0-9]+$', 'a' || a."n") END,
            p."amount", a."status"::"AttemptStatus", a."at", a."at" + interval '1 second', CASE WHEN a."status" = 'DECLINED' THEN 'INSUFFICIENT_FUNDS' ELSE '0000' END,
            CASE WHEN a."status" = 'DECLINED' THEN 'Insufficient funds' ELSE 'Approved' END,
            CASE WHEN a."status" = 'SUCCEEDED' THEN CASE WHEN a."operation" = 'CANCEL' THEN replace(p."transactionId", 'etx-', 'ecx-') ELSE p."transactionId" END END,
            CASE WHEN a."status" = 'SUCCEEDED' THEN a."at" + interval '2 seconds' END,
            jsonb_build_object('code', CASE WHEN a."status" = 'DECLINED' THEN 'INSUFFICIENT_FUNDS' ELSE '0000' END, 'message', 'Approved',
                               'transactionId', p."transactionId", 'amount', p."amount", 'cardNumber', '1234-56**-****-7890', 'customerName', c."name"),
            CASE WHEN a."operation" = 'CANCEL' THEN 'customer request' END, a."at" + interval '2 seconds', a."at"
       FROM "payments" p JOIN "bench_erasable" c ON c."subscriptionId" = p."subscriptionId"
      CROSS JOIN LATERAL (VALUES
        (1, 'BILLING_CONFIRM', CASE WHEN p."cycle" % 12 = 9 THEN 'DECLINED' ELSE 'SUCCEEDED' END, p."dueAt"),
        (2, CASE WHEN p."cycle" % 12 = 6 THEN 'CANCEL' ELSE 'BILLING_CONFIRM' END, 'SUCCEEDED',
            p."dueAt" + CASE WHEN p."cycle" % 12 = 6 THEN interval '3 days' ELSE interval '1 day' END)) a("n", "operation", "status", "at")
      WHERE a."n" = 1 OR p."cycle" % 12 IN (6, 9)`,
  );
  const ids = `(SELECT "subscriptionId" FROM "bench_erasable" UNION ALL SELECT "registrationId" FROM "bench_erasable"
                UNION ALL SELECT p."id" FROM "payments" p JOIN "bench_erasable" c ON c."subscriptionId" = p."subscriptionId")`;
  // What the dispatcher's retention and the sequencer leave of their events: the last 90 days', numbered and delivered.
  await step(
    client,
    log,
    'erasable events past retention',
    `DELETE FROM "events" WHERE "objectId" IN ${ids} AND "createdAt" < $1::timestamptz - interval '${EVENT_DAYS} days'`,
    [now],
  );
  await numberEvents(client);
  await deliverEvents(client, log, `e."objectId" IN ${ids}`);
  await step(
    client,
    log,
    'erasable audit entries',
    `INSERT INTO "audit_events" ("actor", "action", "entityType", "entityId", "reason", "before", "after", "createdAt")
     SELECT 'admin', 'subscription.cancel', 'subscription', s."id"::text, 'customer request',
            ${subscriptionJson('s')} || '{"status": "ACTIVE", "canceledAt": null, "cancelReason": null}'::jsonb, ${subscriptionJson('s')}, s."canceledAt"
       FROM "subscriptions" s JOIN "bench_erasable" c ON c."subscriptionId" = s."id"
     UNION ALL
     SELECT 'admin', 'payment.refund', 'payment', p."id"::text, 'customer request',
            ${paymentJson('p')} || '{"status": "SUCCEEDED", "canceledAmount": 0}'::jsonb, ${paymentJson('p')}, p."canceledAt"
       FROM "payments" p JOIN "bench_erasable" c ON c."subscriptionId" = p."subscriptionId" WHERE p."status" = 'CANCELED'`,
  );
  await step(
    client,
    log,
    'erasable idempotency records',
    `INSERT INTO "idempotency_records" ("scope", "key", "requestHash", "status", "responseStatus", "responseBody", "createdAt", "expiresAt")
     SELECT 'POST /api/v1/registrations', 'erasable-registration-' || r."orderId", md5(r."orderId"), 'COMPLETED'::"IdempotencyStatus", 201,
            jsonb_build_object('id', r."id", 'status', 'PENDING', 'orderId', r."orderId", 'userId', r."userId", 'method', r."method", 'amount', r."amount",
                               'orderName', r."orderName", 'checkoutUrl', 'https://billing.example/billing/checkout?state=' || r."state", 'expiresAt', r."expiresAt"),
            r."createdAt", r."createdAt" + interval '1 day'
       FROM "registrations" r JOIN "bench_erasable" c ON c."registrationId" = r."id"
     UNION ALL
     SELECT 'POST /api/v1/subscriptions/:id/cancel ' || s."id", 'erasable-cancel-' || s."id", md5(s."id"::text), 'COMPLETED', 200, ${subscriptionJson('s')},
            s."canceledAt", s."canceledAt" + interval '1 day'
       FROM "subscriptions" s JOIN "bench_erasable" c ON c."subscriptionId" = s."id"
     UNION ALL
     SELECT 'POST /admin/payments/:id/cancel ' || p."id", 'erasable-refund-' || p."id", md5(p."id"::text), 'COMPLETED', 200, ${paymentJson('p')},
            p."canceledAt", p."canceledAt" + interval '1 day'
       FROM "payments" p JOIN "bench_erasable" c ON c."subscriptionId" = p."subscriptionId" WHERE p."status" = 'CANCELED'
     UNION ALL
     SELECT 'POST /api/v1/portal-sessions', 'erasable-portal-' || c."userId", md5(c."userId"), 'COMPLETED', 201,
            jsonb_build_object('url', 'https://billing.example/portal/open?token=' || md5(c."userId"), 'expiresAt', $1::timestamptz - interval '2 hours'),
            $1::timestamptz - interval '3 hours', $1::timestamptz + interval '21 hours'
       FROM "bench_erasable" c`,
    [now],
  );
  await step(
    client,
    log,
    'erasable portal sessions',
    `INSERT INTO "portal_sessions" ("linkHash", "userId", "returnUrl", "locale", "flow", "subscriptionId", "linkExpiresAt", "usedAt", "secretHash", "expiresAt", "createdAt")
     SELECT md5('erasable-link-' || c."userId" || '-' || s."n"), c."userId", 'https://merchant.example/account', 'ko', CASE WHEN s."n" = 2 THEN 'cancel' END,
            CASE WHEN s."n" = 2 THEN c."subscriptionId" END, $1::timestamptz - interval '3 hours' + interval '10 minutes',
            CASE WHEN s."n" = 1 THEN $1::timestamptz - interval '3 hours' + interval '1 minute' END,
            CASE WHEN s."n" = 1 THEN md5('erasable-secret-' || c."userId") END, CASE WHEN s."n" = 1 THEN $1::timestamptz - interval '2 hours' END,
            $1::timestamptz - interval '3 hours'
       FROM "bench_erasable" c CROSS JOIN generate_series(1, 2) s("n")`,
    [now],
  );
  await settlementFiles(client, log, `erasable-${tag}`, now, `s."id" IN (SELECT "subscriptionId" FROM "bench_erasable")`);
  const { rows } = await client.query<ErasableCustomer>('SELECT "userId", "subscriptionId" FROM "bench_erasable" ORDER BY k');
  await client.query('DROP TABLE "bench_erasable"');
  return rows;
}
