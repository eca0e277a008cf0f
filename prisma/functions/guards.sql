-- Guards (docs/architecture.md, invariant 15: records are kept; imports are never edited): the database refuses to
-- edit or delete the rows that are evidence, whoever asks. Consents, MRR movements, refunds recorded outside the
-- gateway and imported settlement files and lines are written once. Row triggers refuse UPDATE and DELETE; TRUNCATE
-- fires no row trigger, so statement triggers refuse it too (TRUNCATE … CASCADE from another table included).
-- Emptying a test database on purpose runs with session_replication_role = replica (a superuser's setting), under
-- which ordinary triggers do not fire (test/helpers/database.ts truncateAll).
--
-- Serves the TypeScript writers that only ever insert these rows: subscriptions/consents.ts (consents),
-- payments/record-external-refund.ts (external refunds), reconciliation/import-settlement.ts (settlement imports and
-- lines); MRR movements are written by the database alone (mrr.sql). Every other writer meets them as a refusal.
--
-- The one exception (docs/architecture.md, invariant 15; docs/operating.md "A customer asks to be forgotten"): inside a
-- customer's erasure, which marks its transaction with the setting billing.erasure (set_config(..., true): it ends with
-- the transaction), an UPDATE may clear the personal columns of a kept record (a consent's or an external refund's
-- reference, a settlement line's extra columns) and nothing else: every other column equal, the personal ones NULL or
-- unchanged. A DELETE, a TRUNCATE, a change of money, ids or times, or a personal value written instead of cleared is
-- refused as before, erasure or not. Serves src/modules/erasure/erase-customer.ts.
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

CREATE OR REPLACE FUNCTION "erasure_clears_only"(old_row jsonb, new_row jsonb, personal text[]) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('billing.erasure', true), '') <> ''
     AND old_row - personal = new_row - personal
     AND NOT EXISTS (SELECT 1 FROM unnest(personal) c WHERE new_row -> c <> 'null'::jsonb AND new_row -> c IS DISTINCT FROM old_row -> c)
$$;

CREATE OR REPLACE FUNCTION "consents_are_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND "erasure_clears_only"(to_jsonb(OLD), to_jsonb(NEW), '{reference}') THEN RETURN NEW; END IF;
  RAISE EXCEPTION 'consents are immutable (%)', TG_OP;
END $$;

CREATE OR REPLACE FUNCTION "mrr_movements_are_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'mrr_movements are immutable (%)', TG_OP;
END $$;

-- What a file said is kept as it said it.
CREATE OR REPLACE FUNCTION "refuse_settlement_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'settlement_lines' AND "erasure_clears_only"(to_jsonb(OLD), to_jsonb(NEW), '{extra}') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% of % is refused: imported settlement records are never edited nor deleted', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

-- A correction of a refund recorded outside the gateway is a new record.
CREATE OR REPLACE FUNCTION "refuse_external_refund_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND "erasure_clears_only"(to_jsonb(OLD), to_jsonb(NEW), '{reference}') THEN RETURN NEW; END IF;
  RAISE EXCEPTION '% of % is refused: recorded refunds are never edited nor deleted', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE OR REPLACE TRIGGER "consents_immutable" BEFORE UPDATE OR DELETE ON "consents" FOR EACH ROW
  EXECUTE FUNCTION "consents_are_immutable"();

CREATE OR REPLACE TRIGGER "mrr_movements_immutable" BEFORE UPDATE OR DELETE ON "mrr_movements" FOR EACH ROW
  EXECUTE FUNCTION "mrr_movements_are_immutable"();
CREATE OR REPLACE TRIGGER "mrr_movements_no_truncate" BEFORE TRUNCATE ON "mrr_movements" FOR EACH STATEMENT
  EXECUTE FUNCTION "mrr_movements_are_immutable"();

CREATE OR REPLACE TRIGGER "settlement_lines_immutable" BEFORE UPDATE OR DELETE ON "settlement_lines" FOR EACH ROW
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE OR REPLACE TRIGGER "settlement_imports_kept" BEFORE UPDATE OR DELETE ON "settlement_imports" FOR EACH ROW
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE OR REPLACE TRIGGER "settlement_lines_no_truncate" BEFORE TRUNCATE ON "settlement_lines" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE OR REPLACE TRIGGER "settlement_imports_no_truncate" BEFORE TRUNCATE ON "settlement_imports" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_settlement_change"();

CREATE OR REPLACE TRIGGER "external_refunds_immutable" BEFORE UPDATE OR DELETE ON "external_refunds" FOR EACH ROW
  EXECUTE FUNCTION "refuse_external_refund_change"();
CREATE OR REPLACE TRIGGER "external_refunds_no_truncate" BEFORE TRUNCATE ON "external_refunds" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_external_refund_change"();
