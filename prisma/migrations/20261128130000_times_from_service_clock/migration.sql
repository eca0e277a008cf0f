-- Times the database writes come from the service's clock (DESIGN.md §7, issue 30): a trigger has only the database's
-- clock, so it dates what it writes from a time the service wrote in the same statement. With CLOCK=simulated set years
-- away, an event was dated by the real clock while the change it reports was dated by the simulated one.
--
-- Events: "createdAt" is the changed row's own updatedAt, which every writer sets from the service's clock
-- (db/clock-stamps.ts for Prisma, the one-statement charge record and the trial notice for raw SQL). An event of a row
-- written again in the same transaction keeps the time of its first write. The column keeps its default for an insert
-- by hand. As in migration 20261128120000_payment_event_refunds otherwise.
CREATE OR REPLACE FUNCTION "record_merchant_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  object_type text := TG_ARGV[0];
  watched text[] := TG_ARGV[1]::text[];
  hidden text[] := TG_ARGV[2]::text[];
  new_row jsonb := to_jsonb(NEW);
  old_row jsonb;
  changed jsonb := '{}';
  column_name text;
  event_type text;
  existing_id uuid;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    old_row := to_jsonb(OLD);
    FOREACH column_name IN ARRAY watched LOOP
      IF old_row -> column_name IS DISTINCT FROM new_row -> column_name THEN
        changed := changed || jsonb_build_object(column_name, old_row -> column_name);
      END IF;
    END LOOP;
    IF changed = '{}' THEN
      -- No public change of its own (the row's updatedAt moved, with columns no event names): this transaction's
      -- events of the row, if any, show the row as the transaction leaves it, as GET will after the commit.
      UPDATE "events" e SET "snapshot" = CASE WHEN object_type = 'payment' THEN (new_row - hidden) || "payment_refunds_snapshot"(NEW."id")
                                              ELSE new_row - hidden END
       WHERE e."objectId" = NEW."id" AND e."xid" = pg_current_xact_id()::text::bigint AND e."sequence" IS NULL;
      RETURN NULL;
    END IF;
  END IF;

  IF object_type = 'subscription' THEN
    event_type := CASE
      WHEN TG_OP = 'INSERT' THEN 'subscription.created'
      WHEN changed ? 'status' AND new_row ->> 'status' = 'CANCELED' THEN 'subscription.canceled'
      WHEN changed ? 'trialWillEndAt' AND new_row ->> 'trialWillEndAt' IS NOT NULL THEN 'subscription.trial_will_end'
      ELSE 'subscription.updated' END;
  ELSIF object_type = 'payment' THEN
    event_type := CASE
      WHEN TG_OP = 'INSERT' OR changed ? 'status' THEN CASE new_row ->> 'status'
        WHEN 'SUCCEEDED' THEN 'payment.succeeded' WHEN 'FAILED' THEN 'payment.failed'
        WHEN 'UNKNOWN' THEN 'payment.unknown' WHEN 'CANCELED' THEN 'payment.canceled' END
      WHEN changed ? 'canceledAmount' AND (new_row ->> 'canceledAmount')::int > (changed ->> 'canceledAmount')::int
        THEN 'payment.canceled' END;
  ELSE -- registration, order
    event_type := CASE WHEN TG_OP = 'INSERT' OR changed ? 'status' THEN CASE new_row ->> 'status'
        WHEN 'COMPLETED' THEN object_type || '.completed' WHEN 'FAILED' THEN object_type || '.failed'
        WHEN 'EXPIRED' THEN CASE WHEN object_type = 'registration' THEN 'registration.expired' END END END;
  END IF;

  new_row := new_row - hidden;
  -- This transaction's event of this row, if any: found by the row and the writing transaction (events_objectId_pos_idx;
  -- an object has a few events), so an event written in a savepoint rolled back since is not found, as before.
  SELECT e."id" INTO existing_id FROM "events" e
   WHERE e."objectId" = NEW."id" AND e."xid" = pg_current_xact_id()::text::bigint AND e."sequence" IS NULL
     AND e."type" <> 'subscription.trial_will_end'
   LIMIT 1;
  -- A payment's refunds as they stand now, only when an event of it is written.
  IF object_type = 'payment' AND (existing_id IS NOT NULL OR event_type IS NOT NULL) THEN
    new_row := new_row || "payment_refunds_snapshot"(NEW."id");
  END IF;
  -- The notice of a trial's end is an event of its own, even in the transaction that created the subscription.
  IF event_type = 'subscription.trial_will_end' THEN
    INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous", "createdAt")
    VALUES (event_type, object_type, NEW."id", new_row, changed, NEW."updatedAt");
  ELSIF existing_id IS NOT NULL THEN
    UPDATE "events" SET
      "snapshot" = new_row,
      "previous" = CASE WHEN "previous" IS NULL THEN NULL ELSE changed || "previous" END,
      "type" = CASE WHEN event_type IS NULL OR "type" LIKE '%.created' OR event_type LIKE '%.updated' THEN "type" ELSE event_type END
     WHERE "id" = existing_id;
  ELSIF event_type IS NOT NULL THEN
    INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous", "createdAt")
    VALUES (event_type, object_type, NEW."id", new_row, CASE WHEN TG_OP = 'UPDATE' THEN changed END, NEW."updatedAt");
  END IF;
  RETURN NULL;
END $$;

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
