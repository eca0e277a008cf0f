-- Merchant events (docs/api.md "Events and webhooks"; docs/architecture.md, invariant 12): the outbox is written by the
-- database itself. A trigger on every table whose changes a merchant cares about (subscriptions, payments,
-- registrations, orders) writes the event row inside the statement that makes the change, so no code path can commit
-- a change without its event or an event without its change, whatever crashes when. The trigger stores the row after
-- the change (minus secrets and lease bookkeeping) and the old values of the changed public columns; the service
-- renders the public shape from them (src/modules/events/events.render.ts). The event types written here are
-- EVENT_TYPES (src/modules/events/event-types.ts); the watched columns are the public shapes' columns
-- (test/db/function-files.test.ts holds both to the TypeScript).
--
-- An erasure's row (erasures) writes customer.erased. Serves every TypeScript writer of those four tables: the state moves (ledger/payment.state.ts,
-- subscription.state.ts, checkout.state.ts), the charge record (payments/charge.record.ts), cancel, change-price,
-- trials, usage, withdraw, refund-due, replace-payment-method, refund-payment, record-external-refund (a payment's
-- refunds in its event), and the
-- feed and dispatcher (events/events.service.ts calls assign_event_sequences).
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- A payment's refunds as of now, for its event's snapshot: its gateway refunds (CANCEL attempts) and its refunds made
-- outside the gateway, the columns payments.service.ts serializeRefunds reads, so the event is rendered by the same
-- serializer as GET. A snapshot, not a join at read time: a refund whose attempt changes later (an unknown outcome
-- settled) does not rewrite an older event, and a refund asked after the event never appears in it. The two index
-- reads run only when a payment event is written or rewritten (not on the PENDING insert nor on lease or
-- attempt-count writes), on (paymentId, attemptNumber) and (paymentId, recordedAt).
CREATE OR REPLACE FUNCTION "payment_refunds_snapshot"(payment_id uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'refundAttempts', coalesce((
      SELECT jsonb_agg(jsonb_build_object('id', a."id", 'operation', a."operation", 'amount', a."amount", 'status', a."status", 'reason', a."reason",
                                          'completedAt', a."completedAt", 'createdAt', a."createdAt") ORDER BY a."attemptNumber")
        FROM "payment_attempts" a WHERE a."paymentId" = payment_id AND a."operation" = 'CANCEL'), '[]'::jsonb),
    'externalRefunds', coalesce((
      SELECT jsonb_agg(jsonb_build_object('id', r."id", 'amount', r."amount", 'reason', r."reason", 'reference', r."reference",
                                          'recordedAt', r."recordedAt") ORDER BY r."recordedAt", r."createdAt", r."id")
        FROM "external_refunds" r WHERE r."paymentId" = payment_id), '[]'::jsonb))
$$;

-- Whether this transaction has written an event: one setting of a fixed name (so a pooled connection keeps one name,
-- not one per row), set local with the transaction's first event, so a savepoint rolled back takes it back with the
-- event. Until it is set there is no event of this transaction to find or refresh, and the lookups, which read every
-- monthly partition (docs/production.md "Event partitions"), are not made: a charge's first event is written without.
CREATE OR REPLACE FUNCTION "transaction_wrote_event"() RETURNS boolean LANGUAGE sql VOLATILE AS $$
  SELECT coalesce(current_setting('billing.event_xact', true) = pg_current_xact_id()::text, false)
$$;

CREATE OR REPLACE FUNCTION "note_transaction_wrote_event"() RETURNS void LANGUAGE sql VOLATILE AS $$
  SELECT set_config('billing.event_xact', pg_current_xact_id()::text, true)
$$;

