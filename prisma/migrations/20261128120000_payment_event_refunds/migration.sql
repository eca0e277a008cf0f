-- A payment's event carries its refunds as of the change (README "Events and webhooks": the object is what GET shows, a
-- payment's `refunds` included). The trigger that writes the event adds them to the snapshot in the transaction of the
-- change: its gateway refunds (CANCEL attempts) and its refunds made outside the gateway, the columns
-- payments.service.ts serializeRefunds reads, so the event is rendered by the same serializer as GET. A snapshot, not
-- a join at read time: a refund whose attempt changes later (an unknown outcome settled) does not rewrite an older
-- event, and a refund asked after the event never appears in it.
--
-- Cost on the charge path: the two index reads below run only when a payment event is written or rewritten (not on
-- the PENDING insert nor on lease or attempt-count writes), on (paymentId, attemptNumber) and (paymentId, recordedAt).

CREATE FUNCTION "payment_refunds_snapshot"(payment_id uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
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

-- As in migration 20261124220000_event_lookup_without_settings, plus the payment's refunds in its snapshot, and a write
-- later in the transaction that changes no watched column (a decline's retry time after its status) refreshes the
-- snapshot of the transaction's event of the row: an event's object is the row as its transaction left it, updatedAt
-- included. An event's "createdAt" is the changed row's own updatedAt, which every writer sets from the service's clock
-- (db/clock-stamps.ts for Prisma, the one-statement charge record and the trial notice for raw SQL), not the database's
-- clock; an event of a row written again in the same transaction keeps the time of its first write. The column keeps its
-- default for an insert by hand.
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

-- A refund written after its payment's event in the same transaction (whatever order a writer takes) is in that event
-- too: this transaction's event of the payment, if any, takes the refunds as they stand after the write. Only refunds
-- fire it (the WHEN is evaluated without calling the function): the charge path's attempts do not.
CREATE FUNCTION "refresh_payment_event_refunds"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "events" e SET "snapshot" = e."snapshot" || "payment_refunds_snapshot"(NEW."paymentId")
   WHERE e."objectId" = NEW."paymentId" AND e."objectType" = 'payment' AND e."xid" = pg_current_xact_id()::text::bigint
     AND e."sequence" IS NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER "payment_attempts_event_refunds" AFTER INSERT OR UPDATE ON "payment_attempts" FOR EACH ROW
  WHEN (NEW."operation" = 'CANCEL')
  EXECUTE FUNCTION "refresh_payment_event_refunds"();
CREATE TRIGGER "external_refunds_event_refunds" AFTER INSERT ON "external_refunds" FOR EACH ROW
  EXECUTE FUNCTION "refresh_payment_event_refunds"();

-- The update triggers also fire when only updatedAt moved (the refresh above). The charge path's one-statement writes
-- do not set updatedAt on their lease-only updates, so they call nothing more.
DROP TRIGGER "subscriptions_merchant_events" ON "subscriptions";
CREATE TRIGGER "subscriptions_merchant_events" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderName", OLD."intervalUnit", OLD."intervalCount", OLD."itemCode", OLD."currentPeriodStart", OLD."currentPeriodEnd", OLD."nextChargeAt", OLD."cancelAtPeriodEnd", OLD."canceledAt", OLD."cancelReason", OLD."needsAttention", OLD."attentionReason", OLD."billingKeyId", OLD."trialEnd", OLD."trialWillEndAt", OLD."pendingAmount", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderName", NEW."intervalUnit", NEW."intervalCount", NEW."itemCode", NEW."currentPeriodStart", NEW."currentPeriodEnd", NEW."nextChargeAt", NEW."cancelAtPeriodEnd", NEW."canceledAt", NEW."cancelReason", NEW."needsAttention", NEW."attentionReason", NEW."billingKeyId", NEW."trialEnd", NEW."trialWillEndAt", NEW."pendingAmount", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,cancelReason,needsAttention,attentionReason,billingKeyId,trialEnd,trialWillEndAt,pendingAmount}',
    '{leaseOwner,leaseExpiresAt}');

DROP TRIGGER "payments_merchant_events" ON "payments";
CREATE TRIGGER "payments_merchant_events" AFTER UPDATE ON "payments" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderId", OLD."transactionId", OLD."approvedAt", OLD."failureCode", OLD."failureMessage", OLD."canceledAmount", OLD."attentionReason", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderId", NEW."transactionId", NEW."approvedAt", NEW."failureCode", NEW."failureMessage", NEW."canceledAmount", NEW."attentionReason", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('payment',
    '{status,amount,orderId,transactionId,approvedAt,failureCode,failureMessage,canceledAmount,attentionReason}',
    '{}');

DROP TRIGGER "registrations_merchant_events" ON "registrations";
CREATE TRIGGER "registrations_merchant_events" AFTER UPDATE ON "registrations" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('registration',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,userPhoneNumber,leaseOwner,leaseExpiresAt}');

DROP TRIGGER "orders_merchant_events" ON "orders";
CREATE TRIGGER "orders_merchant_events" AFTER UPDATE ON "orders" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."failureCode", OLD."failureMessage", OLD."completedAt", OLD."updatedAt") IS DISTINCT FROM ROW(NEW."status", NEW."failureCode", NEW."failureMessage", NEW."completedAt", NEW."updatedAt"))
  EXECUTE FUNCTION "record_merchant_event"('order',
    '{status,failureCode,failureMessage,completedAt}',
    '{state,leaseOwner,leaseExpiresAt}');
