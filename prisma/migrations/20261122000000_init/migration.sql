-- CreateEnum
CREATE TYPE "PaymentMethod" AS ENUM ('CARD', 'MOBILE');

-- CreateEnum
CREATE TYPE "IntervalUnit" AS ENUM ('day', 'week', 'month', 'year');

-- CreateEnum
CREATE TYPE "CheckoutStatus" AS ENUM ('PENDING', 'COMPLETED', 'FAILED', 'EXPIRED', 'NEEDS_ATTENTION');

-- CreateEnum
CREATE TYPE "BillingKeyStatus" AS ENUM ('ACTIVE', 'REVOKED');

-- CreateEnum
CREATE TYPE "SubscriptionStatus" AS ENUM ('ACTIVE', 'PAST_DUE', 'PAUSED', 'CANCELED');

-- CreateEnum
CREATE TYPE "PaymentStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELED');

-- CreateEnum
CREATE TYPE "PaymentKind" AS ENUM ('INITIAL', 'RECURRING', 'MANUAL', 'ONE_TIME');

-- CreateEnum
CREATE TYPE "GatewayOperation" AS ENUM ('ISSUE_KEY', 'BILLING_CONFIRM', 'PAYMENT_CONFIRM', 'CANCEL');

-- CreateEnum
CREATE TYPE "AttemptStatus" AS ENUM ('IN_FLIGHT', 'SUCCEEDED', 'DECLINED', 'NOT_SENT', 'UNKNOWN');

-- CreateEnum
CREATE TYPE "IdempotencyStatus" AS ENUM ('IN_PROGRESS', 'COMPLETED');

-- CreateTable
CREATE TABLE "registrations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "state" TEXT NOT NULL,
    "status" "CheckoutStatus" NOT NULL DEFAULT 'PENDING',
    "orderId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "amount" INTEGER NOT NULL,
    "orderName" TEXT NOT NULL,
    "intervalUnit" "IntervalUnit" NOT NULL DEFAULT 'month',
    "intervalCount" INTEGER NOT NULL DEFAULT 1,
    "itemCode" TEXT,
    "issueKeyOnly" BOOLEAN NOT NULL DEFAULT false,
    "userName" TEXT,
    "userPhoneNumber" TEXT,
    "returnUrl" TEXT,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "transactionId" TEXT,
    "failureCode" TEXT,
    "failureMessage" TEXT,
    "completedAt" TIMESTAMPTZ(3),
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "registrations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "billing_keys" (
    "id" UUID NOT NULL,
    "registrationId" UUID,
    "userId" TEXT NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "status" "BillingKeyStatus" NOT NULL DEFAULT 'ACTIVE',
    "encryptionKeyId" TEXT NOT NULL,
    "keyIv" BYTEA NOT NULL,
    "keyTag" BYTEA NOT NULL,
    "keyCiphertext" BYTEA NOT NULL,
    "cardCode" TEXT,
    "cardName" TEXT,
    "cardNumber" TEXT,
    "carrier" TEXT,
    "phoneNumber" TEXT,
    "revokedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "billing_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "registrationId" UUID NOT NULL,
    "billingKeyId" UUID NOT NULL,
    "userId" TEXT NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "status" "SubscriptionStatus" NOT NULL DEFAULT 'ACTIVE',
    "amount" INTEGER NOT NULL,
    "orderName" TEXT NOT NULL,
    "intervalUnit" "IntervalUnit" NOT NULL,
    "intervalCount" INTEGER NOT NULL,
    "itemCode" TEXT,
    "anchorAt" TIMESTAMPTZ(3) NOT NULL,
    "cycle" INTEGER NOT NULL DEFAULT 0,
    "currentPeriodStart" TIMESTAMPTZ(3) NOT NULL,
    "currentPeriodEnd" TIMESTAMPTZ(3) NOT NULL,
    "nextChargeAt" TIMESTAMPTZ(3),
    "cancelAtPeriodEnd" BOOLEAN NOT NULL DEFAULT false,
    "canceledAt" TIMESTAMPTZ(3),
    "cancelReason" TEXT,
    "pausedAt" TIMESTAMPTZ(3),
    "lastTransactionId" TEXT,
    "lastAmount" INTEGER,
    "lastTransactionAt" TIMESTAMPTZ(3),
    "needsAttention" BOOLEAN NOT NULL DEFAULT false,
    "attentionReason" TEXT,
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "state" TEXT NOT NULL,
    "status" "CheckoutStatus" NOT NULL DEFAULT 'PENDING',
    "orderId" TEXT NOT NULL,
    "userId" TEXT,
    "method" "PaymentMethod" NOT NULL,
    "amount" INTEGER NOT NULL,
    "orderName" TEXT NOT NULL,
    "itemCode" TEXT,
    "returnUrl" TEXT,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "transactionId" TEXT,
    "failureCode" TEXT,
    "failureMessage" TEXT,
    "completedAt" TIMESTAMPTZ(3),
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "subscriptionId" UUID,
    "registrationId" UUID,
    "oneTimeOrderId" UUID,
    "cycle" INTEGER,
    "kind" "PaymentKind" NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "amount" INTEGER NOT NULL,
    "status" "PaymentStatus" NOT NULL DEFAULT 'PENDING',
    "orderId" TEXT NOT NULL,
    "attemptCount" INTEGER NOT NULL DEFAULT 0,
    "transactionId" TEXT,
    "approvedAt" TIMESTAMPTZ(3),
    "failureCode" TEXT,
    "failureMessage" TEXT,
    "dueAt" TIMESTAMPTZ(3),
    "nextRetryAt" TIMESTAMPTZ(3),
    "canceledAmount" INTEGER NOT NULL DEFAULT 0,
    "canceledAt" TIMESTAMPTZ(3),
    "attentionReason" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payment_attempts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "paymentId" UUID NOT NULL,
    "attemptNumber" INTEGER NOT NULL,
    "operation" "GatewayOperation" NOT NULL,
    "orderId" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "status" "AttemptStatus" NOT NULL DEFAULT 'IN_FLIGHT',
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "sentAt" TIMESTAMPTZ(3),
    "completedAt" TIMESTAMPTZ(3),
    "gatewayCode" TEXT,
    "gatewayMessage" TEXT,
    "transactionId" TEXT,
    "approvedAt" TIMESTAMPTZ(3),
    "rawResponse" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payment_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "status" "IdempotencyStatus" NOT NULL DEFAULT 'IN_PROGRESS',
    "responseStatus" INTEGER,
    "responseBody" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "entityType" TEXT NOT NULL,
    "entityId" TEXT NOT NULL,
    "reason" TEXT,
    "before" JSONB,
    "after" JSONB,
    "requestId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "registrations_state_key" ON "registrations"("state");

