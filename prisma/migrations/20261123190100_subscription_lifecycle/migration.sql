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
  WHERE "status" IN ('ACTIVE', 'TRIALING', 'PAST_DUE') AND "needsAttention" = false;

-- Events: the new public fields count as changes (record_merchant_event, in 20261123180000_merchant_events, already
-- knows the notice of a trial's end).

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
