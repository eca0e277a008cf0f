// Prisma 7 without its Rust engine: the generated `prisma-client` talks to PostgreSQL through
// @prisma/adapter-pg (node-postgres). The pg pool is ours, handed to the adapter, so that the few hot statements where
// Prisma's runtime is the cost (issue 15: the public reads, the charging engine's one-statement steps) can go through
// the same connections (`sqlPool`) and everything else stays on Prisma.
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = InstanceType<typeof PrismaClient>;

const pools = new WeakMap<Db, pg.Pool>();

export function createPrismaClient(connectionString: string, options: { poolSize?: number } = {}): Db {
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10 });
  // An idle connection that breaks is dropped by the pool and replaced on the next query; without a listener the
  // 'error' event would end the process (the adapter adds its own only once Prisma connects).
  pool.on('error', () => {});
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/**
 * The pg pool under a client made by createPrismaClient. Its rows come from node-postgres's own parsers: timestamptz
 * as Date, enums as strings, jsonb parsed (instants inside it stay strings), int8 as string.
 */
export function sqlPool(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('sqlPool: this client was not made by createPrismaClient');
  return pool;
}

/** Collects the values of one parameterised statement: `param(v)` answers its placeholder ($1, $2…). */
export function sqlParams(): { values: unknown[]; param: (value: unknown) => string } {
  const values: unknown[] = [];
  return { values, param: (value) => `$${values.push(value)}` };
}
