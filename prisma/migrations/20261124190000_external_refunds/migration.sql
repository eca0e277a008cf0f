-- Refunds made outside the gateway (DESIGN.md §5 "Refunds made outside the gateway"): a MOBILE payment after its month
-- can only be refunded by bank transfer, which an operator records here. They are no gateway call, so they are not
-- payment attempts (one row per call, rule 1): a table of their own, which reconciliation never expects a gateway line
-- for and which the payment's canceledAmount counts through the same write as a gateway refund's success
-- (src/modules/ledger/refund.outcomes.ts). Rule 15: a recorded refund is never edited nor deleted; a correction is a
-- new record.
CREATE TABLE "external_refunds" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "paymentId" UUID NOT NULL,
    "amount" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "reference" TEXT,
    "actor" TEXT NOT NULL,
    -- The service's clock when it was recorded: the revenue report dates the refund by it.
    "recordedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "external_refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "external_refunds_amount_positive" CHECK ("amount" > 0),
    CONSTRAINT "external_refunds_reason_length" CHECK (char_length("reason") BETWEEN 1 AND 500),
    CONSTRAINT "external_refunds_reference_length" CHECK ("reference" IS NULL OR char_length("reference") BETWEEN 1 AND 200)
);

CREATE INDEX "external_refunds_paymentId_recordedAt_idx" ON "external_refunds"("paymentId", "recordedAt");
CREATE INDEX "external_refunds_recordedAt_idx" ON "external_refunds"("recordedAt");

ALTER TABLE "external_refunds" ADD CONSTRAINT "external_refunds_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE FUNCTION "refuse_external_refund_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% of % is refused: recorded refunds are never edited nor deleted', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER "external_refunds_immutable" BEFORE UPDATE OR DELETE ON "external_refunds" FOR EACH ROW
  EXECUTE FUNCTION "refuse_external_refund_change"();

-- A gateway refund (a CANCEL attempt) keeps the operator's reason, which the payment's `refunds` list shows. Refunds
-- asked before this column existed take it from their audit entry (payment.refund names its attempt).
ALTER TABLE "payment_attempts" ADD COLUMN "reason" TEXT;
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_reason_only_refunds" CHECK ("reason" IS NULL OR "operation" = 'CANCEL');
UPDATE "payment_attempts" a SET "reason" = e."reason"
  FROM "audit_events" e
 WHERE a."operation" = 'CANCEL' AND e."action" = 'payment.refund' AND e."entityType" = 'payment'
   AND e."entityId" = a."paymentId"::text AND e."after" ->> 'refundAttemptId' = a."id"::text;
