-- Unknown outcomes a gateway can be asked about (docs/architecture.md "Unknown outcomes a gateway can be asked
-- about"): an UNKNOWN charge attempt whose payment's gateway answers what became of an orderId (its adapter's
-- capabilities.inquiry: Toss) is looked up on TOSS_INQUIRY_DELAYS until the answer decides it or the delays run out.
-- Its state is the attempt's own:
-- - inquiryCount: lookups made so far; the attempt is not asked again once it equals the number of delays;
-- - inquiryNextAt: when it is asked next. Null with a count of 0: never asked, due the first delay after it became
--   UNKNOWN (COALESCE(completedAt, createdAt)); each later one the next delay after the lookup before it; null with a count > 0: the delays ran out (left to an operator). While a replica asks,
--   it holds the lookup for one lease (the scheduler's) by setting it that far ahead (inquiryLeaseOwner names it);
-- - inquiryLastResult, inquiryLastAt: what the last lookup answered and when (shown to operators).
-- Nothing here is a money state: the attempt and its payment are finished only by the late-outcome path
-- (src/modules/payments/payment-actions.service.ts `resolve`).
ALTER TABLE "payment_attempts" ADD COLUMN "inquiryCount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "payment_attempts" ADD COLUMN "inquiryNextAt" TIMESTAMPTZ(3);
ALTER TABLE "payment_attempts" ADD COLUMN "inquiryLastResult" TEXT;
ALTER TABLE "payment_attempts" ADD COLUMN "inquiryLastAt" TIMESTAMPTZ(3);
ALTER TABLE "payment_attempts" ADD COLUMN "inquiryLeaseOwner" TEXT;

-- The due scan reads UNKNOWN attempts only: few next to the table (an UNKNOWN blocks its subscription until it is
-- finished), so the index holds only them.
CREATE INDEX "payment_attempts_inquiry_due" ON "payment_attempts" ("inquiryNextAt") WHERE "status" = 'UNKNOWN';

-- Back-fill: the UNKNOWN charge attempts of the inquiry gateway (Toss) waiting now are due as the pass reads a
-- never-asked one with the default first delay (1 minute after it became UNKNOWN), written out so that each row says
-- when.
UPDATE "payment_attempts" a SET "inquiryNextAt" = COALESCE(a."completedAt", a."createdAt") + INTERVAL '1 minute'
  FROM "payments" p
 WHERE p."id" = a."paymentId" AND p."gateway" = 'TOSS' AND a."status" = 'UNKNOWN' AND a."operation" = 'BILLING_CONFIRM';
