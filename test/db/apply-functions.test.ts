// The function files (src/db/apply-functions.ts) on small folders of their own: applied after the versioned
// migrations in name order, again only when a file changed (or a versioned migration was applied), all in one
// transaction with their records, so a failing file leaves every file and every record as they were.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFunctionFiles } from '../../src/db/apply-functions.ts';
import { checksumOf, migrate, pendingMigrations, readMigrations } from '../../src/db/migrator.ts';
import { createEmptyDatabase, type TestDatabase } from '../helpers/database.ts';
import { withClient } from '../helpers/function-files.ts';

const quiet = { info: () => {}, warn: () => {} };
const created: TestDatabase[] = [];
const tempDirs: string[] = [];

afterEach(async () => {
  await Promise.all(created.splice(0).map((db) => db.drop()));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A database, one versioned migration (a table each file's run adds a row to) and two function files. */
async function setUp() {
  const db = await createEmptyDatabase();
  created.push(db);
  const migrations = folder('migrations-');
  mkdirSync(path.join(migrations, '20200101000000_runs'));
  writeFileSync(path.join(migrations, '20200101000000_runs', 'migration.sql'), 'CREATE TABLE runs (n SERIAL, file TEXT NOT NULL);');
  const functions = folder('functions-');
  const write = (name: string, sql: string) => writeFileSync(path.join(functions, name), sql);
  // b.sql uses a.sql's function in a SQL function, whose body PostgreSQL checks at creation: a comes first.
  write('a.sql', `INSERT INTO runs (file) VALUES ('a');\nCREATE OR REPLACE FUNCTION fa() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n`);
  write('b.sql', `INSERT INTO runs (file) VALUES ('b');\nCREATE OR REPLACE FUNCTION fb() RETURNS int LANGUAGE sql AS $$ SELECT fa() + 1 $$;\n`);
  const run = () => migrate({ connectionString: db.url, log: quiet, dir: migrations, functionsDir: functions });
  const sql = <T>(text: string) => withClient(db.url, async (client) => (await client.query(text)).rows as T[]);
  const runs = async () => (await sql<{ file: string }>('SELECT file FROM runs ORDER BY n')).map((r) => r.file);
  const records = () => sql<{ name: string; checksum: string; applied_at: Date }>('SELECT name, checksum, applied_at FROM _function_files ORDER BY name');
  const values = async () => (await sql<{ a: number; b: number }>('SELECT fa() AS a, fb() AS b'))[0];
  const pending = () => pendingMigrations(sql, readMigrations(migrations), readFunctionFiles(functions));
  return { db, migrations, functions, write, run, sql, runs, records, values, pending };
}

describe('function files', () => {
  it('are applied after the versioned migrations, in name order, and recorded with their checksums', async () => {
    const t = await setUp();
    expect(await t.pending()).toEqual(['20200101000000_runs', 'prisma/functions/a.sql', 'prisma/functions/b.sql']);
    const result = await t.run();
    expect(result.applied).toEqual(['20200101000000_runs']);
    expect(result.functionFiles).toEqual(['a.sql', 'b.sql']);
    expect(await t.runs()).toEqual(['a', 'b']);
    expect(await t.values()).toEqual({ a: 1, b: 2 });
    const files = readFunctionFiles(t.functions);
    expect((await t.records()).map((r) => ({ name: r.name, checksum: r.checksum }))).toEqual(files.map((f) => ({ name: f.name, checksum: checksumOf(f.sql) })));
    expect(await t.pending()).toEqual([]);
    // Prisma's table holds the versioned migrations only.
    expect(await t.sql('SELECT migration_name FROM _prisma_migrations')).toEqual([{ migration_name: '20200101000000_runs' }]);
  });

  it('are not run again while unchanged; a changed file is applied again alone', async () => {
    const t = await setUp();
    await t.run();
    const first = await t.records();
    expect((await t.run()).functionFiles).toEqual([]);
    expect(await t.runs()).toEqual(['a', 'b']);

    t.write('b.sql', `INSERT INTO runs (file) VALUES ('b');\nCREATE OR REPLACE FUNCTION fb() RETURNS int LANGUAGE sql AS $$ SELECT fa() + 10 $$;\n`);
    expect(await t.pending()).toEqual(['prisma/functions/b.sql']);
    expect((await t.run()).functionFiles).toEqual(['b.sql']);
    expect(await t.runs()).toEqual(['a', 'b', 'b']);
    expect(await t.values()).toEqual({ a: 1, b: 11 });
    const second = await t.records();
    expect(second[0]).toEqual(first[0]);
    expect(second[1]!.checksum).toBe(readFunctionFiles(t.functions)[1]!.checksum);
    expect(second[1]!.checksum).not.toBe(first[1]!.checksum);
    expect(await t.pending()).toEqual([]);
  });

  it('are all applied again after a new versioned migration', async () => {
    const t = await setUp();
    await t.run();
    mkdirSync(path.join(t.migrations, '20200102000000_more'));
    writeFileSync(path.join(t.migrations, '20200102000000_more', 'migration.sql'), 'CREATE TABLE more (id INTEGER);');
    const result = await t.run();
    expect(result.applied).toEqual(['20200102000000_more']);
    expect(result.functionFiles).toEqual(['a.sql', 'b.sql']);
    expect(await t.runs()).toEqual(['a', 'b', 'a', 'b']);
  });

  it('roll back together: a failing file leaves every file and every record as they were', async () => {
    const t = await setUp();
    await t.run();
    const before = await t.records();
    t.write('a.sql', `INSERT INTO runs (file) VALUES ('a');\nCREATE OR REPLACE FUNCTION fa() RETURNS int LANGUAGE sql AS $$ SELECT 100 $$;\n`);
    t.write('b.sql', `INSERT INTO runs (file) VALUES ('b');\nSELECT no_such_function();\n`);
    await expect(t.run()).rejects.toThrow(/function file b\.sql failed/);
    expect(await t.runs()).toEqual(['a', 'b']);
    expect(await t.values()).toEqual({ a: 1, b: 2 });
    expect(await t.records()).toEqual(before);
    expect(await t.pending()).toEqual(['prisma/functions/a.sql', 'prisma/functions/b.sql']);
  });
});
