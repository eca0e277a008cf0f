// The database's functions and triggers have a room of their own (docs/architecture.md "What the database adds to
// each write"): prisma/functions/*.sql, one file per concern, each holding the current text of its functions and
// triggers as CREATE OR REPLACE statements, so applying a file again is harmless (Flyway's "repeatable" migrations).
// The migrator applies them after the versioned migrations, under the same advisory lock:
// - a file is applied when its checksum differs from the one recorded for it (never applied, or changed since); every
//   file is applied again when the run applied a versioned migration (a migration may drop what a file's triggers
//   hang on);
// - all the files to apply go in ONE transaction, in name order (a file may use what a file before it defines), with
//   their records: a failing file leaves neither any file's new text nor any record; after versioned migrations, it
//   is the transaction of the run's last migrations (migrator.ts), so no other session ever sees a migration without
//   the functions that go with it;
// - records live in _function_files, never in _prisma_migrations, so `prisma migrate` sees only its own migrations.
// A function or trigger that leaves a file is dropped by a versioned migration (CREATE OR REPLACE cannot remove).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

export const FUNCTIONS_DIR = fileURLToPath(new URL('../../prisma/functions', import.meta.url));

const CREATE_FUNCTION_FILES_TABLE = `
CREATE TABLE IF NOT EXISTS _function_files (
    name        VARCHAR(255) PRIMARY KEY NOT NULL,
    checksum    VARCHAR(64) NOT NULL,
    applied_at  TIMESTAMPTZ NOT NULL DEFAULT now()
)`;

export interface FunctionFile {
  /** The file's name in prisma/functions, e.g. events.sql. */
  name: string;
  sql: string;
  checksum: string;
}

export type RawQuery = <T>(sql: string) => Promise<T[]>;

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

/**
 * The .sql files of `dir` in name order, the order they are applied in. A missing folder throws (ENOENT): an image
 * built without prisma/functions must not start with the database's rules silently left as they were.
 */
export function readFunctionFiles(dir: string = FUNCTIONS_DIR): FunctionFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name), 'utf8');
      return { name, sql, checksum: checksumOf(sql) };
    });
}

async function recordedChecksums(query: RawQuery): Promise<Map<string, string> | null> {
  const [table] = await query<{ present: boolean }>("SELECT to_regclass('_function_files') IS NOT NULL AS present");
  if (!table?.present) return null;
  const rows = await query<{ name: string; checksum: string }>('SELECT name, checksum FROM _function_files');
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

/**
 * Applies the files that changed (or all of them, `all`) in one transaction, recording each one's checksum. Runs on
 * a client that holds the migrator's advisory lock. Answers the names of the files applied. With `inTransaction`
 * the caller's open transaction is that one (the migrator's, holding the versioned migrations of the same run).
 */
export async function applyFunctionFiles(
  client: pg.ClientBase,
  files: FunctionFile[],
  options: { all: boolean; inTransaction?: boolean; log: { info(obj: object, msg: string): void } },
): Promise<string[]> {
  await client.query(CREATE_FUNCTION_FILES_TABLE);
  const query: RawQuery = async <T>(sql: string) => (await client.query(sql)).rows as T[];
  const recorded = (await recordedChecksums(query)) ?? new Map<string, string>();
  const due = files.filter((file) => options.all || recorded.get(file.name) !== file.checksum);
  if (due.length === 0) return [];
  let current = '';
  if (!options.inTransaction) await client.query('BEGIN');
  try {
    for (const file of due) {
      current = file.name;
      await client.query(file.sql);
      await client.query(
        `INSERT INTO _function_files (name, checksum, applied_at) VALUES ($1, $2, now())
         ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = EXCLUDED.applied_at`,
        [file.name, file.checksum],
      );
    }
    if (!options.inTransaction) await client.query('COMMIT');
  } catch (error) {
    if (!options.inTransaction) await client.query('ROLLBACK');
    throw new Error(`function file ${current} failed (no function file was applied): ${(error as Error).message}`);
  }
  for (const file of due) options.log.info({ functionFile: file.name }, 'function file applied');
  return due.map((file) => file.name);
}

/** The function files the database has not applied as they are now, as prisma/functions/<name> (for GET /ready). */
export async function pendingFunctionFiles(query: RawQuery, files: FunctionFile[]): Promise<string[]> {
  const recorded = await recordedChecksums(query);
  return files.filter((file) => recorded?.get(file.name) !== file.checksum).map((file) => `prisma/functions/${file.name}`);
}
