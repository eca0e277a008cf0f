-- Events and webhook deliveries partitioned by month (issue 35; docs/production.md "Event partitions"): EVENT_RETENTION
-- drops a whole month of both at once instead of deleting rows one by one, and the monthly partitions ahead are made
-- by the partitions pass (prisma/functions/event-partitions.sql, src/modules/events/event-partitions.ts).
--
-- The design, and why:
-- - Both tables are partitioned by RANGE over the EVENT's "createdAt" (the service's clock: the events trigger takes
--   the changed row's updatedAt), by UTC calendar month, named events_YYYY_MM and webhook_deliveries_YYYY_MM. A
--   delivery carries its event's createdAt ("eventCreatedAt", written by every statement that queues one, from the
--   event it reads), so a month's events and their deliveries live in the two partitions dropped together.
-- - A DEFAULT partition of each is the safety net: an event is written by a trigger inside the money write's own
--   transaction, and a date no month was made for (the pass late, a simulated clock years away) must never fail a
--   charge. The pass moves a month's rows out of the default when it makes that month.
-- - A unique constraint of a partitioned table must hold the partition key: the primary keys become ("id",
--   "createdAt") and ("id", "eventCreatedAt"), a delivery is unique by ("eventId", "endpointId", "eventCreatedAt")
--   (the same as before, an event having one createdAt), and the numbered events' sequence by ("sequence",
--   "createdAt"). Ids stay gen_random_uuid(), unique in practice; sequences come from one sequencer under its lock
--   (assign_event_sequences), so none is ever given twice: the index keeps serving the feed's order and catches a
--   duplicate within a month. A lookup by id alone reads each partition's primary key index (a few months).
-- - No foreign key from deliveries to events. A foreign key to a partitioned table makes DETACH or DROP of one of
--   its partitions check every referencing row against it: measured on PostgreSQL 18 and 15, 340-440 ms for a month
--   of 200,000 events with 400,000 deliveries, growing with the tables, while an ACCESS EXCLUSIVE lock on "events"
--   holds every charge's event write. Instead: a delivery is only ever queued by a statement that reads its event
--   (assign_event_sequences, resend, recover), an event's createdAt is written once, and the two months go together;
--   rows past retention in the default partition are deleted with their deliveries in one statement
--   (src/modules/webhooks/retention.ts). The foreign key to webhook_endpoints stays.
--
-- Upgrade: the two tables are rebuilt in place, in this migration's transaction: every row copied as it is (id, pos,
-- xid, sequence, payloads, times), a partition made for every month that has events, the default ones empty, the
-- indexes built after the copy; the events' pos sequence is kept (its value untouched), now owned by the new column.
-- The old tables hold no triggers and this schema grants nothing, so there is nothing else to carry over. The copy
-- rewrites both tables while the migration's lock keeps every writer of events waiting (docs/production.md "Event
-- partitions" has the figure and what to plan for).

ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_eventId_fkey";
ALTER SEQUENCE "events_pos_seq" OWNED BY NONE;
ALTER TABLE "events" RENAME TO "events_unpartitioned";
ALTER TABLE "webhook_deliveries" RENAME TO "webhook_deliveries_unpartitioned";
-- Index names are the schema's: the old ones go now, the new tables take them.
ALTER TABLE "events_unpartitioned" DROP CONSTRAINT "events_pkey";
DROP INDEX "events_sequence_key", "events_createdAt_idx", "events_unsequenced", "events_objectId_pos_idx";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_pkey";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_endpointId_fkey";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_attempts_nonnegative";
ALTER TABLE "webhook_deliveries_unpartitioned" DROP CONSTRAINT "webhook_deliveries_pending_has_time";
DROP INDEX "webhook_deliveries_eventId_endpointId_key", "webhook_deliveries_endpointId_status_idx", "webhook_deliveries_due";

CREATE TABLE "events" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    -- Insertion order, a tiebreak among one transaction's events; never shown.
    "pos" BIGINT NOT NULL DEFAULT nextval('events_pos_seq'::regclass),
    -- The writing transaction: its events get their public sequence only once no older transaction is in flight.
    "xid" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint,
    -- The public, gap-tolerant, strictly increasing position; NULL until assign_event_sequences() reaches it.
    "sequence" BIGINT,
    "type" TEXT NOT NULL,
    "objectType" TEXT NOT NULL,
    "objectId" UUID NOT NULL,
    "snapshot" JSONB NOT NULL,
    "previous" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
) PARTITION BY RANGE ("createdAt");
ALTER SEQUENCE "events_pos_seq" OWNED BY "events"."pos";

CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "eventId" UUID NOT NULL,
    -- Its event's createdAt, the partition key: the delivery lives in its event's month.
    "eventCreatedAt" TIMESTAMPTZ(3) NOT NULL,
    "endpointId" UUID NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3),
    "leaseOwner" TEXT,
    "leaseExpiresAt" TIMESTAMPTZ(3),
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_attempts_nonnegative" CHECK ("attempts" >= 0),
    CONSTRAINT "webhook_deliveries_pending_has_time" CHECK (("status" = 'PENDING') = ("nextAttemptAt" IS NOT NULL))
) PARTITION BY RANGE ("eventCreatedAt");

CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
CREATE TABLE "webhook_deliveries_default" PARTITION OF "webhook_deliveries" DEFAULT;

-- A month for every month that has events (UTC months, as ensure_event_month makes them), for both tables.
DO $$
DECLARE
  month_start timestamptz;
  month_end timestamptz;
  suffix text;
BEGIN
  FOR month_start IN
    SELECT DISTINCT date_trunc('month', "createdAt" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM "events_unpartitioned" ORDER BY 1
  LOOP
    month_end := ((month_start AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
    suffix := to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
    EXECUTE format('CREATE TABLE %I PARTITION OF "events" FOR VALUES FROM (%L) TO (%L)', 'events_' || suffix, month_start, month_end);
    EXECUTE format('CREATE TABLE %I PARTITION OF "webhook_deliveries" FOR VALUES FROM (%L) TO (%L)', 'webhook_deliveries_' || suffix, month_start, month_end);
  END LOOP;
END $$;

INSERT INTO "events" ("id", "pos", "xid", "sequence", "type", "objectType", "objectId", "snapshot", "previous", "createdAt")
SELECT "id", "pos", "xid", "sequence", "type", "objectType", "objectId", "snapshot", "previous", "createdAt" FROM "events_unpartitioned";

INSERT INTO "webhook_deliveries" ("id", "eventId", "eventCreatedAt", "endpointId", "status", "attempts", "nextAttemptAt", "leaseOwner",
                                  "leaseExpiresAt", "lastStatusCode", "lastError", "deliveredAt", "createdAt", "updatedAt")
SELECT d."id", d."eventId", e."createdAt", d."endpointId", d."status", d."attempts", d."nextAttemptAt", d."leaseOwner",
       d."leaseExpiresAt", d."lastStatusCode", d."lastError", d."deliveredAt", d."createdAt", d."updatedAt"
  FROM "webhook_deliveries_unpartitioned" d JOIN "events_unpartitioned" e ON e."id" = d."eventId";

-- Every row made it (the foreign key dropped above kept every delivery's event until now): refuse otherwise.
DO $$
BEGIN
  IF (SELECT count(*) FROM "events") <> (SELECT count(*) FROM "events_unpartitioned")
     OR (SELECT count(*) FROM "webhook_deliveries") <> (SELECT count(*) FROM "webhook_deliveries_unpartitioned") THEN
    RAISE EXCEPTION 'event_partitions: rows were not all copied; nothing was changed';
  END IF;
END $$;

DROP TABLE "webhook_deliveries_unpartitioned";
DROP TABLE "events_unpartitioned";

-- The indexes, on every partition (and on each made later), built after the copy. Kept few: every change that has an
-- event pays for them. createdAt (retention in the default partition, recover) only grows, which BRIN serves cheaply.
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY ("id", "createdAt");
CREATE UNIQUE INDEX "events_sequence_key" ON "events"("sequence", "createdAt") WHERE "sequence" IS NOT NULL;
CREATE INDEX "events_createdAt_idx" ON "events" USING BRIN ("createdAt");
-- The sequencer's queue: small (only events not yet sequenced).
CREATE INDEX "events_unsequenced" ON "events"("xid", "pos") WHERE "sequence" IS NULL;
-- The console's timelines read an object's events newest first; the events trigger finds its transaction's event by it.
CREATE INDEX "events_objectId_pos_idx" ON "events"("objectId", "pos");

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "eventCreatedAt");
CREATE UNIQUE INDEX "webhook_deliveries_eventId_endpointId_eventCreatedAt_key" ON "webhook_deliveries"("eventId", "endpointId", "eventCreatedAt");
CREATE INDEX "webhook_deliveries_endpointId_status_idx" ON "webhook_deliveries"("endpointId", "status");
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries"("endpointId", "nextAttemptAt") WHERE "status" = 'PENDING';
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Fresh statistics for the planner, whose first plans after the upgrade read these tables.
ANALYZE "events";
ANALYZE "webhook_deliveries";
