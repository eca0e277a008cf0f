import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { readFunctionFiles } from '../../src/db/apply-functions.ts';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../../src/db/migrator.ts';
import { createEmptyDatabase, type TestDatabase } from '../helpers/database.ts';

const quiet = { info: () => {}, warn: () => {} };
const created: TestDatabase[] = [];

async function emptyDatabase() {
  const db = await createEmptyDatabase();
  created.push(db);
  return db;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'migrations-'));
  tempDirs.push(dir);
  for (const [name, sql] of Object.entries(files)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

const tempDirs: string[] = [];

afterEach(async () => {
  await Promise.all(created.splice(0).map((db) => db.drop()));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('migrate', () => {
  it('applies every migration and records it exactly as Prisma does', async () => {
    const db = await emptyDatabase();
    const result = await migrate({ connectionString: db.url, log: quiet });
    const names = readMigrations().map((m) => m.name);
    expect(result.applied).toEqual(names);
    // Then the function files, recorded apart (apply-functions.ts; test/db/apply-functions.test.ts).
    const files = readFunctionFiles();
    expect(result.functionFiles).toEqual(files.map((f) => f.name));
    expect(await query(db.url, 'SELECT name, checksum FROM _function_files ORDER BY name')).toEqual(files.map((f) => ({ name: f.name, checksum: f.checksum })));

    const rows = await query<Record<string, unknown>>(db.url, 'SELECT * FROM _prisma_migrations ORDER BY migration_name');
    expect(rows).toHaveLength(names.length);
    for (const [index, row] of rows.entries()) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, names[index]!, 'migration.sql'));
      expect(row).toMatchObject({
        migration_name: names[index],
        checksum: createHash('sha256').update(sql).digest('hex'),
        applied_steps_count: 1,
        logs: null,
        rolled_back_at: null,
      });
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.started_at).toBeInstanceOf(Date);
    }

    // The bookkeeping table has Prisma's column types, so `prisma migrate deploy` reads it as its own.
    const columns = await query<{ column_name: string; data_type: string; character_maximum_length: number | null; is_nullable: string }>(
      db.url,
      `SELECT column_name, data_type, character_maximum_length, is_nullable FROM information_schema.columns
       WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', character_maximum_length: 36, is_nullable: 'NO' },
      { column_name: 'checksum', data_type: 'character varying', character_maximum_length: 64, is_nullable: 'NO' },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', character_maximum_length: null, is_nullable: 'YES' },
      { column_name: 'migration_name', data_type: 'character varying', character_maximum_length: 255, is_nullable: 'NO' },
      { column_name: 'logs', data_type: 'text', character_maximum_length: null, is_nullable: 'YES' },
      { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', character_maximum_length: null, is_nullable: 'YES' },
      { column_name: 'started_at', data_type: 'timestamp with time zone', character_maximum_length: null, is_nullable: 'NO' },
      { column_name: 'applied_steps_count', data_type: 'integer', character_maximum_length: null, is_nullable: 'NO' },
    ]);
  });

  it('changes nothing on an already migrated database', async () => {
    const db = await emptyDatabase();
    await migrate({ connectionString: db.url, log: quiet });
    const before = await query(db.url, 'SELECT * FROM _prisma_migrations ORDER BY id');
    const again = await migrate({ connectionString: db.url, log: quiet });
    expect(again.applied).toEqual([]);
    expect(again.functionFiles).toEqual([]);
    expect(again.alreadyApplied).toBe(before.length);
    expect(await query(db.url, 'SELECT * FROM _prisma_migrations ORDER BY id')).toEqual(before);
  });

  it('lets only one of several concurrent processes migrate (advisory lock)', async () => {
    const db = await emptyDatabase();
    const results = await Promise.all([1, 2, 3].map(() => migrate({ connectionString: db.url, log: quiet })));
    const appliedCounts = results.map((r) => r.applied.length).sort();
    expect(appliedCounts).toEqual([0, 0, readMigrations().length]);
    expect(results.map((r) => r.functionFiles.length).sort()).toEqual([0, 0, readFunctionFiles().length]);
    const rows = await query(db.url, 'SELECT migration_name FROM _prisma_migrations');
    expect(rows).toHaveLength(readMigrations().length);
  });

  it('rolls a failing run back whole: the failing migration and those before it in the run, records and all', async () => {
    const db = await emptyDatabase();
    const dir = migrationsDir({
      '20200101000000_good': 'CREATE TABLE good (id INTEGER);',
      '20200102000000_bad': 'CREATE TABLE half_done (id INTEGER);\nSELECT no_such_function();',
    });
    await expect(migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null })).rejects.toThrow(/20200102000000_bad failed/);
    expect(await query(db.url, 'SELECT migration_name FROM _prisma_migrations')).toEqual([]);
    const tables = await query<{ good: string | null; half: string | null }>(
      db.url,
      "SELECT to_regclass('good')::text AS good, to_regclass('half_done')::text AS half",
    );
    expect(tables[0]).toEqual({ good: null, half: null });
    // Fixed, the next run applies both.
    writeFileSync(path.join(dir, '20200102000000_bad', 'migration.sql'), 'CREATE TABLE half_done (id INTEGER);');
    expect((await migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null })).applied).toEqual(['20200101000000_good', '20200102000000_bad']);
  });

  it("commits the run's migrations with the function files: a failing file leaves the migrations unapplied too", async () => {
    // A migration may drop a function that running replicas' triggers call and a function file defines again: committed
    // apart, every write in between would fail. So both go in one transaction, and a failing file undoes the migration.
    const db = await emptyDatabase();
    const dir = migrationsDir({ '20200101000000_table': 'CREATE TABLE guarded (id INTEGER);' });
    const functionsDir = mkdtempSync(path.join(tmpdir(), 'functions-'));
    tempDirs.push(functionsDir);
    writeFileSync(path.join(functionsDir, 'a.sql'), 'CREATE OR REPLACE FUNCTION guarded_ok() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;');
    writeFileSync(path.join(functionsDir, 'b.sql'), 'SELECT no_such_function();');
    await expect(migrate({ connectionString: db.url, log: quiet, dir, functionsDir })).rejects.toThrow(/function file b\.sql failed/);
    expect(await query(db.url, 'SELECT migration_name FROM _prisma_migrations')).toEqual([]);
    expect(await query(db.url, "SELECT to_regclass('guarded')::text AS t, to_regproc('guarded_ok')::text AS f")).toEqual([{ t: null, f: null }]);

    writeFileSync(path.join(functionsDir, 'b.sql'), 'SELECT 1;');
    const result = await migrate({ connectionString: db.url, log: quiet, dir, functionsDir });
    expect(result).toMatchObject({ applied: ['20200101000000_table'], functionFiles: ['a.sql', 'b.sql'] });
    expect(await query(db.url, "SELECT to_regclass('guarded')::text AS t, to_regproc('guarded_ok')::text AS f")).toEqual([{ t: 'guarded', f: 'guarded_ok' }]);
  });

  it('commits after a migration that adds an enum value, so the next one can use it', async () => {
    // PostgreSQL refuses a value added by ALTER TYPE ... ADD VALUE until its transaction commits.
    const db = await emptyDatabase();
    // (A type created in the same transaction is exempt, so the type comes from an earlier run.)
    const dir = migrationsDir({ '20200101000000_type': "CREATE TYPE shade AS ENUM ('light');" });
    await migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null });
    for (const [name, sql] of Object.entries({
      '20200102000000_value': "ALTER TYPE shade ADD VALUE 'dark';",
      '20200103000000_use': "CREATE TABLE painted (s shade NOT NULL DEFAULT 'dark'); INSERT INTO painted DEFAULT VALUES;",
    })) {
      mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, name, 'migration.sql'), sql);
    }
    const result = await migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null });
    expect(result.applied).toEqual(['20200102000000_value', '20200103000000_use']);
    expect(await query(db.url, 'SELECT s::text FROM painted')).toEqual([{ s: 'dark' }]);
  });

  it('refuses to go on past a migration Prisma recorded as failed', async () => {
    const db = await emptyDatabase();
    const dir = migrationsDir({ '20200101000000_one': 'SELECT 1;' });
    await migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null });
    await query(db.url, `INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ('x', 'y', '20200102000000_failed')`);
    await expect(migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null })).rejects.toThrow(/20200102000000_failed failed earlier/);
  });

  it('warns when an applied migration was edited afterwards, and does not run it again', async () => {
    const db = await emptyDatabase();
    const dir = migrationsDir({ '20200101000000_one': 'CREATE TABLE once (id INTEGER);' });
    await migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null });
    writeFileSync(path.join(dir, '20200101000000_one', 'migration.sql'), 'CREATE TABLE once (id INTEGER, extra TEXT);');
    const warnings: string[] = [];
    const result = await migrate({ connectionString: db.url, log: { info: () => {}, warn: (_o, msg) => warnings.push(msg) }, dir, functionsDir: null });
    expect(result.applied).toEqual([]);
    expect(warnings).toEqual(['migration was modified after it was applied']);
  });
});
