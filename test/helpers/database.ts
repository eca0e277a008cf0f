// A database of the test file's own, cloned from the migrated template made by test/setup/global-setup.ts.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import type { App } from '../../src/app.ts';
import { startTestApp } from './app.ts';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export function databaseUrl(name: string): string {
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** An empty database with no migrations applied, for migration tests. */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  return createDatabase(undefined);
}

/** A migrated database (a clone of the template). */
export async function createTestDatabase(): Promise<TestDatabase> {
  return createDatabase(inject('templateDatabase'));
}

async function createDatabase(template: string | undefined): Promise<TestDatabase> {
  // The global teardown drops every t_<pid>_* database left by a crashed file.
  const name = `t_${process.ppid}_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => {}),
  };
}

const TABLES = [
  // Erasures (migration 20261130100000_erasures): no other table refers to them.
  'erasures',
  // The reports' pre-aggregated figures (migration 20261124210000_report_rollups): emptied with the rows they sum.
  'revenue_days',
  'recovery_cycles',
  'recovery_months',
  'mrr_months',
  'settlement_lines',
  'external_refunds',
  'settlement_imports',
  'webhook_deliveries',
  'webhook_endpoints',
  'events',
  'audit_events',
  'idempotency_records',
  'payment_attempts',
  'payments',
  'subscriptions',
  'billing_keys',
  'orders',
  'registrations',
  'erasures',
];

/** Empties every domain table (not _prisma_migrations) between tests of one file, the kept ones (docs/architecture.md, invariant 15) included. */
export async function truncateAll(db: Db): Promise<void> {
  // A running app's webhook dispatcher numbers events and queues deliveries meanwhile; its locks and TRUNCATE's
  // can deadlock, and PostgreSQL then aborts one of the two: the TRUNCATE is simply tried again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      // The tables kept by invariant 15 refuse TRUNCATE by trigger; ordinary triggers do not fire for a replica session, set
      // for this transaction only (the pooled connection goes back with its triggers on).
      await db.$transaction([
        db.$executeRawUnsafe(`SET LOCAL session_replication_role = replica`),
        db.$executeRawUnsafe(`TRUNCATE ${TABLES.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`),
      ]);
      return;
    } catch (error) {
      if (attempt >= 5 || !String((error as Error).message).includes('40P01')) throw error;
    }
  }
}

export { createPrismaClient };

/**
 * A migrated database and a Prisma client for the whole test file, emptied before each test. Call at the top
 * level of a test file; read `.db` inside tests.
 */
export function useTestDatabase(): { readonly db: Db } {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });
  beforeEach(() => truncateAll(db));
  return {
    get db() {
      return db;
    },
  };
}

/**
 * The app listening on a free port (mounted sandbox included) over a database of the file's own, for the whole
 * file; before each test its rows and the sandbox are reset. Read `.app`, `.baseUrl` and `.databaseUrl` inside
 * tests.
 */
export function useRunningApp(env: Record<string, string> = {}): { readonly app: App; readonly baseUrl: string; readonly databaseUrl: string } {
  let database: TestDatabase;
  let running: { app: App; baseUrl: string };
  beforeAll(async () => {
    database = await createTestDatabase();
    running = await startTestApp(database.url, { env });
  });
  afterAll(async () => {
    await running.app.close();
    await database.drop();
  });
  beforeEach(async () => {
    await truncateAll(running.app.db);
    await running.app.inject({ method: 'POST', url: '/sandbox/_control/reset' });
  });
  return {
    get app() {
      return running.app;
    },
    get baseUrl() {
      return running.baseUrl;
    },
    get databaseUrl() {
      return database.url;
    },
  };
}
