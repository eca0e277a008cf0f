// Reading the function files (prisma/functions) and the database's catalog, for the tests that hold the two equal.
import pg from 'pg';
import type { FunctionFile } from '../../src/db/apply-functions.ts';

export interface FileFunction {
  name: string;
  file: string;
  /** The text between AS $$ and $$: what PostgreSQL keeps as the function's source (pg_proc.prosrc). */
  body: string;
}

export interface FileTrigger {
  name: string;
  table: string;
  file: string;
}

/** The functions and triggers the files define, in file order, each with its file. */
export function definitionsOf(files: FunctionFile[]): { functions: FileFunction[]; triggers: FileTrigger[] } {
  const functions: FileFunction[] = [];
  const triggers: FileTrigger[] = [];
  for (const file of files) {
    for (const m of file.sql.matchAll(/CREATE OR REPLACE FUNCTION "(\w+)"\([^)]*\)[\s\S]*?\bAS \$\$([\s\S]*?)\$\$/g)) {
      functions.push({ name: m[1]!, file: file.name, body: m[2]! });
    }
    for (const m of file.sql.matchAll(/CREATE OR REPLACE TRIGGER "(\w+)"[\s\S]*?\bON "(\w+)"/g)) {
      triggers.push({ name: m[1]!, table: m[2]!, file: file.name });
    }
  }
  return { functions, triggers };
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The schema's own functions (extension-owned ones left out), by name and identity arguments. */
export const FUNCTIONS_SQL = `
  SELECT p.proname AS name, p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS signature,
         p.prosrc AS source, pg_get_functiondef(p.oid) AS definition
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = current_schema()
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   ORDER BY 2`;

/** The user triggers (not the ones PostgreSQL makes for foreign keys). */
export const TRIGGERS_SQL = `
  SELECT c.relname AS "table", t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = current_schema() AND NOT t.tgisinternal
   ORDER BY 1, 2`;

export type Catalog = Record<'functions' | 'triggers' | 'columns' | 'indexes' | 'constraints' | 'types', string[]>;

/** What a schema is made of, each object as one comparable line. */
export async function readCatalog(client: pg.ClientBase): Promise<Catalog> {
  const lines = async (sql: string) => (await client.query<{ line: string }>(sql)).rows.map((row) => row.line);
  return {
    functions: (await client.query<{ signature: string; definition: string }>(FUNCTIONS_SQL)).rows.map((r) => `${r.signature}\n${r.definition}`),
    triggers: (await client.query<{ table: string; name: string; definition: string }>(TRIGGERS_SQL)).rows.map((r) => `${r.table}.${r.name}\n${r.definition}`),
    columns: await lines(`
      SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || udt_name || ' ' || is_nullable || ' ' || coalesce(column_default, '-') AS line
        FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1`),
    indexes: await lines(`SELECT indexdef AS line FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1`),
    constraints: await lines(`
      SELECT c.relname || '.' || con.conname || ' ' || pg_get_constraintdef(con.oid) AS line
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() ORDER BY 1`),
    types: await lines(`
      SELECT t.typname || ' ' || t.typtype::text || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
             (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum) FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0), '') AS line
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = current_schema() AND t.typtype IN ('e', 'c')
         AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')
       ORDER BY 1`),
  };
}
