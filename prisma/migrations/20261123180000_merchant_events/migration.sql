-- Merchant events (issue #13, DESIGN.md §3 rule 12 and §5 "Events and webhooks").
--
-- The outbox is written by the database itself: a trigger on every table whose changes a merchant cares about
-- writes the event row inside the statement that makes the change, so no code path (today's state writers, or
-- a writer added later) can commit a change without its event or an event without its change, whatever crashes
-- when. The trigger stores the row after the change (minus secrets and lease bookkeeping) and the old values of
-- the changed public columns; the service renders the public shape from them (src/modules/events/).

CREATE TYPE "WebhookEndpointStatus" AS ENUM ('ENABLED', 'DISABLED');
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED');

CREATE TABLE "events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    -- Insertion order, a tiebreak among one transaction's events; never shown.
    "pos" BIGSERIAL NOT NULL,
    -- The writing transaction: its events get their public sequence only once no older transaction is in flight.
    "xid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint,
    -- The public, gap-tolerant, strictly increasing position; NULL until assign_event_sequences() reaches it.
    "sequence" BIGINT,
    "type" TEXT NOT NULL,
    "objectType" TEXT NOT NULL,
    "objectId" UUID NOT NULL,
    "snapshot" JSONB NOT NULL,
    "previous" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);
-- Indexes are kept few: every change that has an event pays for them. The sequence is unique among numbered events
-- (a partial index: the rows just written, not yet numbered, are not in it); createdAt (retention, recover) only
-- grows, which a BRIN index serves at almost no cost per row.
CREATE UNIQUE INDEX "events_sequence_key" ON "events"("sequence") WHERE "sequence" IS NOT NULL;
CREATE INDEX "events_createdAt_idx" ON "events" USING BRIN ("createdAt");
-- The sequencer's queue: small (only events not yet sequenced).
CREATE INDEX "events_unsequenced" ON "events"("xid", "pos") WHERE "sequence" IS NULL;

-- One row, written only by assign_event_sequences() (never by the transactions that change money), so event
-- writes do not serialize charging.
CREATE TABLE "event_sequencer" (
    "id" INTEGER NOT NULL,
    "last" BIGINT NOT NULL,
    CONSTRAINT "event_sequencer_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "event_sequencer_single_row" CHECK ("id" = 1)
);
INSERT INTO "event_sequencer" ("id", "last") VALUES (1, 0);

CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "url" TEXT NOT NULL,
    "eventTypes" TEXT[] NOT NULL,
    "description" TEXT,
    "status" "WebhookEndpointStatus" NOT NULL DEFAULT 'ENABLED',
    "disabledReason" TEXT,
    -- [{keyId, iv, tag, ciphertext, expiresAt}] base64, newest first; encrypted like billing keys.
    "secrets" JSONB NOT NULL,
    -- Set at the first failed delivery after a success; an endpoint failing longer than WEBHOOK_DISABLE_AFTER is disabled.
    "failingSince" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_endpoints_createdAt_id_idx" ON "webhook_endpoints"("createdAt", "id");

CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "eventId" UUID NOT NULL,
    "endpointId" UUID NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3),
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_attempts_nonnegative" CHECK ("attempts" >= 0),
    -- A pending delivery always has its next attempt time; a finished one never does.
    CONSTRAINT "webhook_deliveries_pending_has_time" CHECK (("status" = 'PENDING') = ("nextAttemptAt" IS NOT NULL))
);
CREATE UNIQUE INDEX "webhook_deliveries_eventId_endpointId_key" ON "webhook_deliveries"("eventId", "endpointId");
CREATE INDEX "webhook_deliveries_endpointId_status_idx" ON "webhook_deliveries"("endpointId", "status");
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries"("endpointId", "nextAttemptAt") WHERE "status" = 'PENDING';
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The event of one row change. Arguments: the object type, the columns whose change a merchant sees (the public
-- shape), the columns never copied into an event (secrets, personal data the public shape does not show).
-- Several changes of one row in one transaction become one event: the latest snapshot, the oldest values. Columns
-- are read by their JSON key, so a branch for a column a later migration adds (trialWillEndAt, issue #14) is inert
-- until that column exists.
CREATE FUNCTION "record_merchant_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  object_type text := TG_ARGV[0];
  watched text[] := TG_ARGV[1]::text[];
  hidden text[] := TG_ARGV[2]::text[];
  new_row jsonb := to_jsonb(NEW);
  old_row jsonb;
  changed jsonb := '{}';
  column_name text;
  event_type text;
  tx_key text;
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
  -- This transaction's event of this row, if any, is remembered in a transaction-local setting (reverted with the
  -- transaction or savepoint that wrote it), so most calls need no lookup at all.
  tx_key := 'billing_events.o' || replace(NEW."id"::text, '-', '');
  existing_id := nullif(current_setting(tx_key, true), '')::uuid;
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
    VALUES (event_type, object_type, NEW."id", new_row, CASE WHEN TG_OP = 'UPDATE' THEN changed END)
    RETURNING "id" INTO existing_id;
    PERFORM set_config(tx_key, existing_id::text, true);
  END IF;
  RETURN NULL;
