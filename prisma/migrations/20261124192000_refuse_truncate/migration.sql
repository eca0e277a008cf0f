-- Rule 15: what a settlement file said, the MRR movements and the refunds recorded outside the gateway are kept. Their
-- row triggers refuse UPDATE and DELETE, but TRUNCATE fires no row trigger: these statement triggers refuse it too
-- (TRUNCATE … CASCADE from another table included). Emptying a test database on purpose runs with
-- session_replication_role = replica (a superuser's setting), under which ordinary triggers do not fire.
CREATE TRIGGER "settlement_lines_no_truncate" BEFORE TRUNCATE ON "settlement_lines" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE TRIGGER "settlement_imports_no_truncate" BEFORE TRUNCATE ON "settlement_imports" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_settlement_change"();
CREATE TRIGGER "mrr_movements_no_truncate" BEFORE TRUNCATE ON "mrr_movements" FOR EACH STATEMENT
  EXECUTE FUNCTION "mrr_movements_are_immutable"();
CREATE TRIGGER "external_refunds_no_truncate" BEFORE TRUNCATE ON "external_refunds" FOR EACH STATEMENT
  EXECUTE FUNCTION "refuse_external_refund_change"();
