-- The customer portal's actions (docs/api.md "Subscription lifecycle"). usageStartedAt: when the merchant recorded the
-- customer's first use (POST /api/v1/subscriptions/:id/usage), which ends the right of withdrawal. refundDue: what a
-- withdrawn subscription still owes its customer (attention WITHDRAWAL_REFUND_DUE), e.g. a MOBILE payment the
-- gateway no longer cancels after its month; null when nothing is owed.
ALTER TABLE "subscriptions" ADD COLUMN "usageStartedAt" TIMESTAMPTZ(3);
ALTER TABLE "subscriptions" ADD COLUMN "refundDue" INTEGER;
