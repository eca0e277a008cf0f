-- Statistics on the two expressions an erasure finds a customer's idempotency records by (migration
-- 20261130110000_erasure_lookups indexes them; src/modules/erasure/rewrite-customer.ts reads them). Both indexes are
-- partial, and PostgreSQL estimates a clause from an index expression's statistics only when the index is not partial:
-- without these it assumed 0.5% of the table per value, about 23,000 rows for a customer's 36 payments among 120,000
-- records, and updated the customer's records through a hash join over a scan of the whole table (65 ms there, and
-- growing with the table, which keeps every record). With them it expects a few rows and reads them by index (5 ms):
-- docs/benchmarks.md "Erasure".
CREATE STATISTICS "idempotency_records_user_stats" ON (coalesce("responseBody" ->> 'userId', "responseBody" -> 'window' ->> 'userId'))
  FROM "idempotency_records";
CREATE STATISTICS "idempotency_records_resource_stats" ON (split_part("scope", ' ', 3)) FROM "idempotency_records";

-- Extended statistics are gathered by ANALYZE; autovacuum analyzes a large table only after a tenth of it changes.
ANALYZE "idempotency_records";
