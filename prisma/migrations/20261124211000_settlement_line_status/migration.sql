-- Stored reconciliation items (issue 25; DESIGN.md §5 "Settlement files and reconciliation"). Matching every line
-- against the ledger on each read cost 0.8 to 1.7 s at 1,000,000 payments with one file of 15,000 lines (random reads
-- of payments and attempts per line, and of every payment inside the coverage for MISSING), for each Needs attention
-- page and each reconciliation list or summary. Rule 15 keeps the imported lines as they were read, so a line's status
-- cannot live on its row: it lives here, one row per reconciliation item an operator must see (a line MISMATCHED or
-- UNMATCHED, a MISSING payment or refund of ours) or an import may act on (a line that finishes an outcome we do not
-- know), exactly as the matching statement (src/modules/reconciliation/match-settlement.ts, the one place of the match
-- rule) answers them. A line without a row here is MATCHED (about 99 % of a real file: storing them too doubled an
-- import's time). This table is derived, never a record: it is rewritten whenever what it was computed from changes,
-- by src/modules/reconciliation/settlement-items.ts, which runs that same statement.
--
-- Kept current: an import rewrites the items of its lines and of its coverage in its own transaction. A change of
-- the ledger that may move an item (a payment or attempt that a line names, one an item points at, or one dated inside
-- a coverage) queues its payment in settlement_item_refreshes, by the triggers below, in the transaction of the change;
-- every read of the items first rewrites the items of what is queued. The queue and the items together are therefore
-- always what the matching statement answers now.
--
-- Racing an import: the triggers decide from what is committed, and an import's lines are not committed until the
-- import is, while the import matched against the ledger as it stood before. Every refresh (an import's included)
-- holds the advisory lock hashtext('settlement_items') exclusively from before it reads the ledger until it commits;
-- each trigger first tries the same lock in shared mode, without waiting. Got it: no refresh is running, and none can
-- start reading until this change commits (it waits for the lock), so deciding from what is committed is exact. Not
-- got (a refresh runs, or waits): the change is queued without looking, and the next read matches it again. A change
-- never waits for an import (test/modules/reconciliation/import-races.test.ts).
CREATE TABLE "settlement_items" (
    -- The line's id (source STATEMENT), or the MISSING payment's or refund attempt's id (source LEDGER).
    "id" UUID NOT NULL,
    "lineId" UUID,
    "source" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "reasons" TEXT[] NOT NULL,
    "type" TEXT NOT NULL,
    "transactionId" TEXT,
    "orderId" TEXT,
    "amount" INTEGER NOT NULL,
    "tradedAt" TIMESTAMPTZ(3) NOT NULL,
    "tradeDate" TEXT NOT NULL,
    "paymentId" UUID,
    "ourAmount" INTEGER,
    "ourStatus" TEXT,
    "importId" UUID,
    "finish" TEXT,

    CONSTRAINT "settlement_items_pkey" PRIMARY KEY ("id")
);

-- Lists newest first (Needs attention), and the reach of a payment's change (the triggers below, the refresh).
CREATE INDEX "settlement_items_tradedAt_id_idx" ON "settlement_items"("tradedAt", "id");
CREATE INDEX "settlement_items_paymentId_idx" ON "settlement_items"("paymentId");

-- The full list (MATCHED asked: the console's Reconciliation page) pages through the lines without a stored item, newest
-- first: without this index every line was sorted for each page (0.4 to 1.2 s with 600,000 lines).
CREATE INDEX "settlement_lines_tradedAt_id_idx" ON "settlement_lines"("tradedAt", "id");

-- Derived rows follow the lines they derive from (TRUNCATE … CASCADE of the lines empties them too).
ALTER TABLE "settlement_items" ADD CONSTRAINT "settlement_items_lineId_fkey" FOREIGN KEY ("lineId") REFERENCES "settlement_lines"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- No foreign key to payments: its check would hold a KEY SHARE lock on each payment an import stores an item of until
-- the import commits (seconds for a large file), and a refund or resolve of that payment (SELECT … FOR UPDATE) would
-- wait for it. Payments are never deleted (rule 15), so the cascade had nothing to do.

-- What to match again before the next read: a payment (its lines, its MISSING approval and refunds) or a line.
CREATE TABLE "settlement_item_refreshes" (
    "id" BIGSERIAL NOT NULL,
    "paymentId" UUID,
    "lineId" UUID,

    CONSTRAINT "settlement_item_refreshes_pkey" PRIMARY KEY ("id")
);
ALTER TABLE "settlement_item_refreshes" ADD CONSTRAINT "settlement_item_refreshes_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "payments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "settlement_item_refreshes" ADD CONSTRAINT "settlement_item_refreshes_lineId_fkey" FOREIGN KEY ("lineId") REFERENCES "settlement_lines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A Korea date inside the coverage of any import (match-settlement.ts coveredSql, for one instant).
CREATE FUNCTION "settlement_covers"(instant TIMESTAMPTZ) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
  SELECT instant IS NOT NULL AND EXISTS (SELECT 1 FROM "settlement_imports" i
    WHERE to_char(instant AT TIME ZONE 'Asia/Seoul', 'YYYY-MM-DD') BETWEEN i."coverageFrom" AND i."coverageTo")
$$;

-- A payment whose change may move an item: a line names it (its transactionId or orderId: every line that matches it
-- does), a stored item points at it, or it was approved inside a coverage (MISSING). A superset of what the matching statement reads of a payment; without any
-- import there is nothing to reconcile and nothing is queued.
CREATE FUNCTION "queue_settlement_refresh_of_payment"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- See "Racing an import" above: while a refresh (an import) holds the lock, queue without looking.
  IF NOT pg_try_advisory_xact_lock_shared(hashtext('settlement_items')) THEN
    INSERT INTO "settlement_item_refreshes" ("paymentId") VALUES (NEW."id");
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT 1 FROM "settlement_imports")
     AND (EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."transactionId" = NEW."transactionId")
       OR EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."orderId" = NEW."orderId")
       OR EXISTS (SELECT 1 FROM "settlement_items" i WHERE i."paymentId" = NEW."id")
       OR "settlement_covers"(NEW."approvedAt")) THEN
    INSERT INTO "settlement_item_refreshes" ("paymentId") VALUES (NEW."id");
  END IF;
  RETURN NULL;