-- The event of one row change. Arguments: the object type, the columns whose change a merchant sees (the public
-- shape), the columns never copied into an event (secrets, personal data the public shape does not show).
-- Several changes of one row in one transaction become one event: the latest snapshot, the oldest values. Each type it
-- writes is spelled out whole, so the list can be read off this text (test/db/function-files.test.ts holds it equal
-- to EVENT_TYPES).
--
-- This transaction's event of a row is found by the row and the writing transaction (events_objectId_pos_idx; an
-- object has a few events), not remembered in a transaction-local setting named after the row: PostgreSQL keeps every
-- custom setting's name for the life of the connection, and a pooled connection grew without bound. The lookup is
-- made only once the transaction has written an event (transaction_wrote_event).
--
-- A payment's event carries its refunds as of the change. A write later in the transaction that changes no watched
-- column (a decline's retry time after its status) refreshes the snapshot of the transaction's event of the row: an
-- event's object is the row as its transaction left it, updatedAt included. An event's "createdAt" is the changed
-- row's own updatedAt, which every writer sets from the service's clock (db/clock-stamps.ts for Prisma, the
-- one-statement charge record and the trial notice for raw SQL), not the database's clock; an event of a row written
-- again in the same transaction keeps the time of its first write. The column keeps its default for an insert by hand.
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
  existing_at timestamptz;
  -- Whether this transaction has written an event yet (see above).
  wrote_before boolean := "transaction_wrote_event"();
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
      IF NOT wrote_before THEN
        RETURN NULL;
      END IF;
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
  ELSIF object_type = 'registration' THEN
    event_type := CASE WHEN TG_OP = 'INSERT' OR changed ? 'status' THEN CASE new_row ->> 'status'
        WHEN 'COMPLETED' THEN 'registration.completed' WHEN 'FAILED' THEN 'registration.failed'
        WHEN 'EXPIRED' THEN 'registration.expired' END END;
  ELSIF object_type = 'customer' THEN -- an erasure's row, written once
    event_type := 'customer.erased';
  ELSE -- order
    event_type := CASE WHEN TG_OP = 'INSERT' OR changed ? 'status' THEN CASE new_row ->> 'status'
        WHEN 'COMPLETED' THEN 'order.completed' WHEN 'FAILED' THEN 'order.failed' END END;
  END IF;

  new_row := new_row - hidden;
  -- This transaction's event of this row, if any: found by the row and the writing transaction (events_objectId_pos_idx;
  -- an object has a few events), so an event written in a savepoint rolled back since is not found, as before.
  IF wrote_before THEN
    SELECT e."id", e."createdAt" INTO existing_id, existing_at FROM "events" e
     WHERE e."objectId" = NEW."id" AND e."xid" = pg_current_xact_id()::text::bigint AND e."sequence" IS NULL
       AND e."type" <> 'subscription.trial_will_end'
     LIMIT 1;
  END IF;
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
     WHERE "id" = existing_id AND "createdAt" = existing_at;
  ELSIF event_type IS NOT NULL THEN
    INSERT INTO "events" ("type", "objectType", "objectId", "snapshot", "previous", "createdAt")
    VALUES (event_type, object_type, NEW."id", new_row, CASE WHEN TG_OP = 'UPDATE' THEN changed END, NEW."updatedAt");
  END IF;
  IF NOT wrote_before AND event_type IS NOT NULL THEN
    PERFORM "note_transaction_wrote_event"();
  END IF;
  RETURN NULL;
END $$;

-- A refund written after its payment's event in the same transaction (whatever order a writer takes) is in that event
-- too: this transaction's event of the payment, if any, takes the refunds as they stand after the write. Only refunds
-- fire it (the WHEN is evaluated without calling the function): the charge path's attempts do not.
CREATE OR REPLACE FUNCTION "refresh_payment_event_refunds"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- No event written by this transaction yet: none to refresh.
  IF NOT "transaction_wrote_event"() THEN
    RETURN NULL;
  END IF;
  UPDATE "events" e SET "snapshot" = e."snapshot" || "payment_refunds_snapshot"(NEW."paymentId")
   WHERE e."objectId" = NEW."paymentId" AND e."objectType" = 'payment' AND e."xid" = pg_current_xact_id()::text::bigint
     AND e."sequence" IS NULL;
  RETURN NULL;
