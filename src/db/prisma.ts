// Prisma 7 without its Rust engine: the generated `prisma-client` talks to PostgreSQL through
// @prisma/adapter-pg (node-postgres). The pg pool is ours, handed to the adapter, so that the few hot statements where
// Prisma's runtime is the cost (issue 15: the public reads, the charging engine's one-statement steps) can go through
// the same connections (`sqlQuery`) and everything else stays on Prisma.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';
import type { Clock } from '../lib/clock.ts';
import { withClockStamps } from './clock-stamps.ts';

export type Db = InstanceType<typeof PrismaClient>;

const pools = new WeakMap<Db, pg.Pool>();

/**
 * `clock`: the service's, which then dates every row Prisma writes (db/clock-stamps.ts); without it, the columns'
 * defaults. `readOnly`: a read replica's client (db/read-router.ts): every transaction read-only (a standby refuses
 * writes anyway; a DATABASE_READ_URL that points at a primary by mistake refuses them too), and a connection that
 * cannot be made within `connectTimeoutMs` fails instead of holding the request.
 */
export function createPrismaClient(
  connectionString: string,
  options: { poolSize?: number; clock?: Clock; readOnly?: boolean; connectTimeoutMs?: number } = {},
): Db {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    ...(options.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
  });
  // An idle connection that breaks is dropped by the pool and replaced on the next query; without a listener the
  // 'error' event would end the process (the adapter adds its own only once Prisma connects).
  pool.on('error', () => {});
  const client = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true, statementNameGenerator: (query) => statementName(query.sql) as string }),
  });
  const db = options.clock ? withClockStamps(client, options.clock) : client;
  pools.set(db, pool);
  return db;
}

// Named statements: PostgreSQL parses and plans a named statement once per connection and reuses the plan, where an
// unnamed one is planned on every call; planning was most of the database's time on the API's reads (docs/benchmarks.md "Measurements behind choices in the code"). Names come from the text, so one text always has one name. The map is
// capped (the texts are the code's, but Prisma's IN lists of every length are distinct texts, and each named text is
// kept by every pooled connection, in node-postgres and in its PostgreSQL backend); past the cap a text goes unnamed,
// as before. The hot statements are a few dozen texts. Statements that read `*` would fail after a migration adds a
// column ("cached plan must not change result type"), so every statement names its columns (columnsOf).
const MAX_NAMED_STATEMENTS = 500;
const statementNames = new Map<string, string>();

export function statementName(sql: string): string | undefined {
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `q${createHash('sha1').update(sql).digest('base64url')}`;
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * The pg pool under a client made by createPrismaClient. Its rows come from node-postgres's own parsers: timestamptz
 * as Date, enums as strings, jsonb parsed (instants inside it stay strings), int8 as string.
 */
function sqlPool(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('sqlPool: this client was not made by createPrismaClient');
  return pool;
}

/** One statement through the pg pool under a client, named (prepared once per connection). */
export async function sqlQuery<Row extends object = Record<string, unknown>>(db: Db, text: string, values: unknown[]): Promise<Row[]> {
  const { rows } = await sqlPool(db).query<Row>({ name: statementName(text), text, values });
  return rows;
}

/** `a."col", …` for every column of a model (named, never `*`: see statementName in db/prisma.ts). */
export function columnsOf(fields: Record<string, string> | readonly string[], alias: string): string {
  return (Array.isArray(fields) ? fields : Object.values(fields)).map((column) => `${alias}."${column}"`).join(', ');
}

/** Collects the values of one parameterised statement: `param(v)` answers its placeholder ($1, $2…). */
export function sqlParams(): { values: unknown[]; param: (value: unknown) => string } {
  const values: unknown[] = [];
  return { values, param: (value) => `$${values.push(value)}` };
}
