-- The monthly partitions of events and webhook deliveries (docs/production.md "Event partitions"; the migration
-- 20261201200000_event_partitions says why they are made as they are). A month is a UTC calendar month of the
-- event's createdAt (the service's clock), events_YYYY_MM and webhook_deliveries_YYYY_MM, always made and dropped
-- together; rows of a month not made yet wait in events_default and webhook_deliveries_default.
--
-- Called by the partitions pass (src/modules/events/event-partitions.ts): ensure_event_month for this month and the months
-- ahead, drop_event_months for the months past EVENT_RETENTION. Several processes run the pass: one at a time makes
-- or drops (an advisory lock, held to the commit; the next then finds the month made, or gone, when it reads again
-- under its locks). Each call waits at most lock_timeout (200 ms) for a lock, then fails and is tried again by the
-- next pass: while it waits for the ACCESS EXCLUSIVE locks it needs on both tables, every statement touching them
-- queues behind it, the charges' event writes included, so the wait is kept short (and shorter than deadlock_timeout:
-- a transaction that read events and now writes them, waiting on the pass while the pass waits on it, is never the
-- one given up); once held, the locks last as long as the work, which is a catalog change and the move of the rows
-- waiting in the default partitions (none, when the months are made ahead, as the pass does).

-- The first instant of the UTC month of `at`.
CREATE OR REPLACE FUNCTION "event_month_start"("at" timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT date_trunc('month', "at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
$$;

-- One table's month [month_start, month_end): made apart, the rows of the month waiting in its default partition
-- moved into it, then attached (ATTACH checks the new table and the default partition, both holding no row of
-- another range by then). The caller holds the ACCESS EXCLUSIVE locks of the parent and of its default partition,
-- so no row of the month can enter the default meanwhile, and readers see each moved row once: in the default
-- partition before the commit, in the month after it.
CREATE OR REPLACE FUNCTION "attach_event_month"(parent text, partition_key text, month_start timestamptz, month_end timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  month_table text := parent || '_' || to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
  columns text;
BEGIN
  SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO columns
    FROM pg_attribute a WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', month_table, parent);
  EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING %s) INSERT INTO %I (%s) SELECT %s FROM moved',
                 parent || '_default', partition_key, month_start, partition_key, month_end, columns, month_table, columns, columns);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, month_table, month_start, month_end);
END $$;

-- Makes the month of `at` for both tables unless it exists; true when this call made it.
CREATE OR REPLACE FUNCTION "ensure_event_month"("at" timestamptz) RETURNS boolean LANGUAGE plpgsql SET lock_timeout = '200ms' AS $$
DECLARE
  month_start timestamptz := "event_month_start"("at");
  month_end timestamptz := ((month_start AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  suffix text := to_char(month_start AT TIME ZONE 'UTC', 'YYYY_MM');
  made boolean := false;
BEGIN
  IF to_regclass(quote_ident('events_' || suffix)) IS NOT NULL AND to_regclass(quote_ident('webhook_deliveries_' || suffix)) IS NOT NULL THEN
    RETURN false;
  END IF;
  PERFORM pg_advisory_xact_lock(7210014);
  -- Both tables, then both default partitions (the pass's one lock order), before anything is read again: taking a
  -- table's lock brings this session's catalog up to date, so a month another process made meanwhile is seen.
  -- ATTACH itself needs less on the parent, but an INSERT that began before it (its rows routed by the partitions as
  -- they were, to the default partition) and waited for the default partition's lock would then fail that
  -- partition's new constraint: a charge failed by its event. Holding the parents first, no INSERT is under way, and
  -- the next ones route by the new partitions (test/modules/events/event-partitions.test.ts writes meanwhile).
  LOCK TABLE ONLY "events", ONLY "webhook_deliveries" IN ACCESS EXCLUSIVE MODE;
  LOCK TABLE ONLY "events_default", ONLY "webhook_deliveries_default" IN ACCESS EXCLUSIVE MODE;
  IF to_regclass(quote_ident('events_' || suffix)) IS NULL THEN
    PERFORM "attach_event_month"('events', 'createdAt', month_start, month_end);
    made := true;
  END IF;
  IF to_regclass(quote_ident('webhook_deliveries_' || suffix)) IS NULL THEN
    PERFORM "attach_event_month"('webhook_deliveries', 'eventCreatedAt', month_start, month_end);
    made := true;
  END IF;
  RETURN made;
END $$;

-- The months (YYYY_MM) of either table that end at or before `before`: each of their events is older than it.
CREATE OR REPLACE FUNCTION "event_months_before"("before" timestamptz) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(m.suffix ORDER BY m.suffix), '{}') FROM (
    SELECT substr(c.relname, length('events_') + 1) AS suffix
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = '"events"'::regclass AND c.relname ~ '^events_[0-9]{4}_[0-9]{2}$'
    UNION
    SELECT substr(c.relname, length('webhook_deliveries_') + 1)
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = '"webhook_deliveries"'::regclass AND c.relname ~ '^webhook_deliveries_[0-9]{4}_[0-9]{2}$'
  ) m
  WHERE (to_date(m.suffix, 'YYYY_MM') + interval '1 month')::timestamp AT TIME ZONE 'UTC' <= "before"
$$;

-- Drops every month that ends at or before `before`, both tables' partitions in one statement; returns the months
-- dropped (YYYY_MM). DROP takes an ACCESS EXCLUSIVE lock on each parent, the deliveries' after the events' (the
-- pass's one order); nothing is locked when no month is due. Rows of such months waiting in the default partitions
-- are not touched here: the dispatcher's retention deletes them (src/modules/webhooks/retention.ts).
CREATE OR REPLACE FUNCTION "drop_event_months"("before" timestamptz) RETURNS text[] LANGUAGE plpgsql SET lock_timeout = '200ms' AS $$
DECLARE
  months text[];
BEGIN
  IF cardinality("event_months_before"("before")) = 0 THEN
    RETURN '{}';
  END IF;
  PERFORM pg_advisory_xact_lock(7210014);
  LOCK TABLE ONLY "events", ONLY "webhook_deliveries" IN ACCESS EXCLUSIVE MODE;
  -- Read again under the locks: another process may have dropped them meanwhile.
  months := "event_months_before"("before");
  IF cardinality(months) > 0 THEN
    EXECUTE (SELECT 'DROP TABLE IF EXISTS ' || string_agg(format('%I, %I', 'webhook_deliveries_' || m, 'events_' || m), ', ') FROM unnest(months) m);
  END IF;
  RETURN months;
END $$;