END;
$$;

-- An attempt whose change may move an item: a line names it (its transactionId or orderId) or its payment's
-- transactionId (an approval found through the payment, a cancel line), an item points at its payment, or it is a
-- refund sent inside a coverage (MISSING).
CREATE FUNCTION "queue_settlement_refresh_of_attempt"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- See "Racing an import" above: while a refresh (an import) holds the lock, queue without looking.
  IF NOT pg_try_advisory_xact_lock_shared(hashtext('settlement_items')) THEN
    INSERT INTO "settlement_item_refreshes" ("paymentId") VALUES (NEW."paymentId");
    RETURN NULL;
  END IF;
  IF EXISTS (SELECT 1 FROM "settlement_imports")
     AND (EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."transactionId" = NEW."transactionId")
       OR EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."orderId" = NEW."orderId")
       OR EXISTS (SELECT 1 FROM "settlement_lines" l JOIN "payments" p ON p."transactionId" = l."transactionId" WHERE p."id" = NEW."paymentId")
       OR EXISTS (SELECT 1 FROM "settlement_items" i WHERE i."paymentId" = NEW."paymentId")
       OR (NEW."operation" = 'CANCEL' AND "settlement_covers"(coalesce(NEW."sentAt", NEW."createdAt")))) THEN
    INSERT INTO "settlement_item_refreshes" ("paymentId") VALUES (NEW."paymentId");
  END IF;
  RETURN NULL;
END;
$$;

-- The columns the matching statement reads (payments: status, transactionId, orderId, method, amount, approvedAt;
-- attempts: status, transactionId, orderId, amount, approvedAt, sentAt, operation).
CREATE TRIGGER "payments_settlement_refresh_insert" AFTER INSERT ON "payments" FOR EACH ROW
  EXECUTE FUNCTION "queue_settlement_refresh_of_payment"();
CREATE TRIGGER "payments_settlement_refresh_update" AFTER UPDATE ON "payments" FOR EACH ROW
  WHEN ((OLD."status", OLD."transactionId", OLD."orderId", OLD."method", OLD."amount", OLD."approvedAt")
        IS DISTINCT FROM (NEW."status", NEW."transactionId", NEW."orderId", NEW."method", NEW."amount", NEW."approvedAt"))
  EXECUTE FUNCTION "queue_settlement_refresh_of_payment"();
CREATE TRIGGER "payment_attempts_settlement_refresh_insert" AFTER INSERT ON "payment_attempts" FOR EACH ROW
  EXECUTE FUNCTION "queue_settlement_refresh_of_attempt"();
CREATE TRIGGER "payment_attempts_settlement_refresh_update" AFTER UPDATE ON "payment_attempts" FOR EACH ROW
  WHEN ((OLD."status", OLD."transactionId", OLD."orderId", OLD."amount", OLD."approvedAt", OLD."sentAt", OLD."operation", OLD."paymentId")
        IS DISTINCT FROM (NEW."status", NEW."transactionId", NEW."orderId", NEW."amount", NEW."approvedAt", NEW."sentAt", NEW."operation", NEW."paymentId"))
  EXECUTE FUNCTION "queue_settlement_refresh_of_attempt"();

-- Lines imported before this migration: every line, and every payment approved or refunded inside a coverage, is
-- queued; the first read matches them (a database without imports queues nothing).
INSERT INTO "settlement_item_refreshes" ("lineId") SELECT "id" FROM "settlement_lines";
INSERT INTO "settlement_item_refreshes" ("paymentId")
  SELECT p."id" FROM "payments" p
   WHERE EXISTS (SELECT 1 FROM "settlement_imports") AND p."status" IN ('SUCCEEDED', 'CANCELED') AND "settlement_covers"(p."approvedAt")
  UNION
  SELECT r."paymentId" FROM "payment_attempts" r
   WHERE EXISTS (SELECT 1 FROM "settlement_imports") AND r."operation" = 'CANCEL' AND r."status" = 'SUCCEEDED'
     AND "settlement_covers"(coalesce(r."sentAt", r."createdAt"));
