-- assign_event_sequences() (migration 20261123180000) with a fast path: the same numbering, but a call that finds
-- nothing ready returns before taking the advisory lock.
CREATE OR REPLACE FUNCTION "assign_event_sequences"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  horizon bigint;
  last_sequence bigint;
  numbered integer;
BEGIN
  -- Nothing ready as of this statement's snapshot: answer at once, without the lock or the sequencer's row lock. Every
  -- feed read calls this first, and 50 concurrent readers queued on the lock for nothing (issue 15). A ready event
  -- committed before this call is seen here, so a reader still numbers its own change before it reads.
  IF NOT EXISTS (SELECT 1 FROM "events" WHERE "sequence" IS NULL AND "xid" < (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint) THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(7210013);
  horizon := (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint;
  SELECT "last" INTO last_sequence FROM "event_sequencer" WHERE "id" = 1 FOR UPDATE;
  WITH ready AS (
    SELECT "id", row_number() OVER (ORDER BY "xid", "pos") AS n FROM (
      SELECT "id", "xid", "pos" FROM "events" WHERE "sequence" IS NULL AND "xid" < horizon ORDER BY "xid", "pos" LIMIT batch
    ) oldest
  )
  UPDATE "events" e SET "sequence" = last_sequence + ready.n FROM ready WHERE e."id" = ready."id";
  GET DIAGNOSTICS numbered = ROW_COUNT;
  IF numbered = 0 THEN RETURN 0; END IF;
  UPDATE "event_sequencer" SET "last" = last_sequence + numbered WHERE "id" = 1;
  INSERT INTO "webhook_deliveries" ("eventId", "endpointId", "nextAttemptAt")
  SELECT e."id", w."id", CURRENT_TIMESTAMP FROM "events" e
    JOIN "webhook_endpoints" w ON w."status" = 'ENABLED' AND ('*' = ANY (w."eventTypes") OR e."type" = ANY (w."eventTypes"))
   WHERE e."sequence" > last_sequence AND e."sequence" <= last_sequence + numbered
  ON CONFLICT DO NOTHING;
  RETURN numbered;
END $$;
