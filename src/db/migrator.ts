// Applies prisma/migrations exactly as `prisma migrate deploy` records them (Prisma's schema engine cannot be
// downloaded here, docs/architecture.md "Development notes"): same _prisma_migrations table, same SHA-256 checksum of
// migration.sql, same advisory lock key, so either tool sees the other's work as applied and two starting processes
// never both migrate. Then, under the same lock, the function files of prisma/functions (apply-functions.ts).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { applyFunctionFiles, checksumOf, FUNCTIONS_DIR, pendingFunctionFiles, type FunctionFile, type RawQuery, readFunctionFiles } from './apply-functions.ts';
import { assertSupportedServer } from './server-version.ts';

export { checksumOf, type RawQuery };

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

// The key Prisma's schema engine takes with pg_advisory_lock, so our runner and `prisma migrate deploy`
// exclude each other too.
const PRISMA_ADVISORY_LOCK_KEY = 72707369;

// Prisma's own definition (schema-engine, postgres flavour).
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Migrations rewritten after they shipped, and the checksum each had when it shipped. Their functions and triggers
 * moved to prisma/functions/ (versioned migrations hold tables, indexes and back-fills), leaving only comments; a
 * database that applied the shipped text records that checksum and gets the same functions from the function files,
 * so it is accepted without the 'modified after it was applied' warning. Only these, only that checksum.
 */
export const SHIPPED_CHECKSUMS: Readonly<Record<string, string>> = {
  '20261128120000_payment_event_refunds': '296556befefda9110ae897284659eb69e6e6b5221d7f288a5ae3198413e3ddf8',
  '20261128130000_times_from_service_clock': '4de198858c0d2c1019dc7d8419aaf844f6ad495807a2cf035b3b90dfc5fbdabd',
};

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: checksumOf(sql) };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

async function readApplied(client: pg.ClientBase): Promise<AppliedRow[]> {
  const { rows } = await client.query<AppliedRow>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at');
  return rows;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
  /** The function files applied by this run (apply-functions.ts). */
  functionFiles: string[];
}

export interface MigrateOptions {
  connectionString: string;
  log: MigrationLog;
  /** The versioned migrations (default prisma/migrations). */
  dir?: string;
  /** The function files (default prisma/functions); null: versioned migrations only (tests of a partial schema). */
  functionsDir?: string | null;
}

/**
 * The migrations of one run, in the groups each committed at once. A group ends after a migration that adds an enum
 * value: PostgreSQL refuses to use a value added in a transaction not yet committed (ALTER TYPE ... ADD VALUE).
 */
export function commitGroups(migrations: Migration[]): Migration[][] {
  const groups: Migration[][] = [[]];
  for (const migration of migrations) {
    groups.at(-1)!.push(migration);
    if (/\bADD\s+VALUE\b/i.test(migration.sql)) groups.push([]);
  }
  return groups.filter((group) => group.length > 0);
}

/** The versioned migrations not applied yet (the lock is held), checked against what the database recorded. */
async function pendingOf(client: pg.ClientBase, migrations: Migration[], log: MigrationLog): Promise<{ pending: Migration[]; alreadyApplied: number }> {
  await client.query(CREATE_MIGRATIONS_TABLE);
  const rows = await readApplied(client);
  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed) {
    const fix = 'fix it and mark it with `prisma migrate resolve` before migrating again';
    throw new Error(`migration ${failed.migration_name} failed earlier and was not resolved; ${fix}`);
  }
  const done = new Map(rows.filter((row) => row.finished_at && !row.rolled_back_at).map((row) => [row.migration_name, row]));
  const pending: Migration[] = [];
  for (const migration of migrations) {
    const previous = done.get(migration.name);
    if (!previous) pending.push(migration);
    else if (previous.checksum !== migration.checksum && SHIPPED_CHECKSUMS[migration.name] !== previous.checksum) {
      log.warn({ migration: migration.name }, 'migration was modified after it was applied');
    }
  }
  return { pending, alreadyApplied: done.size };
}

/** One migration and its record, in the caller's transaction. */
async function applyOne(client: pg.ClientBase, migration: Migration): Promise<void> {
  try {
    const id = randomUUID();
    await client.query('INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)', [
      id,
      migration.checksum,
      migration.name,
    ]);
    await client.query(migration.sql);
    await client.query('UPDATE _prisma_migrations SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
  } catch (error) {
    throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`);
  }
}

/**
 * The versioned migrations not applied yet, then the function files, under the lock. The run's migrations commit
 * together (commitGroups), the last group in ONE transaction with the function files: a migration may drop a function
 * that the triggers of running replicas call and that a function file defines again, and committed apart, every write
 * in between would fail. A failure rolls back its whole group, records and all.
 */
async function applyRun(client: pg.ClientBase, migrations: Migration[], functionFiles: FunctionFile[], log: MigrationLog): Promise<MigrateResult> {
  const { pending, alreadyApplied } = await pendingOf(client, migrations, log);
  if (pending.length === 0) return { applied: [], alreadyApplied, functionFiles: await applyFunctionFiles(client, functionFiles, { all: false, log }) };
  const groups = commitGroups(pending);
  const applied: string[] = [];
  let files: string[] = [];
  for (const [index, group] of groups.entries()) {
    await client.query('BEGIN');
    try {
      for (const migration of group) await applyOne(client, migration);
      // Every file again after a new migration: it may have dropped what a file's triggers hang on.
      if (index === groups.length - 1) files = await applyFunctionFiles(client, functionFiles, { all: true, inTransaction: true, log });
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
    for (const migration of group) {
      applied.push(migration.name);
      log.info({ migration: migration.name }, 'migration applied');
    }
  }
  return { applied, alreadyApplied, functionFiles: files };
}

export async function migrate(options: MigrateOptions): Promise<MigrateResult> {
  const migrations = readMigrations(options.dir);
  const functionFiles = options.functionsDir === null ? [] : readFunctionFiles(options.functionsDir ?? FUNCTIONS_DIR);
  const client = new pg.Client({ connectionString: options.connectionString });
  await client.connect();
  try {
    // An older server than the service supports is refused before anything is written to it (server-version.ts).
    await assertSupportedServer(client);
    // Session-level lock: a second process waits here until the first has finished, then finds nothing to do.
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    try {
      return await applyRun(client, migrations, functionFiles, options.log);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

/**
 * Names of migrations in prisma/migrations that the database has not applied, then of the function files it has not
 * applied as they are now (for GET /ready).
 */
export async function pendingMigrations(query: RawQuery, migrations: Migration[], functionFiles: FunctionFile[]): Promise<string[]> {
  const [table] = await query<{ present: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present");
  const functions = await pendingFunctionFiles(query, functionFiles);
  if (!table?.present) return [...migrations.map((migration) => migration.name), ...functions];
  const rows = await query<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return [...migrations.filter((migration) => !applied.has(migration.name)).map((migration) => migration.name), ...functions];
}
