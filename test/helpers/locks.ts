// Races made certain: requests run while a transaction of the test's own holds a table in SHARE mode (reads pass,
// writes wait), and it lets go only once `waiting` backends are blocked on a lock, so every request has reached its
// write (or the lock guarding it) before any of them has written. The watcher is a connection of its own: a
// transaction keeps its first view of pg_stat_activity.
import pg from 'pg';
import { waitFor } from './service.ts';

export async function overlapped<T>(databaseUrl: string, table: string, waiting: number, requests: () => Promise<T>[]): Promise<T[]> {
  const gate = new pg.Client({ connectionString: databaseUrl });
  const watcher = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([gate.connect(), watcher.connect()]);
  try {
    await gate.query('BEGIN');
    await gate.query(`LOCK TABLE "${table}" IN SHARE MODE`);
    const answers = Promise.all(requests());
    await waitFor(`${waiting} requests blocked on a lock`, async () => {
      const { rows } = await watcher.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return rows[0]!.n >= waiting;
    });
    await gate.query('COMMIT');
    return await answers;
  } finally {
    await Promise.all([gate.end(), watcher.end()]);
  }
}
