-- MRR movements (issue #23, DESIGN.md §5 "Reports"): the ledger the revenue reports read, written by the database in
-- the transaction of every change of a subscription that moves its MRR, whoever writes it (the Prisma writers and
-- the one-statement charge record alike), so that for every period ending = starting + new + expansion +
-- reactivation − contraction − churn, to the won. Reports never read the events table (events expire; movements are
-- kept, and never changed or removed: §3 rule 15).
--
-- When a movement happened: the service's clock, not the database's. Triggers see only the database's clock, while
-- the reports' "now" (and every test, with CLOCK=simulated) is the service's. "updatedAt" cannot carry it: Prisma
-- writes it from the system clock, raw SQL from now(), and it is the charge's optimistic version token (two writes
-- at one frozen simulated instant must still differ). So subscriptions gain "changedAt": the service's clock at the
-- latest write of the row's status or terms. Every such writer sets it (ledger/subscription.state.ts requires it of
-- each status move and creation; the amount writers set it too), and a movement is dated NEW."changedAt".
ALTER TABLE "subscriptions" ADD COLUMN "changedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
UPDATE "subscriptions" SET "changedAt" = "updatedAt";

CREATE TYPE "MrrMovementKind" AS ENUM ('NEW', 'EXPANSION', 'CONTRACTION', 'CHURN', 'REACTIVATION');

CREATE TABLE "mrr_movements" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "subscriptionId" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "kind" "MrrMovementKind" NOT NULL,
    "mrrBefore" BIGINT NOT NULL,
    "mrrAfter" BIGINT NOT NULL,
    "delta" BIGINT NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "statusBefore" "SubscriptionStatus",
    "statusAfter" "SubscriptionStatus" NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "mrr_movements_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "mrr_movements_delta" CHECK ("delta" = "mrrAfter" - "mrrBefore")
);
CREATE INDEX "mrr_movements_at_idx" ON "mrr_movements"("at");
CREATE INDEX "mrr_movements_subscriptionId_at_idx" ON "mrr_movements"("subscriptionId", "at");
ALTER TABLE "mrr_movements" ADD CONSTRAINT "mrr_movements_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE FUNCTION "mrr_movements_are_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'mrr_movements are immutable (%)', TG_OP;
END $$;
CREATE TRIGGER "mrr_movements_immutable" BEFORE UPDATE OR DELETE ON "mrr_movements" FOR EACH ROW EXECUTE FUNCTION "mrr_movements_are_immutable"();

-- A subscription's MRR (DESIGN.md §5 "Reports"), the SQL twin of src/modules/reports/mrr.ts's subscriptionMrr
-- (test/modules/reports/mrr.test.ts compares them on the migrated database): the amount per month, rounded half up
-- per subscription, in integers (round(n / d) half up = (2n + d) div 2d); nothing unless ACTIVE or PAST_DUE. In
-- bigint: a daily amount over about 70 million won is over 2^31 a month.
CREATE FUNCTION "subscription_mrr"(status "SubscriptionStatus", amount integer, unit "IntervalUnit", count integer)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN status NOT IN ('ACTIVE', 'PAST_DUE') THEN 0 ELSE (
    SELECT (2 * n + d) / (2 * d) FROM (SELECT
      CASE unit WHEN 'month' THEN amount::bigint WHEN 'year' THEN amount::bigint
                WHEN 'week' THEN amount::bigint * 52 ELSE amount::bigint * 365 END AS n,
      CASE unit WHEN 'month' THEN count::bigint ELSE 12 * count::bigint END AS d) f) END
$$;

-- The movement of one change: NEW when the subscription counts for the first time (a trial's first paid charge
-- included), REACTIVATION when it counts again after it had stopped (a resume: it has movements already), CHURN when
-- it stops counting (cancel, pause; a cancel at period end when its status becomes CANCELED at the period's end),
-- EXPANSION / CONTRACTION when its MRR changes while it counts. Nothing else moves MRR (refunds never do).
CREATE FUNCTION "record_mrr_movement"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  before_mrr bigint := 0;
  after_mrr bigint := "subscription_mrr"(NEW."status", NEW."amount", NEW."intervalUnit", NEW."intervalCount");
  counted boolean := false;
  counts boolean := NEW."status" IN ('ACTIVE', 'PAST_DUE');
  before_status "SubscriptionStatus";
  movement "MrrMovementKind";
BEGIN
  IF TG_OP = 'UPDATE' THEN
    before_status := OLD."status";
    counted := OLD."status" IN ('ACTIVE', 'PAST_DUE');
    before_mrr := "subscription_mrr"(OLD."status", OLD."amount", OLD."intervalUnit", OLD."intervalCount");
  END IF;
  IF counts AND NOT counted THEN
    movement := CASE WHEN EXISTS (SELECT 1 FROM "mrr_movements" m WHERE m."subscriptionId" = NEW."id") THEN 'REACTIVATION' ELSE 'NEW' END;
  ELSIF counted AND NOT counts THEN
    movement := 'CHURN';
  ELSIF counts AND after_mrr > before_mrr THEN
    movement := 'EXPANSION';
  ELSIF counts AND after_mrr < before_mrr THEN
    movement := 'CONTRACTION';
  ELSE
    RETURN NULL;
  END IF;
  INSERT INTO "mrr_movements" ("subscriptionId", "at", "kind", "mrrBefore", "mrrAfter", "delta", "method", "statusBefore", "statusAfter")
  VALUES (NEW."id", NEW."changedAt", movement, before_mrr, after_mrr, after_mrr - before_mrr, NEW."method", before_status, NEW."status");
  RETURN NULL;
END $$;

CREATE TRIGGER "subscriptions_mrr_movements_insert" AFTER INSERT ON "subscriptions" FOR EACH ROW
  EXECUTE FUNCTION "record_mrr_movement"();
CREATE TRIGGER "subscriptions_mrr_movements" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."intervalUnit", OLD."intervalCount") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."intervalUnit", NEW."intervalCount"))
  EXECUTE FUNCTION "record_mrr_movement"();

-- Back-fill: a subscription that counts when this migration runs gets one NEW movement of its current MRR, dated at
-- its creation (its history before this migration is not known: the events that told it may have expired). One that
-- counts nothing now gets none (its movements would sum to nothing). Reports are exact from here on; before, they
-- show each counting subscription as new in the month it was created.
INSERT INTO "mrr_movements" ("subscriptionId", "at", "kind", "mrrBefore", "mrrAfter", "delta", "method", "statusBefore", "statusAfter")
SELECT s."id", s."createdAt", 'NEW', 0, m.mrr, m.mrr, s."method", NULL, s."status"
  FROM "subscriptions" s, LATERAL (SELECT "subscription_mrr"(s."status", s."amount", s."intervalUnit", s."intervalCount") AS mrr) m
 WHERE s."status" IN ('ACTIVE', 'PAST_DUE');
