-- Revenue by gateway (issue 34; docs/reconciliation.md "Revenue reports": byGateway beside byMethod): the revenue
-- roll-up is keyed by (Korea day, method, gateway, shard), and each revenue line names its payment's gateway.
--
-- Back-fill: every row of revenue_days so far is DANAL's. Payments name their gateway from 20261201100000_gateways on,
-- which defaulted every earlier payment to DANAL and ships in the same release as this migration, so no database of a
-- release has a TOSS payment counted yet. (A development database that charged through the Toss sandbox in between
-- gets its figures right with `SELECT rebuild_report_rollups()`: docs/reconciliation.md "Revenue reports".)
ALTER TABLE "revenue_days" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
ALTER TABLE "revenue_days" ALTER COLUMN "gateway" DROP DEFAULT;
ALTER TABLE "revenue_days" DROP CONSTRAINT "revenue_days_pkey";
ALTER TABLE "revenue_days" ADD CONSTRAINT "revenue_days_pkey" PRIMARY KEY ("day", "method", "gateway", "shard");

-- The line gains its gateway, after its method. The functions that take or return the type go with it, and those
-- whose arguments change (the three *_line functions now take the payment's gateway); prisma/functions/report-rollups.sql
-- defines them again, with the triggers that call them, right after the versioned migrations (src/db/migrator.ts).
DROP FUNCTION "revenue_lines"(timestamptz, timestamptz);
DROP FUNCTION "revenue_days_apply"("revenue_line"[], "revenue_line"[]);
DROP FUNCTION "revenue_payment_line"("PaymentStatus", timestamptz, "PaymentMethod", integer);
DROP FUNCTION "revenue_refund_line"("GatewayOperation", "AttemptStatus", timestamptz, timestamptz, timestamptz, integer, "PaymentMethod");
DROP FUNCTION "revenue_external_line"(timestamptz, integer, "PaymentMethod");
DROP TYPE "revenue_line";
CREATE TYPE "revenue_line" AS ("at" timestamptz, "method" "PaymentMethod", "gateway" "PaymentGateway", "paymentCount" integer, "paymentAmount" bigint,
                               "refundCount" integer, "refundAmount" bigint);
