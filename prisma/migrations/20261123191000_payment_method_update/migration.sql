-- Payment-method update (issue #14, DESIGN.md §5 "Subscription lifecycle"): a registration may replace the billing
-- key of an existing subscription instead of creating one.
CREATE TYPE "RegistrationPurpose" AS ENUM ('SUBSCRIPTION', 'PAYMENT_METHOD');
ALTER TABLE "registrations" ADD COLUMN "purpose" "RegistrationPurpose" NOT NULL DEFAULT 'SUBSCRIPTION';
ALTER TABLE "registrations" ADD COLUMN "targetSubscriptionId" UUID;
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_targetSubscriptionId_fkey" FOREIGN KEY ("targetSubscriptionId") REFERENCES "subscriptions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_purpose_target" CHECK (("purpose" = 'PAYMENT_METHOD') = ("targetSubscriptionId" IS NOT NULL));
CREATE INDEX "registrations_targetSubscriptionId_idx" ON "registrations"("targetSubscriptionId");

-- A new payment method resets a past-due cycle's retries: declines before this instant no longer count, and the
-- retry delays count from it.
ALTER TABLE "payments" ADD COLUMN "retriesFrom" TIMESTAMPTZ(3);
