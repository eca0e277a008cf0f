// Upgrading: a database migrated by the migrations as they shipped before the functions moved to prisma/functions
// (test/db/fixtures/shipped-migrations holds the two migrations rewritten since, as they shipped), then migrated by
// today's migrator, has the same catalog as a fresh database: the same functions, triggers, tables, columns, indexes,
// constraints and types. And it is not told that a migration was modified after it was applied.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFunctionFiles } from '../../src/db/apply-functions.ts';
import { checksumOf, MIGRATIONS_DIR, migrate, readMigrations, SHIPPED_CHECKSUMS } from '../../src/db/migrator.ts';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { readCatalog, withClient } from '../helpers/function-files.ts';

const SHIPPED = fileURLToPath(new URL('./fixtures/shipped-migrations', import.meta.url));
const quiet = { info: () => {}, warn: () => {} };

let upgraded: TestDatabase;
let fresh: TestDatabase;
let shippedDir: string;

beforeAll(async () => {
  [upgraded, fresh] = await Promise.all([createEmptyDatabase(), createTestDatabase()]);
  // The versioned migrations as a database migrated before the move has them: today's, the rewritten ones as shipped.
  shippedDir = mkdtempSync(path.join(tmpdir(), 'migrations-shipped-'));
  cpSync(MIGRATIONS_DIR, shippedDir, { recursive: true });
  for (const name of readdirSync(SHIPPED)) cpSync(path.join(SHIPPED, name), path.join(shippedDir, name), { recursive: true });
});
afterAll(async () => {
  rmSync(shippedDir, { recursive: true, force: true });
  await Promise.all([upgraded.drop(), fresh.drop()]);
});

describe('the migrations rewritten after they shipped', () => {
  it('are exactly those listed with their shipped checksums, which the fixtures have, and no longer have', () => {
    const fixtures = readdirSync(SHIPPED).sort();
    expect(fixtures).toEqual(Object.keys(SHIPPED_CHECKSUMS).sort());
    const today = new Map(readMigrations().map((m) => [m.name, m.checksum]));
    for (const name of fixtures) {
      const shipped = checksumOf(readFileSync(path.join(SHIPPED, name, 'migration.sql'), 'utf8'));
      expect(shipped, name).toBe(SHIPPED_CHECKSUMS[name]);
      expect(today.get(name), name).not.toBe(shipped);
    }
  });
});

describe('a database migrated before the functions moved, migrated again', () => {
  it('gets the function files without a warning, and then the same catalog as a fresh database', async () => {
    const before = await migrate({ connectionString: upgraded.url, log: quiet, dir: shippedDir, functionsDir: null });
    expect(before.applied).toEqual(readMigrations().map((m) => m.name));

    const warnings: unknown[] = [];
    const result = await migrate({ connectionString: upgraded.url, log: { info: () => {}, warn: (obj, msg) => warnings.push({ obj, msg }) } });
    expect(warnings).toEqual([]);
    expect(result.applied).toEqual([]);
    expect(result.functionFiles).toEqual(readFunctionFiles().map((file) => file.name));

    const [upgradedCatalog, freshCatalog] = await Promise.all([withClient(upgraded.url, readCatalog), withClient(fresh.url, readCatalog)]);
    expect(upgradedCatalog.functions.length).toBeGreaterThan(30);
    expect(upgradedCatalog.triggers.length).toBeGreaterThan(30);
    expect(upgradedCatalog).toEqual(freshCatalog);
  });
});
