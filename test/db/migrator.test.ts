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

  it('rolls a failing migration back whole and records nothing for it', async () => {
    const db = await emptyDatabase();
    const dir = migrationsDir({
      '20200101000000_good': 'CREATE TABLE good (id INTEGER);',
      '20200102000000_bad': 'CREATE TABLE half_done (id INTEGER);\nSELECT no_such_function();',
    });
    await expect(migrate({ connectionString: db.url, log: quiet, dir, functionsDir: null })).rejects.toThrow(/20200102000000_bad failed/);
    const rows = await query<{ migration_name: string }>(db.url, 'SELECT migration_name FROM _prisma_migrations');
    expect(rows.map((r) => r.migration_name)).toEqual(['20200101000000_good']);
    const tables = await query<{ t: string | null }>(db.url, "SELECT to_regclass('half_done')::text AS t");
    expect(tables[0]!.t).toBeNull();
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
