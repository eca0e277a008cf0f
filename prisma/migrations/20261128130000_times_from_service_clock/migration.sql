-- Times the database writes come from the service's clock (README "Development notes", issue 30): a trigger has only the database's
-- clock, so it dates what it writes from a time the service wrote in the same statement. With CLOCK=simulated set years
-- away, an event was dated by the real clock while the change it reports was dated by the simulated one.
--
-- Events: "createdAt" is the changed row's own updatedAt (record_merchant_event, migration
-- 20261128120000_payment_event_refunds, which no stop shipped before this one).

-- MRR movements: "at" is already the row's changedAt (the service's clock at the change); "createdAt" now too, instead
-- of the database's clock. As in migration 20261124170000_mrr_movements otherwise.
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