END $$;

-- The WHEN clauses keep every other write (leases, claims, counters) from entering the function at all: they are
-- evaluated in C, and the charging engine writes those columns several times per charge.

CREATE TRIGGER "subscriptions_merchant_events_insert" AFTER INSERT ON "subscriptions" FOR EACH ROW
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,needsAttention,attentionReason,billingKeyId}',
    '{leaseOwner,leaseExpiresAt}');

CREATE TRIGGER "subscriptions_merchant_events" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderName", OLD."intervalUnit", OLD."intervalCount", OLD."itemCode", OLD."currentPeriodStart", OLD."currentPeriodEnd", OLD."nextChargeAt", OLD."cancelAtPeriodEnd", OLD."canceledAt", OLD."needsAttention", OLD."attentionReason", OLD."billingKeyId") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderName", NEW."intervalUnit", NEW."intervalCount", NEW."itemCode", NEW."currentPeriodStart", NEW."currentPeriodEnd", NEW."nextChargeAt", NEW."cancelAtPeriodEnd", NEW."canceledAt", NEW."needsAttention", NEW."attentionReason", NEW."billingKeyId"))
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,needsAttention,attentionReason,billingKeyId}',
    '{leaseOwner,leaseExpiresAt}');

CREATE TRIGGER "payments_merchant_events_insert" AFTER INSERT ON "payments" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('payment',
    '{status,amount,orderId,transactionId,approvedAt,failureCode,failureMessage,canceledAmount,attentionReason}',
    '{}');

CREATE TRIGGER "payments_merchant_events" AFTER UPDATE ON "payments" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderId", OLD."transactionId", OLD."approvedAt", OLD."failureCode", OLD."failureMessage", OLD."canceledAmount", OLD."attentionReason") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderId", NEW."transactionId", NEW."approvedAt", NEW."failureCode", NEW."failureMessage", NEW."canceledAmount", NEW."attentionReason"))
  EXECUTE FUNCTION "record_merchant_event"('payment',
    '{status,amount,orderId,transactionId,approvedAt,failureCode,failureMessage,canceledAmount,attentionReason}',
    '{}');

CREATE TRIGGER "registrations_merchant_events_insert" AFTER INSERT ON "registrations" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('registration',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}');

CREATE TRIGGER "registrations_merchant_events" AFTER UPDATE ON "registrations" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt"))
  EXECUTE FUNCTION "record_merchant_event"('registration',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}');

CREATE TRIGGER "orders_merchant_events_insert" AFTER INSERT ON "orders" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('order',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,leaseOwner,leaseExpiresAt}');

CREATE TRIGGER "orders_merchant_events" AFTER UPDATE ON "orders" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt"))
  EXECUTE FUNCTION "record_merchant_event"('order',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,leaseOwner,leaseExpiresAt}');

-- Gives the public sequence to committed events, in the order their transactions' ids were assigned, but only
-- to events older than every transaction still in flight: a transaction in flight could otherwise commit an
-- event before one already numbered, and a reader continuing from the last sequence it saw would miss it.
-- One sequencer at a time (an advisory lock: a second caller waits for the first to commit, so a reader that
-- numbers before reading sees what the other numbered). Also queues the deliveries of
-- the events it numbers to every enabled endpoint that subscribes to their type.
CREATE FUNCTION "assign_event_sequences"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  horizon bigint;
  last_sequence bigint;
  numbered integer;
BEGIN
  PERFORM pg_advisory_xact_lock(7210013);
  horizon := (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint;
  SELECT "last" INTO last_sequence FROM "event_sequencer" WHERE "id" = 1 FOR UPDATE;
  WITH ready AS (
    SELECT "id", row_number() OVER (ORDER BY "xid", "pos") AS n FROM (
      SELECT "id", "xid", "pos" FROM "events" WHERE "sequence" IS NULL AND "xid" < horizon ORDER BY "xid", "pos" LIMIT batch
    ) oldest
  )
  UPDATE "events" e SET "sequence" = last_sequence + ready.n FROM ready WHERE e."id" = ready."id";
  GET DIAGNOSTICS numbered = ROW_COUNT;
  IF numbered = 0 THEN RETURN 0; END IF;
  UPDATE "event_sequencer" SET "last" = last_sequence + numbered WHERE "id" = 1;
  INSERT INTO "webhook_deliveries" ("eventId", "endpointId", "nextAttemptAt")
  SELECT e."id", w."id", CURRENT_TIMESTAMP FROM "events" e
    JOIN "webhook_endpoints" w ON w."status" = 'ENABLED' AND ('*' = ANY (w."eventTypes") OR e."type" = ANY (w."eventTypes"))
   WHERE e."sequence" > last_sequence AND e."sequence" <= last_sequence + numbered
  ON CONFLICT DO NOTHING;
  RETURN numbered;
END $$;