END $$;

-- Gives the public sequence to committed events, in the order their transactions' ids were assigned, but only
-- to events older than every transaction still in flight: a transaction in flight could otherwise commit an
-- event before one already numbered, and a reader continuing from the last sequence it saw would miss it.
-- One sequencer at a time (an advisory lock: a second caller waits for the first to commit, so a reader that
-- numbers before reading sees what the other numbered). Also queues the deliveries of the events it numbers to every
-- enabled endpoint that subscribes to their type. A call that finds nothing ready returns before taking the lock.
CREATE OR REPLACE FUNCTION "assign_event_sequences"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  horizon bigint;
  last_sequence bigint;
  numbered integer;
BEGIN
  -- Nothing ready as of this statement's snapshot: answer at once, without the lock or the sequencer's row lock. Every
  -- feed read calls this first, and 50 concurrent readers queued on the lock for nothing (issue 15). A ready event
  -- committed before this call is seen here, so a reader still numbers its own change before it reads.
  IF NOT EXISTS (SELECT 1 FROM "events" WHERE "sequence" IS NULL AND "xid" < (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint) THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(7210013);
  horizon := (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint;
  SELECT "last" INTO last_sequence FROM "event_sequencer" WHERE "id" = 1 FOR UPDATE;
  WITH ready AS (
    SELECT "id", "createdAt", row_number() OVER (ORDER BY "xid", "pos") AS n FROM (
      SELECT "id", "createdAt", "xid", "pos" FROM "events" WHERE "sequence" IS NULL AND "xid" < horizon ORDER BY "xid", "pos" LIMIT batch
    ) oldest
  )
  UPDATE "events" e SET "sequence" = last_sequence + ready.n FROM ready WHERE e."id" = ready."id" AND e."createdAt" = ready."createdAt";
  GET DIAGNOSTICS numbered = ROW_COUNT;
  IF numbered = 0 THEN RETURN 0; END IF;
  UPDATE "event_sequencer" SET "last" = last_sequence + numbered WHERE "id" = 1;
  -- A delivery lives in its event's month (the migration 20261201200000_event_partitions): it takes the event's createdAt.
  INSERT INTO "webhook_deliveries" ("eventId", "eventCreatedAt", "endpointId", "nextAttemptAt")
  SELECT e."id", e."createdAt", w."id", CURRENT_TIMESTAMP FROM "events" e
    JOIN "webhook_endpoints" w ON w."status" = 'ENABLED' AND ('*' = ANY (w."eventTypes") OR e."type" = ANY (w."eventTypes"))
   WHERE e."sequence" > last_sequence AND e."sequence" <= last_sequence + numbered
  ON CONFLICT DO NOTHING;
  RETURN numbered;
END $$;

-- ── The triggers ───────────────────────────────────────────────────────────────────────────────────────────────────
-- The WHEN clauses keep every other write (leases, claims, counters) from entering the function at all: they are
-- evaluated in C, and the charging engine writes those columns several times per charge. Each UPDATE trigger's WHEN
-- lists its watched columns and updatedAt (a write that moves only updatedAt refreshes the transaction's event); the
-- charge path's one-statement writes do not set updatedAt on their lease-only updates, so they call nothing.

CREATE OR REPLACE TRIGGER "subscriptions_merchant_events_insert" AFTER INSERT ON "subscriptions" FOR EACH ROW
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,cancelReason,needsAttention,attentionReason,billingKeyId,method,trialEnd,trialWillEndAt,pendingAmount,usageStartedAt,refundDue}',
    '{leaseOwner,leaseExpiresAt}');
CREATE OR REPLACE TRIGGER "subscriptions_merchant_events" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderName", OLD."intervalUnit", OLD."intervalCount", OLD."itemCode", OLD."currentPeriodStart", OLD."currentPeriodEnd", OLD."nextChargeAt", OLD."cancelAtPeriodEnd", OLD."canceledAt", OLD."cancelReason", OLD."needsAttention", OLD."attentionReason", OLD."billingKeyId", OLD."method", OLD."trialEnd", OLD."trialWillEndAt", OLD."pendingAmount", OLD."usageStartedAt", OLD."refundDue", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderName", NEW."intervalUnit", NEW."intervalCount", NEW."itemCode", NEW."currentPeriodStart", NEW."currentPeriodEnd", NEW."nextChargeAt", NEW."cancelAtPeriodEnd", NEW."canceledAt", NEW."cancelReason", NEW."needsAttention", NEW."attentionReason", NEW."billingKeyId", NEW."method", NEW."trialEnd", NEW."trialWillEndAt", NEW."pendingAmount", NEW."usageStartedAt", NEW."refundDue", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,cancelReason,needsAttention,attentionReason,billingKeyId,method,trialEnd,trialWillEndAt,pendingAmount,usageStartedAt,refundDue}',
    '{leaseOwner,leaseExpiresAt}');

