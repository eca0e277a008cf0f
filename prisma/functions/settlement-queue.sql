-- The settlement queue (docs/reconciliation.md "Reconciling with the gateway"): settlement_items, the reconciliation items
-- an operator must see, are derived from the imported lines and the ledger by one matching statement
-- (src/modules/reconciliation/match-settlement.ts), and rewritten by src/modules/reconciliation/settlement-items.ts
-- whenever what they were computed from changes. A change of the ledger that may move an item (a payment or attempt
-- that a line names, one an item points at, or one dated inside a coverage) queues its payment in
-- settlement_item_refreshes, by the triggers below, in the transaction of the change; every read of the items first
-- rewrites the items of what is queued. The queue and the items together are therefore always what the matching
-- statement answers now.
--
-- Racing an import: the triggers decide from what is committed, and an import's lines are not committed until the
-- import is, while the import matched against the ledger as it stood before. Every refresh (an import's included)
-- holds the advisory lock hashtext('settlement_items') exclusively from before it reads the ledger until it commits;
-- each trigger first tries the same lock in shared mode, without waiting. Got it: no refresh is running, and none can
-- start reading until this change commits (it waits for the lock), so deciding from what is committed is exact. Not
-- got (a refresh runs, or waits): the change is queued without looking, and the next read matches it again. A change
-- never waits for an import (test/modules/reconciliation/import-races.test.ts).
--
-- Serves every TypeScript writer of payments and payment attempts: the charge (payments/charge.*.ts), the state moves
-- (ledger/payment.state.ts, attempt.state.ts), refund-payment, payment-actions.service (resolve), complete-order,
-- complete-registration, replace-payment-method and reconciliation/finish-settlement.ts.
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- A Korea date (common.sql korea_zone) inside the coverage of any import (match-settlement.ts coveredSql, for one
-- instant).
CREATE OR REPLACE FUNCTION "settlement_covers"(instant TIMESTAMPTZ) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
  SELECT instant IS NOT NULL AND EXISTS (SELECT 1 FROM "settlement_imports" i
    WHERE to_char(instant AT TIME ZONE "korea_zone"(), 'YYYY-MM-DD') BETWEEN i."coverageFrom" AND i."coverageTo")
$$;

-- A payment whose change may move an item: a line names it (its transactionId or orderId: every line that matches it
-- does), a stored item points at it, or it was approved inside a coverage (MISSING). A superset of what the matching
-- statement reads of a payment; without any import there is nothing to reconcile and nothing is queued.
CREATE OR REPLACE FUNCTION "queue_settlement_refresh_of_payment"() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE FUNCTION "queue_settlement_refresh_of_attempt"() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE TRIGGER "payments_settlement_refresh_insert" AFTER INSERT ON "payments" FOR EACH ROW
  EXECUTE FUNCTION "queue_settlement_refresh_of_payment"();
CREATE OR REPLACE TRIGGER "payments_settlement_refresh_update" AFTER UPDATE ON "payments" FOR EACH ROW
  WHEN ((OLD."status", OLD."transactionId", OLD."orderId", OLD."method", OLD."amount", OLD."approvedAt")
        IS DISTINCT FROM (NEW."status", NEW."transactionId", NEW."orderId", NEW."method", NEW."amount", NEW."approvedAt"))
  EXECUTE FUNCTION "queue_settlement_refresh_of_payment"();
CREATE OR REPLACE TRIGGER "payment_attempts_settlement_refresh_insert" AFTER INSERT ON "payment_attempts" FOR EACH ROW
  EXECUTE FUNCTION "queue_settlement_refresh_of_attempt"();
CREATE OR REPLACE TRIGGER "payment_attempts_settlement_refresh_update" AFTER UPDATE ON "payment_attempts" FOR EACH ROW
  WHEN ((OLD."status", OLD."transactionId", OLD."orderId", OLD."amount", OLD."approvedAt", OLD."sentAt", OLD."operation", OLD."paymentId")
        IS DISTINCT FROM (NEW."status", NEW."transactionId", NEW."orderId", NEW."amount", NEW."approvedAt", NEW."sentAt", NEW."operation", NEW."paymentId"))
  EXECUTE FUNCTION "queue_settlement_refresh_of_attempt"();