-- CreateIndex
CREATE UNIQUE INDEX "registrations_orderId_key" ON "registrations"("orderId");

-- CreateIndex
CREATE INDEX "registrations_status_createdAt_idx" ON "registrations"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "billing_keys_registrationId_key" ON "billing_keys"("registrationId");

-- CreateIndex
CREATE INDEX "billing_keys_encryptionKeyId_idx" ON "billing_keys"("encryptionKeyId");

-- CreateIndex
CREATE UNIQUE INDEX "subscriptions_registrationId_key" ON "subscriptions"("registrationId");

-- CreateIndex
CREATE INDEX "subscriptions_status_nextChargeAt_idx" ON "subscriptions"("status", "nextChargeAt");

-- CreateIndex
CREATE INDEX "subscriptions_userId_id_idx" ON "subscriptions"("userId", "id");

-- CreateIndex
CREATE INDEX "subscriptions_needsAttention_id_idx" ON "subscriptions"("needsAttention", "id");

-- CreateIndex
CREATE INDEX "subscriptions_billingKeyId_idx" ON "subscriptions"("billingKeyId");

-- CreateIndex
CREATE UNIQUE INDEX "orders_state_key" ON "orders"("state");

-- CreateIndex
CREATE UNIQUE INDEX "orders_orderId_key" ON "orders"("orderId");

-- CreateIndex
CREATE INDEX "orders_status_createdAt_idx" ON "orders"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "payments_oneTimeOrderId_key" ON "payments"("oneTimeOrderId");

-- CreateIndex
CREATE INDEX "payments_status_id_idx" ON "payments"("status", "id");

