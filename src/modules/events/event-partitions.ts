// The partitions pass (docs/production.md "Event partitions"): events and webhook deliveries live in monthly
// partitions (UTC months of the event's createdAt; the migration 20261201200000_event_partitions says why). Each run
// makes this month and MONTHS_AHEAD more, by the service's clock (which dates the events: a simulated clock moves
// the months it makes), and drops both tables' months that ended at least EVENT_RETENTION ago, whole. The SQL that
// makes and drops is prisma/functions/event-partitions.sql; this module says which months, when.
//
// Nothing depends on the pass for correctness: an event of a month not made waits in the default partition (a
// charge's event write never fails for want of a month), is read like any other, and moves into its month when the
// month is made. Several processes run it at once safely (the functions take turns under an advisory lock). A step
// that cannot take its lock within its lock_timeout (200 ms: the charges' event writes queue behind the wait) is
// asked again four times in the next four seconds or so, then logged and left to the next run; the months are made ahead so that hundreds of runs come before a month's first
// event.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import { sqlQuery } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';

/** Months made ahead of the current one. */
export const MONTHS_AHEAD = 2;
/** PostgreSQL's lock_not_available: the lock was not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
/** The pauses (real time) before a step whose lock was not granted is asked for again within the same run. */
const STEP_RETRY_PAUSES_MS = [250, 500, 1000, 2000];

/** The first instant of the UTC month `offset` months after the one of `at`. */
export function utcMonth(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

/** A month's suffix as the partitions are named (events_YYYY_MM). */
export const monthName = (month: Date) => `${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;

export interface PartitionsReport {
  /** Months this run made (YYYY_MM). */
  made: string[];
  /** Months this run dropped, both tables' partitions. */
  dropped: string[];
  /** Steps left to the next run: their lock was not granted within lock_timeout. */
  postponed: string[];
}

export function createPartitionsPass(deps: { db: Db; clock: Clock; retentionMs: number; log: Pick<Logger, 'info' | 'warn'> }) {
  const { db, clock, log } = deps;

  /**
   * One step; a lock not granted in time is asked for again after a pause (STEP_RETRY_PAUSES_MS: the statements it
   * waited behind are usually done by then), and only then postpones the step to the next run, an hour later; any
   * other failure throws.
   */
  async function step<T>(name: string, report: PartitionsReport, run: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await run();
      } catch (error) {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
        const pause = STEP_RETRY_PAUSES_MS[attempt];
        if (pause === undefined) break;
        await sleep(pause);
      }
    }
    report.postponed.push(name);
    return undefined;
  }

  return async function keepEventPartitions(): Promise<PartitionsReport> {
    const now = clock.now();
    const report: PartitionsReport = { made: [], dropped: [], postponed: [] };
    for (let offset = 0; offset <= MONTHS_AHEAD; offset += 1) {
      const month = utcMonth(now, offset);
      const made = await step(`make ${monthName(month)}`, report, () =>
        sqlQuery<{ made: boolean }>(db, 'SELECT "ensure_event_month"($1::timestamptz) AS "made"', [month.toISOString()]),
      );
      if (made?.[0]?.made) report.made.push(monthName(month));
    }
    const before = new Date(now.getTime() - deps.retentionMs);
    const dropped = await step('drop', report, () =>
      sqlQuery<{ months: string[] }>(db, 'SELECT "drop_event_months"($1::timestamptz) AS "months"', [before.toISOString()]),
    );
    report.dropped.push(...(dropped?.[0]?.months ?? []));
    if (report.made.length > 0 || report.dropped.length > 0) log.info({ made: report.made, dropped: report.dropped }, 'event partitions kept');
    if (report.postponed.length > 0) log.warn({ postponed: report.postponed }, 'event partitions: a lock was not granted in time; the next pass tries again');
    return report;
  };
}

export type KeepEventPartitions = ReturnType<typeof createPartitionsPass>;

/**
 * What an operator watches (the metrics billing_event_months_ahead and billing_events_default_rows): how many months
 * right after the current one (by the service's clock) are made, in a row, and how many events wait in the default
 * partition (counted up to 100,000).
 */
export async function readPartitionState(db: Db, now: Date): Promise<{ monthsAhead: number; defaultRows: number }> {
  const [row] = await sqlQuery<{ months: string[]; waiting: number }>(
    db,
    `SELECT ARRAY(SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"events"'::regclass) AS "months",
            (SELECT count(*)::int FROM (SELECT 1 FROM "events_default" LIMIT 100000) d) AS "waiting"`,
    [],
  );
  const made = new Set(row?.months ?? []);
  let monthsAhead = 0;
  while (made.has(`events_${monthName(utcMonth(now, monthsAhead + 1))}`)) monthsAhead += 1;
  return { monthsAhead, defaultRows: row?.waiting ?? 0 };
}