CREATE OR REPLACE TRIGGER "payments_merchant_events_insert" AFTER INSERT ON "payments" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('payment',
    '{status,amount,orderId,transactionId,approvedAt,failureCode,failureMessage,canceledAmount,attentionReason,gateway}',
    '{}');
CREATE OR REPLACE TRIGGER "payments_merchant_events" AFTER UPDATE ON "payments" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderId", OLD."transactionId", OLD."approvedAt", OLD."failureCode", OLD."failureMessage", OLD."canceledAmount", OLD."attentionReason", OLD."gateway", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderId", NEW."transactionId", NEW."approvedAt", NEW."failureCode", NEW."failureMessage", NEW."canceledAmount", NEW."attentionReason", NEW."gateway", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('payment',
    '{status,amount,orderId,transactionId,approvedAt,failureCode,failureMessage,canceledAmount,attentionReason,gateway}',
    '{}');

CREATE OR REPLACE TRIGGER "registrations_merchant_events_insert" AFTER INSERT ON "registrations" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('registration',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}');
CREATE OR REPLACE TRIGGER "registrations_merchant_events" AFTER UPDATE ON "registrations" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('registration',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}');

CREATE OR REPLACE TRIGGER "orders_merchant_events_insert" AFTER INSERT ON "orders" FOR EACH ROW
  WHEN (NEW."status" <> 'PENDING')
  EXECUTE FUNCTION "record_merchant_event"('order',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,leaseOwner,leaseExpiresAt}');
CREATE OR REPLACE TRIGGER "orders_merchant_events" AFTER UPDATE ON "orders" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('order',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,leaseOwner,leaseExpiresAt}');

-- A customer's erasure is the event customer.erased {id, pseudonym, erasedAt, retainUntil}: the erasures row without
-- the vault, the reason, the operator and the rest. The erasure's rewrite of the customer's rows changes no watched
-- column nor updatedAt, so it writes no other event (src/modules/erasure/erase-customer.ts).
CREATE OR REPLACE TRIGGER "erasures_merchant_events_insert" AFTER INSERT ON "erasures" FOR EACH ROW
  EXECUTE FUNCTION "record_merchant_event"('customer',
    '{}',
    '{status,reason,actor,counts,identityKeyId,identityIv,identityTag,identityCiphertext,identityPurgedAt,keyDeletions,createdAt,updatedAt}');

CREATE OR REPLACE TRIGGER "payment_attempts_event_refunds" AFTER INSERT OR UPDATE ON "payment_attempts" FOR EACH ROW
  WHEN (NEW."operation" = 'CANCEL')
  EXECUTE FUNCTION "refresh_payment_event_refunds"();
CREATE OR REPLACE TRIGGER "external_refunds_event_refunds" AFTER INSERT ON "external_refunds" FOR EACH ROW
  EXECUTE FUNCTION "refresh_payment_event_refunds"();
