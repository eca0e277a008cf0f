// Where the mounted sandbox keeps what it knows (docs/sandbox.md "The sandbox gateway"), so that billing keys, MOBILE chains, charges and
// the ledger survive a restart of `npm start` the way the real gateway's would. Its own schema (`sandbox`), created
// here and never part of the service's migrations: the sandbox is not the service. Memory serves the sandbox's
// calls (sandbox.state.ts); every change is written here, in order, before the call is answered.
// The state is restored at the first call, not when the app is built, so that the app starts (and /ready says
// why it is not ready) while the database is down; a failed restore is tried again at the next call.
// One sandbox per database at a time: two processes mounting sandboxes on one database each keep their own
// memory, and see each other's keys only after a restart.
// The Toss sandbox (toss/) keeps its records the same way, in a table of its own in that schema.
import type { Db } from '../db/prisma.ts';

/** One thing a sandbox knows, as kept: its kind, its id within the kind, and its value as JSON. */
export interface StoredRecord {
  kind: string;
  id: string;
  value: unknown;
}

/** What a sandbox's operations changed since last taken, in order, each value copied as it was then. */
export function createChangeLog<R extends StoredRecord>() {
  let changes: R[] = [];
  return {
    record(kind: R['kind'], id: string, value: unknown): void {
      changes.push({ kind, id, value: structuredClone(value) } as R);
    },
    take(): R[] {
      const taken = changes;
      changes = [];
      return taken;
    },
  };
}

/**
 * A restored ledger in booking order, numbered afresh from 1: two sandboxes that once shared a database may both
 * have used a number.
 */
export function renumberLedger(entries: Array<{ seq: number; at: string }>): void {
  entries.sort((a, b) => a.seq - b.seq || a.at.localeCompare(b.at));
  for (const [index, entry] of entries.entries()) entry.seq = index + 1;
}

export interface SandboxStore<R extends StoredRecord = StoredRecord> {
  /** Resolves once the state holds what was kept (once per process; retried after a failure). */
  ready(): Promise<void>;
  save(records: R[]): Promise<void>;
  clear(): Promise<void>;
}

// Any fixed number: it only keeps two processes from creating the schema at once.
const DDL_LOCK = 7_263_001;

/** `table`: the sandbox's own table in the `sandbox` schema ('records' is the Danal sandbox's). */
export function createSandboxStore<R extends StoredRecord>(db: Db, state: { restore(records: R[]): void }, table = 'records'): SandboxStore<R> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  let restored: Promise<void> | undefined;
  async function restore(): Promise<void> {
    await db.$transaction([
      db.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${DDL_LOCK})`),
      db.$executeRawUnsafe('CREATE SCHEMA IF NOT EXISTS sandbox'),
      db.$executeRawUnsafe(`CREATE TABLE IF NOT EXISTS sandbox.${table} (kind text NOT NULL, id text NOT NULL, value jsonb NOT NULL, PRIMARY KEY (kind, id))`),
    ]);
    state.restore(await db.$queryRawUnsafe<R[]>(`SELECT kind, id, value FROM sandbox.${table}`));
  }

  // Writes are chained so that two changes of one record land in the order they were made.
  let queue: Promise<unknown> = Promise.resolve();
  const inOrder = (write: () => Promise<unknown>): Promise<void> => {
    const next = queue.then(write, write).then(() => undefined);
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    ready() {
      restored ??= restore();
      restored.catch(() => (restored = undefined));
      return restored;
    },
    save(records) {
      if (records.length === 0) return Promise.resolve();
      return inOrder(() =>
        // The last change of each record wins (a batch may hold two changes of one key).
        db.$executeRawUnsafe(
          `INSERT INTO sandbox.${table} (kind, id, value)
           SELECT DISTINCT ON (r.kind, r.id) r.kind, r.id, r.value
           FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (kind text, id text, value jsonb)) WITH ORDINALITY AS r(kind, id, value, n)
           ORDER BY r.kind, r.id, n DESC
           ON CONFLICT (kind, id) DO UPDATE SET value = EXCLUDED.value`,
          JSON.stringify(records),
        ),
      );
    },
    clear() {
      return inOrder(() => db.$executeRawUnsafe(`DELETE FROM sandbox.${table}`));
    },
  };
}
