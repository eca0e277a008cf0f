// Where the mounted sandbox keeps what it knows (DESIGN.md §6), so that billing keys, MOBILE chains, charges and
// the ledger survive a restart of `npm start` the way the real gateway's would. Its own schema (`sandbox`), created
// here and never part of the service's migrations: the sandbox is not the service. Memory serves the sandbox's
// calls (sandbox.state.ts); every change is written here, in order, before the call is answered.
// One sandbox per database at a time: two processes mounting sandboxes on one database each keep their own
// memory, and see each other's keys only after a restart.
import type { Db } from '../db/prisma.ts';
import type { SandboxRecord } from './sandbox.state.ts';

export interface SandboxStore {
  load(): Promise<SandboxRecord[]>;
  save(records: SandboxRecord[]): Promise<void>;
  clear(): Promise<void>;
}

// Any fixed number: it only keeps two processes from creating the schema at once.
const DDL_LOCK = 7_263_001;

export async function openSandboxStore(db: Db): Promise<SandboxStore> {
  await db.$transaction([
    db.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${DDL_LOCK})`),
    db.$executeRawUnsafe('CREATE SCHEMA IF NOT EXISTS sandbox'),
    db.$executeRawUnsafe(
      `CREATE TABLE IF NOT EXISTS sandbox.records (
         kind text NOT NULL, id text NOT NULL, value jsonb NOT NULL, written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
         PRIMARY KEY (kind, id))`,
    ),
  ]);

  // Writes are chained so that two changes of one record land in the order they were made.
  let queue: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(write: () => Promise<T>): Promise<T> => {
    const next = queue.then(write, write);
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    async load() {
      return db.$queryRawUnsafe<SandboxRecord[]>('SELECT kind, id, value FROM sandbox.records');
    },
    save(records) {
      if (records.length === 0) return Promise.resolve();
      return inOrder(async () => {
        await db.$executeRawUnsafe(
          `INSERT INTO sandbox.records (kind, id, value)
           SELECT DISTINCT ON (r.kind, r.id) r.kind, r.id, r.value
           FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (kind text, id text, value jsonb)) WITH ORDINALITY AS r(kind, id, value, n)
           ORDER BY r.kind, r.id, n DESC
           ON CONFLICT (kind, id) DO UPDATE SET value = EXCLUDED.value, written_at = clock_timestamp()`,
          JSON.stringify(records),
        );
      });
    },
    clear() {
      return inOrder(async () => {
        await db.$executeRawUnsafe('DELETE FROM sandbox.records');
      });
    },
  };
}
