-- Rules several concerns share, each named once: the Korea zone and which payments count as paid. The files are
-- applied in name order, so this one comes first and the others may use it (src/db/apply-functions.ts).
--
-- Serves report-rollups.sql and settlement-queue.sql, and the SQL that TypeScript sends: the reconciliation's ledger
-- side (src/modules/reconciliation/match-settlement.ts, reconciliation.queries.ts). The TypeScript twin of
-- counts_as_paid is PAID_STATUSES (src/modules/ledger/payment.state.ts; test/db/function-files.test.ts ties them).
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- The gateway's calendar (docs/architecture.md, invariant 9): Korea days and months of the reports' roll-ups, Korea
-- dates of settlement files. Asia/Seoul has no daylight saving time. IMMUTABLE, so a function that uses it is inlined
-- with the zone as a constant (the plans are those of the literal).
CREATE OR REPLACE FUNCTION "korea_zone"() RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT 'Asia/Seoul'::text
$$;

-- A payment counts as paid (revenue, recovery, the reconciliation's ledger side) while SUCCEEDED, or CANCELED after
-- its approval (refunded later: it still counts; the refund counts on its own). IMMUTABLE and inlined: a query that
-- uses it meets the partial index payments_approved_approvedAt_idx, whose predicate spells the same two statuses.
CREATE OR REPLACE FUNCTION "counts_as_paid"(status "PaymentStatus") RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT status IN ('SUCCEEDED', 'CANCELED')
$$;