-- CreateIndex
CREATE INDEX "payments_subscriptionId_id_idx" ON "payments"("subscriptionId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "payments_subscriptionId_cycle_key" ON "payments"("subscriptionId", "cycle");

-- CreateIndex
CREATE INDEX "payment_attempts_status_leaseExpiresAt_idx" ON "payment_attempts"("status", "leaseExpiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "payment_attempts_paymentId_attemptNumber_key" ON "payment_attempts"("paymentId", "attemptNumber");

-- CreateIndex
CREATE INDEX "payment_attempts_orderId_idx" ON "payment_attempts"("orderId");

-- CreateIndex
CREATE INDEX "idempotency_records_expiresAt_idx" ON "idempotency_records"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_records_scope_key_key" ON "idempotency_records"("scope", "key");

-- CreateIndex
CREATE INDEX "audit_events_entityType_entityId_createdAt_idx" ON "audit_events"("entityType", "entityId", "createdAt");

-- CreateIndex
CREATE INDEX "audit_events_createdAt_idx" ON "audit_events"("createdAt");

-- AddForeignKey
ALTER TABLE "billing_keys" ADD CONSTRAINT "billing_keys_registrationId_fkey" FOREIGN KEY ("registrationId") REFERENCES "registrations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_registrationId_fkey" FOREIGN KEY ("registrationId") REFERENCES "registrations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_billingKeyId_fkey" FOREIGN KEY ("billingKeyId") REFERENCES "billing_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_subscriptionId_fkey" FOREIGN KEY ("subscriptionId") REFERENCES "subscriptions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_registrationId_fkey" FOREIGN KEY ("registrationId") REFERENCES "registrations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_oneTimeOrderId_fkey" FOREIGN KEY ("oneTimeOrderId") REFERENCES "orders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Constraints Prisma cannot express (listed in test/db/schema-drift.test.ts).

-- Amounts are positive whole KRW (DESIGN.md §2).
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_amount_positive" CHECK ("amount" > 0);
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_intervalCount_positive" CHECK ("intervalCount" > 0);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_amount_positive" CHECK ("amount" > 0);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_intervalCount_positive" CHECK ("intervalCount" > 0);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_cycle_nonnegative" CHECK ("cycle" >= 0);
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_lastAmount_positive" CHECK ("lastAmount" IS NULL OR "lastAmount" > 0);
ALTER TABLE "orders" ADD CONSTRAINT "orders_amount_positive" CHECK ("amount" > 0);
ALTER TABLE "payments" ADD CONSTRAINT "payments_amount_positive" CHECK ("amount" > 0);
ALTER TABLE "payments" ADD CONSTRAINT "payments_canceledAmount_range" CHECK ("canceledAmount" >= 0 AND "canceledAmount" <= "amount");
ALTER TABLE "payments" ADD CONSTRAINT "payments_cycle_nonnegative" CHECK ("cycle" IS NULL OR "cycle" >= 0);
ALTER TABLE "payments" ADD CONSTRAINT "payments_attemptCount_nonnegative" CHECK ("attemptCount" >= 0);
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_amount_positive" CHECK ("amount" > 0);
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_attemptNumber_positive" CHECK ("attemptNumber" >= 1);

-- The gateway's orderId is at most 50 bytes of UTF-8 (DESIGN.md §3 rule 2).
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_orderId_bytes" CHECK (octet_length("orderId") <= 50);
ALTER TABLE "orders" ADD CONSTRAINT "orders_orderId_bytes" CHECK (octet_length("orderId") <= 50);
ALTER TABLE "payments" ADD CONSTRAINT "payments_orderId_bytes" CHECK (octet_length("orderId") <= 50);
ALTER TABLE "payment_attempts" ADD CONSTRAINT "payment_attempts_orderId_bytes" CHECK (octet_length("orderId") <= 50);

-- A billing charge's orderId is never sent twice (DESIGN.md §3 rule 2).
CREATE UNIQUE INDEX "payment_attempts_billing_orderId_key" ON "payment_attempts"("orderId") WHERE "operation" = 'BILLING_CONFIRM';

-- At most one gateway call in flight per payment: two workers can never both be calling for it.
CREATE UNIQUE INDEX "payment_attempts_one_in_flight" ON "payment_attempts"("paymentId") WHERE "status" = 'IN_FLIGHT';

-- A registration charges at most one initial payment.
CREATE UNIQUE INDEX "payments_one_initial_per_registration" ON "payments"("registrationId") WHERE "kind" = 'INITIAL';

-- At most one successful payment per subscription cycle, even if a later change relaxed the key above
-- (DESIGN.md §3 rule 5).
CREATE UNIQUE INDEX "payments_one_success_per_cycle" ON "payments"("subscriptionId", "cycle") WHERE "status" = 'SUCCEEDED';
