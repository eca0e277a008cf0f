-- Settlement statements from more than one gateway (issue 34): Danal's files as before, and Toss's settlements read
-- by API (src/modules/reconciliation/sync-settlements.ts). A line belongs to the gateway whose statement it came
-- from, and matches payments of that gateway only; an import is one gateway's statement, and its coverage makes the
-- payments of that gateway only MISSING when no line names them. Every import, line and item before this migration
-- came from Danal's files: the default keeps them so. Lines and imports are never edited (guards.sql): the column is
-- written once, with the row.
ALTER TABLE "settlement_imports" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
ALTER TABLE "settlement_lines" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';
-- Derived (settlement-items.ts rewrites them): an item is its line's gateway, or the MISSING payment's.
ALTER TABLE "settlement_items" ADD COLUMN "gateway" "PaymentGateway" NOT NULL DEFAULT 'DANAL';

-- A line is one gateway's: the same transactionId, type, time and amount from two gateways' statements are two lines
-- (each matches its own gateway's payment), and the same line from one gateway's statements is stored once. The
-- gateway goes last, so that the index still serves every lookup of a line by its transactionId.
DROP INDEX "settlement_lines_transactionId_type_tradedAt_amount_key";
CREATE UNIQUE INDEX "settlement_lines_transactionId_type_tradedAt_amount_gateway_key" ON "settlement_lines"("transactionId", "type", "tradedAt", "amount", "gateway");
