-- One gateway transaction settles at most one payment: two settlement lines with one transactionId (or an operator's
-- typo) must not resolve two payments with it. PostgreSQL's unique index lets any number of NULLs through, so payments
-- not approved yet are unaffected. A database where two payments already share a transactionId is refused with the
-- duplicates named, so that an operator corrects them (they are a record to look at, not to drop silently).
DO $$
DECLARE
  duplicated text;
BEGIN
  SELECT string_agg(format('%s (payments %s)', "transactionId", ids), '; ') INTO duplicated
    FROM (SELECT "transactionId", string_agg("id"::text, ', ') AS ids FROM "payments"
           WHERE "transactionId" IS NOT NULL GROUP BY "transactionId" HAVING count(*) > 1) d;
  IF duplicated IS NOT NULL THEN
    RAISE EXCEPTION 'payments share a gateway transactionId, which settles one payment only: %', duplicated
      USING ERRCODE = 'unique_violation';
  END IF;
END;
$$;

DROP INDEX "payments_transactionId_idx";
CREATE UNIQUE INDEX "payments_transactionId_key" ON "payments"("transactionId");
