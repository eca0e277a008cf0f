-- Subscription lifecycle (issue #14, DESIGN.md §5 and §3 rule 13): trials, consents, price changes.

-- Consents are evidence: written once, never changed or removed (the database refuses it).
CREATE TYPE "ConsentKind" AS ENUM ('TRIAL_CONVERSION', 'PRICE_INCREASE');
CREATE TABLE "consents" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "subscriptionId" UUID NOT NULL,
    "kind" "ConsentKind" NOT NULL,
    "obtainedAt" TIMESTAMPTZ(3) NOT NULL,
    "channel" TEXT,
    "reference" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "consents_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "consents_subscriptionId_kind_obtainedAt_idx" ON "consents"("subscriptionId", "kind", "obtainedAt");
ALTER TABLE "consents" ADD CONSTRAINT "consents_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "subscriptions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
CREATE FUNCTION "consents_are_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'consents are immutable (%)', TG_OP;
END $$;
CREATE TRIGGER "consents_immutable" BEFORE UPDATE OR DELETE ON "consents" FOR EACH ROW EXECUTE FUNCTION "consents_are_immutable"();

ALTER TABLE "registrations" ADD COLUMN "trialDays" INTEGER;
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_trialDays_range" CHECK ("trialDays" BETWEEN 1 AND 365);

-- trialEnd: the first charge and the anchor of a trial's cycles. trialWillEndAt: when subscription.trial_will_end
-- was emitted (once). pendingAmount: a price increase waiting for its consent, asked for at pendingAmountRequestedAt.
ALTER TABLE "subscriptions" ADD COLUMN "trialEnd" TIMESTAMPTZ(3);
ALTER TABLE "subscriptions" ADD COLUMN "trialWillEndAt" TIMESTAMPTZ(3);
ALTER TABLE "subscriptions" ADD COLUMN "pendingAmount" INTEGER;
ALTER TABLE "subscriptions" ADD COLUMN "pendingAmountRequestedAt" TIMESTAMPTZ(3);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_pendingAmount_positive" CHECK ("pendingAmount" > 0);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_pendingAmount_requested" CHECK (("pendingAmount" IS NULL) = ("pendingAmountRequestedAt" IS NULL));
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_trialing_has_end" CHECK ("status" <> 'TRIALING' OR "trialEnd" IS NOT NULL);

-- The scheduler claims trials at their end too.
DROP INDEX "subscriptions_due_claim_idx";
CREATE INDEX "subscriptions_due_claim_idx" ON "subscriptions"("nextChargeAt")
  WHERE "status" IN ('ACTIVE', 'PAST_DUE', 'TRIALING') AND "needsAttention" = false;

-- Events: the new public fields count as changes, and the first notice of a trial's end is its own type.
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

DROP TRIGGER "subscriptions_merchant_events" ON "subscriptions";
DROP TRIGGER "subscriptions_merchant_events_insert" ON "subscriptions";
CREATE TRIGGER "subscriptions_merchant_events_insert" AFTER INSERT ON "subscriptions" FOR EACH ROW
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,cancelReason,needsAttention,attentionReason,billingKeyId,trialEnd,trialWillEndAt,pendingAmount}',
    '{leaseOwner,leaseExpiresAt}');
CREATE TRIGGER "subscriptions_merchant_events" AFTER UPDATE ON "subscriptions" FOR EACH ROW
  WHEN (ROW(OLD."status", OLD."amount", OLD."orderName", OLD."intervalUnit", OLD."intervalCount", OLD."itemCode", OLD."currentPeriodStart", OLD."currentPeriodEnd", OLD."nextChargeAt", OLD."cancelAtPeriodEnd", OLD."canceledAt", OLD."cancelReason", OLD."needsAttention", OLD."attentionReason", OLD."billingKeyId", OLD."trialEnd", OLD."trialWillEndAt", OLD."pendingAmount") IS DISTINCT FROM ROW(NEW."status", NEW."amount", NEW."orderName", NEW."intervalUnit", NEW."intervalCount", NEW."itemCode", NEW."currentPeriodStart", NEW."currentPeriodEnd", NEW."nextChargeAt", NEW."cancelAtPeriodEnd", NEW."canceledAt", NEW."cancelReason", NEW."needsAttention", NEW."attentionReason", NEW."billingKeyId", NEW."trialEnd", NEW."trialWillEndAt", NEW."pendingAmount"))
  EXECUTE FUNCTION "record_merchant_event"('subscription',
    '{status,amount,orderName,intervalUnit,intervalCount,itemCode,currentPeriodStart,currentPeriodEnd,nextChargeAt,cancelAtPeriodEnd,canceledAt,cancelReason,needsAttention,attentionReason,billingKeyId,trialEnd,trialWillEndAt,pendingAmount}',
    '{leaseOwner,leaseExpiresAt}');
