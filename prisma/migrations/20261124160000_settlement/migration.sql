-- Settlement files and reconciliation (issue 22; DESIGN.md §5 "Settlement files and reconciliation"). An import is one
-- file (its bytes counted once: a unique sha256), its lines the gateway's transactions as parsed. Rule 15: imported
-- lines are never edited nor deleted (a trigger refuses it), and an import is never deleted; a line already imported
-- from another file (same transactionId, type, tradedAt and amount) is stored once. Matching is computed from these
-- lines and the ledger when read (src/modules/reconciliation/match-settlement.ts), so nothing here is rewritten
-- when the ledger moves. Korea calendar dates are kept as 'YYYY-MM-DD' text.
CREATE TYPE "SettlementLineType" AS ENUM ('APPROVAL', 'CANCEL');

CREATE TABLE "settlement_imports" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "filename" TEXT,
    "sha256" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "rows" INTEGER NOT NULL,
    "newLines" INTEGER NOT NULL,
    "duplicateLines" INTEGER NOT NULL,
    "coverageFrom" TEXT NOT NULL,
    "coverageTo" TEXT NOT NULL,
    "summary" JSONB NOT NULL,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlement_imports_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "settlement_lines" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "importId" UUID NOT NULL,
    "line" INTEGER NOT NULL,
    "transactionId" TEXT NOT NULL,
    "orderId" TEXT,
    "type" "SettlementLineType" NOT NULL,
    "amount" INTEGER NOT NULL,
    "tradedAt" TIMESTAMPTZ(3) NOT NULL,
    "tradeDate" TEXT NOT NULL,
    "method" "PaymentMethod",
    "fee" INTEGER,
    "settlementDate" TEXT,
    "extra" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlement_lines_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "settlement_imports_sha256_key" ON "settlement_imports"("sha256");
CREATE INDEX "settlement_imports_createdAt_id_idx" ON "settlement_imports"("createdAt", "id");
CREATE UNIQUE INDEX "settlement_lines_transactionId_type_tradedAt_amount_key" ON "settlement_lines"("transactionId", "type", "tradedAt", "amount");
CREATE INDEX "settlement_lines_importId_idx" ON "settlement_lines"("importId");
CREATE INDEX "settlement_lines_tradeDate_id_idx" ON "settlement_lines"("tradeDate", "id");
CREATE INDEX "settlement_lines_orderId_idx" ON "settlement_lines"("orderId");

-- GET /admin/audit?actor= (an import's resolutions carry its actor), newest first.
CREATE INDEX "audit_events_actor_createdAt_idx" ON "audit_events"("actor", "createdAt");
CREATE INDEX "audit_events_createdAt_id_idx" ON "audit_events"("createdAt", "id");

-- Matching reads the ledger by transactionId (an approval line's own, a cancel line's original payment's).
CREATE INDEX "payments_transactionId_idx" ON "payments"("transactionId");
CREATE INDEX "payment_attempts_transactionId_idx" ON "payment_attempts"("transactionId");

-- Checked at commit: an import's lines are written first, then the import with its summary of them, never updated.
ALTER TABLE "settlement_lines" ADD CONSTRAINT "settlement_lines_importId_fkey" FOREIGN KEY ("importId") REFERENCES "settlement_imports"("id") ON DELETE RESTRICT ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED;

-- Rule 15: what a file said is kept as it said it.
CREATE FUNCTION "refuse_settlement_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% of % is refused: imported settlement records are never edited nor deleted', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE TRIGGER "settlement_lines_immutable" BEFORE UPDATE OR DELETE ON "settlement_lines" FOR EACH ROW
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE TRIGGER "settlement_imports_kept" BEFORE UPDATE OR DELETE ON "settlement_imports" FOR EACH ROW
  EXECUTE FUNCTION "refuse_settlement_change"();
