// Applies prisma/migrations exactly as `prisma migrate deploy` records them (Prisma's schema engine cannot be
// downloaded here, docs/architecture.md "Development notes"): same _prisma_migrations table, same SHA-256 checksum of migration.sql, same
// advisory lock key, so either tool sees the other's work as applied and two starting processes never both
// migrate.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { assertSupportedServer } from './server-version.ts';

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

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

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
}

export async function migrate(options: { connectionString: string; log: MigrationLog; dir?: string }): Promise<MigrateResult> {
  const migrations = readMigrations(options.dir);
  const client = new pg.Client({ connectionString: options.connectionString });
  await client.connect();
  try {
    // An older server than the service supports is refused before anything is written to it (server-version.ts).
    await assertSupportedServer(client);
    // Session-level lock: a second process waits here until the first has finished, then finds nothing to do.
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const rows = await readApplied(client);
      const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
      if (failed) {
        throw new Error(
          `migration ${failed.migration_name} failed earlier and was not resolved; ` +
            'fix it and mark it with `prisma migrate resolve` before migrating again',
        );
      }
      const done = new Map(rows.filter((row) => row.finished_at && !row.rolled_back_at).map((row) => [row.migration_name, row]));
      const applied: string[] = [];
      for (const migration of migrations) {
        const previous = done.get(migration.name);
        if (previous) {
          if (previous.checksum !== migration.checksum) {
            options.log.warn({ migration: migration.name }, 'migration was modified after it was applied');
          }
          continue;
        }
        // One transaction per migration: a failure leaves neither the schema change nor its record.
        await client.query('BEGIN');
        try {
          const id = randomUUID();
          await client.query('INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)', [
            id,
            migration.checksum,
            migration.name,
          ]);
          await client.query(migration.sql);
          await client.query('UPDATE _prisma_migrations SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${migration.name} failed: ${(error as Error).message}`);
        }
        applied.push(migration.name);
        options.log.info({ migration: migration.name }, 'migration applied');
      }
      return { applied, alreadyApplied: done.size };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

export type RawQuery = <T>(sql: string) => Promise<T[]>;

/** Names of migrations in prisma/migrations that the database has not applied (for GET /ready). */
export async function pendingMigrations(query: RawQuery, migrations: Migration[]): Promise<string[]> {
  const [table] = await query<{ present: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present");
  if (!table?.present) return migrations.map((migration) => migration.name);
  const rows = await query<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return migrations.filter((migration) => !applied.has(migration.name)).map((migration) => migration.name);
}
