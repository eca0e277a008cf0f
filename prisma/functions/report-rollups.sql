-- Report roll-ups (docs/reconciliation.md "Revenue reports"): the revenue, recovery and MRR reports read pre-aggregated
-- figures (revenue_days, recovery_cycles, recovery_months, mrr_months) instead of every payment of their range. The
-- database keeps them in the transaction of each change, whoever writes it (Prisma writers, the one-statement charge
-- record, a resolve, reconciliation), so they can never disagree with the rows they sum once committed.
--
-- Each source's contribution is stated ONCE, in the *_line / *_at functions below; the triggers, the rebuild
-- (rebuild_report_rollups, also run by bench/seed.ts after it writes with triggers off) and the reports' live part
-- (revenue_lines, the day that holds now) all go through them.
--
-- Hot rows: every charge's success adds to the same (Korea day, method, gateway). Two replicas, or two batches of one, would
-- queue on that row until commit; so each figure is spread over 8 shards and the reports sum them. A transaction takes
-- a shard of its own for its whole length (report_shard: a free one, starting from its backend's pid modulo 8), so
-- two transactions share a shard's rows only when more than 8 write roll-ups at once, and then the second waits for
-- the first at its first roll-up row instead of interleaving. Within one statement rows are written in key order, but
-- a transaction of several statements would reach them in crossing orders: two such transactions on one shard
-- deadlocked (test/modules/reports/rollups.test.ts, "crossing orders"). The payments' triggers are statement-level
-- with transition tables: a batch of approvals in one statement (charge.record.ts) writes one row per key. The
-- attempts' are row-level, each behind a WHEN that lets only refunds and declines in (a refund or a decline is one
-- payment's).
--
-- The tables and the composite types revenue_line and recovery_line are the versioned migrations' (first
-- 20261124210000_report_rollups; revenue by gateway: 20261201140000_revenue_by_gateway).
--
-- Calendar: Korea days and months (common.sql korea_zone). A report in another BILLING_TIMEZONE reads the raw rows
-- (src/modules/reports/rollups.ts).
--
-- Serves the TypeScript writers of payments (the charge record, payments/charge.record.ts; the state moves,
-- ledger/payment.state.ts; payment-actions.service resolve; reconciliation/finish-settlement.ts), of payment attempts
-- (refunds and declines: ledger/attempt.state.ts, payments/refund-payment.ts), of external refunds
-- (payments/record-external-refund.ts) and of subscriptions (cancel, state moves: a declined cycle's `lost`); MRR
-- movements reach mrr_months through mrr.sql's trigger. The readers are src/modules/reports/*-report.ts.
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- The Korea day and month of an instant (the zone: common.sql korea_zone).
CREATE OR REPLACE FUNCTION "report_day"(at timestamptz) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (at AT TIME ZONE "korea_zone"())::date
$$;
CREATE OR REPLACE FUNCTION "report_month"(at timestamptz) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT date_trunc('month', at AT TIME ZONE "korea_zone"())::date
$$;
-- The shard a transaction adds to, the same for all its statements: the first of the 8 (from its backend's pid modulo 8
-- on) whose transaction-level advisory lock is free; when all are taken, it waits for its home shard's. The lock is
-- held to the end of the transaction, so no other transaction writes that shard's rows meanwhile; the choice is kept
-- in a transaction-local setting (a rolled-back savepoint forgets it, and the next call takes one again: adding to two
-- shards is only a split of the same sums).
CREATE OR REPLACE FUNCTION "report_shard"() RETURNS smallint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held text := current_setting('billing.report_shard', true);
  home smallint := (pg_backend_pid() % 8)::smallint;
  candidate smallint;
BEGIN
  IF held <> '' THEN
    RETURN held::smallint;
  END IF;
  FOR i IN 0..7 LOOP
    candidate := ((home + i) % 8)::smallint;
    IF pg_try_advisory_xact_lock(7210031, candidate) THEN
      PERFORM set_config('billing.report_shard', candidate::text, true);
      RETURN candidate;
    END IF;
  END LOOP;
  PERFORM pg_advisory_xact_lock(7210031, home);
  PERFORM set_config('billing.report_shard', home::text, true);
  RETURN home;
END $$;

-- ── The rules, once ────────────────────────────────────────────────────────────────────────────────────────────────
-- A payment counts (revenue, on the day of its approval; recovery, as its cycle's recovery) when it counts as paid
-- (common.sql counts_as_paid) and has its approval time.
CREATE OR REPLACE FUNCTION "payment_counts"(status "PaymentStatus", approved_at timestamptz) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT "counts_as_paid"(status) AND approved_at IS NOT NULL
$$;
-- A gateway refund counts once its CANCEL attempt SUCCEEDED, dated when it was sent (else completed, else created).
CREATE OR REPLACE FUNCTION "refund_counts"(operation "GatewayOperation", status "AttemptStatus") RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT operation = 'CANCEL' AND status = 'SUCCEEDED'
$$;
CREATE OR REPLACE FUNCTION "refund_at"(sent_at timestamptz, completed_at timestamptz, created_at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(sent_at, completed_at, created_at)
$$;

-- A line counts under its payment's method and gateway (a refund's are its payment's: a payment is refunded where it
-- was charged).
CREATE OR REPLACE FUNCTION "revenue_payment_line"(status "PaymentStatus", approved_at timestamptz, method "PaymentMethod", gateway "PaymentGateway", amount integer)
RETURNS SETOF "revenue_line" LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT approved_at, method, gateway, 1, amount::bigint, 0, 0::bigint WHERE "payment_counts"(status, approved_at)
$$;
CREATE OR REPLACE FUNCTION "revenue_refund_line"(operation "GatewayOperation", status "AttemptStatus", sent_at timestamptz, completed_at timestamptz,
                                      created_at timestamptz, amount integer, method "PaymentMethod", gateway "PaymentGateway")
RETURNS SETOF "revenue_line" LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT "refund_at"(sent_at, completed_at, created_at), method, gateway, 0, 0::bigint, 1, amount::bigint WHERE "refund_counts"(operation, status)
$$;
-- A refund made outside the gateway counts on the day it was recorded.
CREATE OR REPLACE FUNCTION "revenue_external_line"(recorded_at timestamptz, amount integer, method "PaymentMethod", gateway "PaymentGateway")
RETURNS SETOF "revenue_line" LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT recorded_at, method, gateway, 0, 0::bigint, 1, amount::bigint
$$;

-- Every revenue line dated in [from_at, to_at), from the raw rows (through the report indexes of
-- 20261124180000_report_indexes: the functions above are inlined, so their predicates meet the partial indexes).
CREATE OR REPLACE FUNCTION "revenue_lines"(from_at timestamptz, to_at timestamptz)
RETURNS SETOF "revenue_line" LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT l.* FROM "payments" p, LATERAL "revenue_payment_line"(p."status", p."approvedAt", p."method", p."gateway", p."amount") l
   WHERE p."approvedAt" >= from_at AND p."approvedAt" < to_at
  UNION ALL
  SELECT l.* FROM "payment_attempts" a JOIN "payments" p ON p."id" = a."paymentId",
         LATERAL "revenue_refund_line"(a."operation", a."status", a."sentAt", a."completedAt", a."createdAt", a."amount", p."method", p."gateway") l
   WHERE l."at" >= from_at AND l."at" < to_at
  UNION ALL
  SELECT l.* FROM "external_refunds" e JOIN "payments" p ON p."id" = e."paymentId", LATERAL "revenue_external_line"(e."recordedAt", e."amount", p."method", p."gateway") l
   WHERE l."at" >= from_at AND l."at" < to_at
$$;

-- A recurring cycle (a payment of a subscription's cycle, not a registration's first) declined at least once: its
-- first decline is its earliest BILLING_CONFIRM attempt DECLINED, by completion. payments ("subscriptionId", "cycle")
-- is unique, so a cycle is one payment and what was paid for it is that payment, when it counts.
CREATE OR REPLACE FUNCTION "recovery_cycle_of"(subscription_id uuid, cycle integer, kind "PaymentKind") RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT subscription_id IS NOT NULL AND cycle IS NOT NULL AND kind <> 'INITIAL'
$$;
CREATE OR REPLACE FUNCTION "decline_at"(operation "GatewayOperation", status "AttemptStatus", completed_at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN operation = 'BILLING_CONFIRM' AND status = 'DECLINED' THEN completed_at END
$$;
CREATE OR REPLACE FUNCTION "paid_amount"(status "PaymentStatus", approved_at timestamptz, amount integer) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN "payment_counts"(status, approved_at) THEN amount END
$$;
-- A declined cycle is lost when nothing was paid for it and its subscription was cancelled, or its MOBILE window
-- closed on that cycle. It depends on the subscription now: kept per cycle, and moved by the subscription's triggers.
CREATE OR REPLACE FUNCTION "cycle_lost"(paid_amount integer, status "SubscriptionStatus", attention_reason text, subscription_cycle integer, cycle integer)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT paid_amount IS NULL AND (status = 'CANCELED' OR COALESCE(attention_reason = 'MOBILE_WINDOW_CLOSED' AND subscription_cycle = cycle, false))
$$;
CREATE OR REPLACE FUNCTION "recovery_cycle_line"(first_decline_at timestamptz, paid_amount integer, lost boolean)
RETURNS "recovery_line" LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ROW(first_decline_at, 1, CASE WHEN paid_amount IS NULL THEN 0 ELSE 1 END, COALESCE(paid_amount, 0)::bigint, CASE WHEN lost THEN 1 ELSE 0 END)::"recovery_line"
$$;

-- ── Keeping them ───────────────────────────────────────────────────────────────────────────────────────────────────
-- Adds the lines `added` and takes away `removed` (an UPDATE's old contribution), one upsert per (day, method, gateway),
-- in key order (two statements that share a shard lock their rows in the same order).
CREATE OR REPLACE FUNCTION "revenue_days_apply"(added "revenue_line"[], removed "revenue_line"[]) RETURNS void LANGUAGE sql AS $$
  -- (Most statements add nothing: a PENDING payment, a lease; their arrays are empty and no row is written.)
  INSERT INTO "revenue_days" AS r ("day", "method", "gateway", "shard", "paymentCount", "paymentAmount", "refundCount", "refundAmount")
  SELECT "report_day"(l."at"), l."method", l."gateway", "report_shard"(), sum(l."paymentCount" * l.sign), sum(l."paymentAmount" * l.sign),
         sum(l."refundCount" * l.sign), sum(l."refundAmount" * l.sign)
    FROM (SELECT x.*, 1 AS sign FROM unnest(added) x UNION ALL SELECT x.*, -1 FROM unnest(removed) x) l
   GROUP BY 1, 2, 3
  HAVING sum(l."paymentCount" * l.sign) <> 0 OR sum(l."paymentAmount" * l.sign) <> 0 OR sum(l."refundCount" * l.sign) <> 0 OR sum(l."refundAmount" * l.sign) <> 0
   ORDER BY 1, 2, 3
  ON CONFLICT ("day", "method", "gateway", "shard") DO UPDATE SET
    "paymentCount" = r."paymentCount" + EXCLUDED."paymentCount", "paymentAmount" = r."paymentAmount" + EXCLUDED."paymentAmount",
    "refundCount" = r."refundCount" + EXCLUDED."refundCount", "refundAmount" = r."refundAmount" + EXCLUDED."refundAmount"
$$;

-- Payments: revenue moves when a payment's status, approval, method, gateway or amount does (subtract the old line, add
-- the new; an UNKNOWN payment resolved with a back-dated approvedAt adds to that day); a declined cycle's paid amount
-- follows its payment. Its refunds keep the lines they were counted with: a payment's method and gateway never change
-- once it is written (it is charged and refunded where it was made).
CREATE OR REPLACE FUNCTION "report_rollups_payments"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  added "revenue_line"[];
  removed "revenue_line"[] := '{}';
BEGIN
  -- Most statements move nothing (a PENDING payment, a lease, a retry's schedule): no row's status, approval, method,
  -- gateway or amount changed, hence no line and no paid amount; nothing is written. Compared row by row: two rows of one
  -- statement trading the same line (one stops counting, another starts) still move their cycles' paid amounts.
  -- (Nested: an INSERT has no old_rows, and PL/pgSQL evaluates both sides of an AND.)
  IF TG_OP = 'UPDATE' THEN
    IF NOT EXISTS (
         SELECT 1 FROM old_rows o JOIN new_rows n ON n."id" = o."id"
          WHERE ROW(o."status", o."approvedAt", o."method", o."gateway", o."amount")
                IS DISTINCT FROM ROW(n."status", n."approvedAt", n."method", n."gateway", n."amount")) THEN
      RETURN NULL;
    END IF;
  END IF;
  added := ARRAY(SELECT l FROM new_rows n, LATERAL "revenue_payment_line"(n."status", n."approvedAt", n."method", n."gateway", n."amount") l);
  IF TG_OP = 'UPDATE' THEN
    removed := ARRAY(SELECT l FROM old_rows o, LATERAL "revenue_payment_line"(o."status", o."approvedAt", o."method", o."gateway", o."amount") l);
  END IF;
  IF added <> removed THEN
    PERFORM "revenue_days_apply"(added, removed);
  END IF;
  IF TG_OP = 'INSERT' THEN
    RETURN NULL;
  END IF;
  -- Most payments have no declined cycle: the update (and its own trigger) runs only for those that do.
  IF NOT EXISTS (SELECT 1 FROM new_rows n JOIN "recovery_cycles" r ON r."paymentId" = n."id"
                  WHERE r."paidAmount" IS DISTINCT FROM "paid_amount"(n."status", n."approvedAt", n."amount")) THEN
    RETURN NULL;
  END IF;
  UPDATE "recovery_cycles" r SET "paidAmount" = "paid_amount"(n."status", n."approvedAt", n."amount"),
         "lost" = "cycle_lost"("paid_amount"(n."status", n."approvedAt", n."amount"), s."status", s."attentionReason", s."cycle", r."cycle")
    FROM new_rows n JOIN "subscriptions" s ON s."id" = n."subscriptionId"
   WHERE r."paymentId" = n."id" AND r."paidAmount" IS DISTINCT FROM "paid_amount"(n."status", n."approvedAt", n."amount");
  RETURN NULL;
END $$;

-- Attempts: a CANCEL attempt's success adds a refund (its method and gateway are its payment's); a decline makes (or moves
-- earlier) its cycle's first decline, with what its payment has paid. Row by row, and only for the rows whose WHEN
-- (below) says a refund or a decline is involved: most attempt writes are charges and leases, which cost nothing
-- here (a statement-level trigger cost every one of them a call); refunds and declines are
-- written one payment at a time. Attempts are never rewritten once final (docs/architecture.md, invariant 15), so a decline that stops being
-- one is not expected; it is handled anyway, by reading that payment's declines again.
CREATE OR REPLACE FUNCTION "report_rollups_attempt"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  paid_by "PaymentMethod";
  paid_through "PaymentGateway";
  added "revenue_line"[];
  removed "revenue_line"[] := '{}';
  declined_at timestamptz := "decline_at"(NEW."operation", NEW."status", NEW."completedAt");
  was_declined_at timestamptz;
BEGIN
  SELECT p."method", p."gateway" INTO paid_by, paid_through FROM "payments" p WHERE p."id" = NEW."paymentId";
  added := ARRAY(SELECT l FROM "revenue_refund_line"(NEW."operation", NEW."status", NEW."sentAt", NEW."completedAt", NEW."createdAt", NEW."amount", paid_by, paid_through) l);
  IF TG_OP = 'UPDATE' THEN
    removed := ARRAY(SELECT l FROM "revenue_refund_line"(OLD."operation", OLD."status", OLD."sentAt", OLD."completedAt", OLD."createdAt", OLD."amount", paid_by, paid_through) l);
    was_declined_at := "decline_at"(OLD."operation", OLD."status", OLD."completedAt");
  END IF;
  IF added <> removed THEN
    PERFORM "revenue_days_apply"(added, removed);
  END IF;
  IF declined_at IS NOT DISTINCT FROM was_declined_at THEN
    RETURN NULL;
  END IF;
  IF was_declined_at IS NOT NULL THEN
    -- A decline changed or gone: that payment's first decline again, from its attempts.
    WITH first AS (
      SELECT min("decline_at"(a."operation", a."status", a."completedAt")) AS "at" FROM "payment_attempts" a WHERE a."paymentId" = NEW."paymentId"),
    kept AS (UPDATE "recovery_cycles" r SET "firstDeclineAt" = f."at" FROM first f WHERE r."paymentId" = NEW."paymentId" AND f."at" IS NOT NULL)
    DELETE FROM "recovery_cycles" r USING first f WHERE r."paymentId" = NEW."paymentId" AND f."at" IS NULL;
  END IF;
  IF declined_at IS NULL THEN
    RETURN NULL;
  END IF;
  -- A new (or earlier) decline: the cycle's row, with what its payment paid and whether it is lost. Its subscription
  -- is locked for share first, so that a cancel committing meanwhile is either waited for and read, or waits for this
  -- transaction and then finds the row (the subscriptions' trigger below moves `lost`).
  PERFORM 1 FROM "subscriptions" s JOIN "payments" p ON p."subscriptionId" = s."id" WHERE p."id" = NEW."paymentId" FOR SHARE OF s;
  INSERT INTO "recovery_cycles" AS r ("paymentId", "subscriptionId", "cycle", "firstDeclineAt", "paidAmount", "lost")
  SELECT p."id", p."subscriptionId", p."cycle", declined_at, "paid_amount"(p."status", p."approvedAt", p."amount"),
         "cycle_lost"("paid_amount"(p."status", p."approvedAt", p."amount"), s."status", s."attentionReason", s."cycle", p."cycle")
    FROM "payments" p JOIN "subscriptions" s ON s."id" = p."subscriptionId"
   WHERE p."id" = NEW."paymentId" AND "recovery_cycle_of"(p."subscriptionId", p."cycle", p."kind")
  ON CONFLICT ("paymentId") DO UPDATE SET "firstDeclineAt" = EXCLUDED."firstDeclineAt"
   WHERE EXCLUDED."firstDeclineAt" < r."firstDeclineAt";
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "report_rollups_external_refunds"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "revenue_days_apply"(
    ARRAY(SELECT l FROM new_rows n JOIN "payments" p ON p."id" = n."paymentId", LATERAL "revenue_external_line"(n."recordedAt", n."amount", p."method", p."gateway") l), '{}');
  RETURN NULL;
END $$;

-- Movements are inserted only (20261124170000_mrr_movements refuses the rest).
CREATE OR REPLACE FUNCTION "report_rollups_mrr_movements"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "mrr_months" AS r ("month", "kind", "shard", "count", "delta")
  SELECT "report_month"(n."at"), n."kind", "report_shard"(), count(*), sum(n."delta") FROM new_rows n GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT ("month", "kind", "shard") DO UPDATE SET "count" = r."count" + EXCLUDED."count", "delta" = r."delta" + EXCLUDED."delta";
  RETURN NULL;
END $$;

-- A subscription's cancel, its MOBILE window closing, or its cycle moving past it: its unpaid declined cycles'
-- `lost` again (a charge moves the cycle: one probe of an index that holds nothing for most subscriptions).
CREATE OR REPLACE FUNCTION "report_rollups_subscriptions"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "recovery_cycles" r
                  WHERE r."subscriptionId" = NEW."id" AND r."lost" <> "cycle_lost"(r."paidAmount", NEW."status", NEW."attentionReason", NEW."cycle", r."cycle")) THEN
    RETURN NULL;
  END IF;
  UPDATE "recovery_cycles" r SET "lost" = "cycle_lost"(r."paidAmount", NEW."status", NEW."attentionReason", NEW."cycle", r."cycle")
   WHERE r."subscriptionId" = NEW."id" AND r."lost" <> "cycle_lost"(r."paidAmount", NEW."status", NEW."attentionReason", NEW."cycle", r."cycle");
  RETURN NULL;
END $$;

-- The declined cycles' monthly figures follow their rows (inserted, changed, or removed by a rebuild).
CREATE OR REPLACE FUNCTION "recovery_months_apply"(added "recovery_line"[], removed "recovery_line"[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO "recovery_months" AS r ("month", "shard", "failedCycles", "recovered", "recoveredAmount", "lost")
  SELECT "report_month"(l."at"), "report_shard"(), sum(l."failedCycles" * l.sign), sum(l."recovered" * l.sign), sum(l."recoveredAmount" * l.sign), sum(l."lost" * l.sign)
    FROM (SELECT x.*, 1 AS sign FROM unnest(added) x UNION ALL SELECT x.*, -1 FROM unnest(removed) x) l
   GROUP BY 1
  HAVING sum(l."failedCycles" * l.sign) <> 0 OR sum(l."recovered" * l.sign) <> 0 OR sum(l."recoveredAmount" * l.sign) <> 0 OR sum(l."lost" * l.sign) <> 0
   ORDER BY 1
  ON CONFLICT ("month", "shard") DO UPDATE SET
    "failedCycles" = r."failedCycles" + EXCLUDED."failedCycles", "recovered" = r."recovered" + EXCLUDED."recovered",
    "recoveredAmount" = r."recoveredAmount" + EXCLUDED."recoveredAmount", "lost" = r."lost" + EXCLUDED."lost"
$$;
CREATE OR REPLACE FUNCTION "report_rollups_recovery_cycles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM "recovery_months_apply"(ARRAY(SELECT "recovery_cycle_line"(n."firstDeclineAt", n."paidAmount", n."lost") FROM new_rows n), '{}');
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM "recovery_months_apply"(ARRAY(SELECT "recovery_cycle_line"(n."firstDeclineAt", n."paidAmount", n."lost") FROM new_rows n),
                                    ARRAY(SELECT "recovery_cycle_line"(o."firstDeclineAt", o."paidAmount", o."lost") FROM old_rows o));
  ELSE
    PERFORM "recovery_months_apply"('{}', ARRAY(SELECT "recovery_cycle_line"(o."firstDeclineAt", o."paidAmount", o."lost") FROM old_rows o));
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER "payments_report_rollups_insert" AFTER INSERT ON "payments" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_payments"();
CREATE OR REPLACE TRIGGER "payments_report_rollups" AFTER UPDATE ON "payments" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_payments"();
CREATE OR REPLACE TRIGGER "payment_attempts_report_rollups_insert" AFTER INSERT ON "payment_attempts" FOR EACH ROW
  WHEN ("refund_counts"(NEW."operation", NEW."status") OR "decline_at"(NEW."operation", NEW."status", NEW."completedAt") IS NOT NULL)
  EXECUTE FUNCTION "report_rollups_attempt"();
CREATE OR REPLACE TRIGGER "payment_attempts_report_rollups" AFTER UPDATE ON "payment_attempts" FOR EACH ROW
  WHEN (ROW(OLD."operation", OLD."status", OLD."sentAt", OLD."completedAt", OLD."createdAt", OLD."amount", OLD."paymentId")
          IS DISTINCT FROM ROW(NEW."operation", NEW."status", NEW."sentAt", NEW."completedAt", NEW."createdAt", NEW."amount", NEW."paymentId")
        AND ("refund_counts"(OLD."operation", OLD."status") OR "refund_counts"(NEW."operation", NEW."status")
             OR "decline_at"(OLD."operation", OLD."status", OLD."completedAt") IS NOT NULL
             OR "decline_at"(NEW."operation", NEW."status", NEW."completedAt") IS NOT NULL))
  EXECUTE FUNCTION "report_rollups_attempt"();
CREATE OR REPLACE TRIGGER "external_refunds_report_rollups" AFTER INSERT ON "external_refunds" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_external_refunds"();
CREATE OR REPLACE TRIGGER "subscriptions_report_rollups" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."attentionReason", OLD."cycle") IS DISTINCT FROM ROW(NEW."status", NEW."attentionReason", NEW."cycle"))
  EXECUTE FUNCTION "report_rollups_subscriptions"();
CREATE OR REPLACE TRIGGER "recovery_cycles_report_rollups_insert" AFTER INSERT ON "recovery_cycles" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_recovery_cycles"();
CREATE OR REPLACE TRIGGER "recovery_cycles_report_rollups" AFTER UPDATE ON "recovery_cycles" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_recovery_cycles"();
CREATE OR REPLACE TRIGGER "recovery_cycles_report_rollups_delete" AFTER DELETE ON "recovery_cycles" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_recovery_cycles"();
CREATE OR REPLACE TRIGGER "mrr_movements_report_rollups" AFTER INSERT ON "mrr_movements" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "report_rollups_mrr_movements"();

-- ── Rebuilding them ────────────────────────────────────────────────────────────────────────────────────────────────
-- From the raw rows, through the same rules: migration 20261124210000_report_rollups's back-fill, and bench/seed.ts's after it writes with
-- triggers off. Not for a running service (it rewrites every row; concurrent writers would wait on them).
CREATE OR REPLACE FUNCTION "rebuild_report_rollups"() RETURNS void LANGUAGE sql AS $$
  -- Writers wait until the rebuild commits: a change committed between a DELETE and its INSERT would be counted twice.
  LOCK TABLE "payments", "payment_attempts", "external_refunds", "subscriptions", "mrr_movements" IN SHARE MODE;
  DELETE FROM "revenue_days";
  INSERT INTO "revenue_days" ("day", "method", "gateway", "shard", "paymentCount", "paymentAmount", "refundCount", "refundAmount")
  SELECT "report_day"(l."at"), l."method", l."gateway", 0, sum(l."paymentCount"), sum(l."paymentAmount"), sum(l."refundCount"), sum(l."refundAmount")
    FROM "revenue_lines"('-infinity', 'infinity') l GROUP BY 1, 2, 3;
  DELETE FROM "recovery_cycles";
  INSERT INTO "recovery_cycles" ("paymentId", "subscriptionId", "cycle", "firstDeclineAt", "paidAmount", "lost")
  SELECT p."id", p."subscriptionId", p."cycle", d."at", "paid_amount"(p."status", p."approvedAt", p."amount"),
         "cycle_lost"("paid_amount"(p."status", p."approvedAt", p."amount"), s."status", s."attentionReason", s."cycle", p."cycle")
    FROM (SELECT a."paymentId", min("decline_at"(a."operation", a."status", a."completedAt")) AS "at" FROM "payment_attempts" a
           WHERE "decline_at"(a."operation", a."status", a."completedAt") IS NOT NULL GROUP BY a."paymentId") d
    JOIN "payments" p ON p."id" = d."paymentId"
    JOIN "subscriptions" s ON s."id" = p."subscriptionId"
   WHERE "recovery_cycle_of"(p."subscriptionId", p."cycle", p."kind");
  -- The rows' own triggers moved the months meanwhile; the months are written again from the rows, in shard 0.
  DELETE FROM "recovery_months";
  INSERT INTO "recovery_months" ("month", "shard", "failedCycles", "recovered", "recoveredAmount", "lost")
  SELECT "report_month"(l."at"), 0, sum(l."failedCycles"), sum(l."recovered"), sum(l."recoveredAmount"), sum(l."lost")
    FROM "recovery_cycles" c, LATERAL (SELECT ("recovery_cycle_line"(c."firstDeclineAt", c."paidAmount", c."lost")).*) l GROUP BY 1;
  DELETE FROM "mrr_months";
  INSERT INTO "mrr_months" ("month", "kind", "shard", "count", "delta")
  SELECT "report_month"(m."at"), m."kind", 0, count(*), sum(m."delta") FROM "mrr_movements" m GROUP BY 1, 2;
$$;
