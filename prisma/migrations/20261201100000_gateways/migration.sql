-- A second gateway behind the same engine (issue 34): Toss Payments' card billing beside Danal. Each registration,
-- billing key and payment names the gateway it went through, and the engine picks that gateway's adapter from the
-- row (src/gateway/registry.ts), never from a rule. Every row before this migration went through Danal: the default
-- keeps it so. The column never changes once written: a subscription moves to another gateway only through a new
-- payment method (a new registration, a new key), and a payment is charged and refunded where it was made.
-- Toss binds a billing key to a customerKey of ours (random, never the userId): the registration opens the window
-- with it, the key is issued for it and every charge sends it; a Toss row without one could never be charged.
CREATE TYPE "PaymentGateway" AS ENUM ('DANAL', 'TOSS');

ALTER TABLE "registrations" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
ALTER TABLE "registrations" ADD COLUMN "customerKey" TEXT;
ALTER TABLE "registrations" ADD CONSTRAINT "registrations_customerKey_gateway"
  CHECK (("gateway" = 'TOSS') = ("customerKey" IS NOT NULL));

ALTER TABLE "billing_keys" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
ALTER TABLE "billing_keys" ADD COLUMN "customerKey" TEXT;
ALTER TABLE "billing_keys" ADD CONSTRAINT "billing_keys_customerKey_gateway"
  CHECK (("gateway" = 'TOSS') = ("customerKey" IS NOT NULL));

ALTER TABLE "payments" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
