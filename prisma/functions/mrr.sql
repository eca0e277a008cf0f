-- MRR movements (docs/reconciliation.md "Revenue reports"): the ledger the MRR report reads, written by the database in the
-- transaction of every change of a subscription that moves its MRR, whoever writes it (the Prisma writers and the
-- one-statement charge record alike), so that for every period ending = starting + new + expansion + reactivation −
-- contraction − churn, to the won. Movements are kept, never changed or removed (guards.sql; docs/architecture.md,
-- invariant 15).
--
-- When a movement happened: the service's clock, not the database's. A trigger sees only the database's clock, so a
-- movement is dated by the subscription's "changedAt", the service's clock at the latest write of the row's status or
-- terms, which every such writer sets (ledger/subscription.state.ts requires it of each status move and creation; the
-- amount writers set it too).
--
-- Serves the TypeScript writers of a subscription's status or terms: the state moves (ledger/subscription.state.ts),
-- the charge record (payments/charge.record.ts), cancel, pause-resume, change-price, trials, create-subscription and
-- replace-payment-method; the MRR report's TypeScript twin of subscription_mrr is src/modules/reports/mrr.ts.
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- A subscription's MRR (docs/reconciliation.md "Revenue reports"), the SQL twin of src/modules/reports/mrr.ts's
-- subscriptionMrr (test/modules/reports/mrr.test.ts compares them on the migrated database): the amount per month,
-- rounded half up per subscription, in integers (round(n / d) half up = (2n + d) div 2d); nothing unless ACTIVE or
-- PAST_DUE. In bigint: a daily amount over about 70 million won is over 2^31 a month.
CREATE OR REPLACE FUNCTION "subscription_mrr"(status "SubscriptionStatus", amount integer, unit "IntervalUnit", count integer)
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
-- EXPANSION / CONTRACTION when its MRR changes while it counts. Nothing else moves MRR (refunds never do). Dated, and
-- stamped ("createdAt"), by the row's changedAt: the service's clock at the change.
CREATE OR REPLACE FUNCTION "record_mrr_movement"() RETURNS trigger LANGUAGE plpgsql AS $$
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
  INSERT INTO "mrr_movements" ("subscriptionId", "at", "kind", "mrrBefore", "mrrAfter", "delta", "method", "statusBefore", "statusAfter", "createdAt")
  VALUES (NEW."id", NEW."changedAt", movement, before_mrr, after_mrr, after_mrr - before_mrr, NEW."method", before_status, NEW."status", NEW."changedAt");
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER "subscriptions_mrr_movements_insert" AFTER INSERT ON "subscriptions" FOR EACH ROW
  EXECUTE FUNCTION "record_mrr_movement"();
CREATE OR REPLACE TRIGGER "subscriptions_mrr_movements" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."intervalUnit", OLD."intervalCount") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."intervalUnit", NEW."intervalCount"))
  EXECUTE FUNCTION "record_mrr_movement"();
