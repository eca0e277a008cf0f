-- The merchant events' trigger finds this transaction's event of a row by the row and the transaction, instead of
-- remembering it in a transaction-local setting named after the row (billing_events.o<row id>). PostgreSQL keeps
-- every custom setting's name for the life of the connection, even after the transaction that set it ended: a pooled
-- connection grew by about 470 bytes per row it wrote (20,000 rows: 57 KB to 8.4 MB of settings), without bound.
-- Everything else in the function is as it was (migration 20261123180000_merchant_events).
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
    IF changed = '{}' THEN RETURN NULL; END IF;
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
  -- The notice of a trial's end is an event of its own, even in the transaction that created the subscription.
  IF event_type = 'subscription.trial_will_end' THEN
    INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous")
    VALUES (event_type, object_type, NEW."id", new_row, changed);
  ELSIF existing_id IS NOT NULL THEN
    UPDATE "events" SET
      "snapshot" = new_row,
      "previous" = CASE WHEN "previous" IS NULL THEN NULL ELSE changed || "previous" END,
      "type" = CASE WHEN event_type IS NULL OR "type" LIKE '%.created' OR event_type LIKE '%.updated' THEN "type" ELSE event_type END
     WHERE "id" = existing_id;
  ELSIF event_type IS NOT NULL THEN
    INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous")
    VALUES (event_type, object_type, NEW."id", new_row, CASE WHEN TG_OP = 'UPDATE' THEN changed END);
  END IF;
  RETURN NULL;
END $$;
