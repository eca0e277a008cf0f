// One PostgreSQL for the whole run: TEST_DATABASE_URL or DATABASE_URL when set (a server the caller owns),
// else an embedded cluster in a temporary directory. A template database is migrated once; every test file
// clones its own database from it (test/helpers/database.ts), so no test sees another's rows.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres.ts';
import { migrate } from '../../src/db/migrator.ts';
import { testPostgres } from './postgres-major.ts';
import { createRunDirectory } from './run-directory.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export default async function setup(project: TestProject) {
  const log = pino({ level: 'error' });
  let embedded: EmbeddedDatabase | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  const postgres = await testPostgres();
  // This run's temporary folder (and TMPDIR from now on), after the sweep of those left by runs that are gone.
  const runDirectory = createRunDirectory(tmpdir());

  if (!adminUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(runDirectory.path, 'pg'),
      port: await freePort(),
      database: 'postgres',
      persistent: false,
      binaries: postgres.binaries,
      // Durability is irrelevant for a throw-away test cluster; speed is not.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
      log,
    });
    adminUrl = embedded.adminConnectionString;
  } else {
    adminUrl = withDatabase(adminUrl, 'postgres');
  }
  await postgres.check(adminUrl).catch(async (error: unknown) => {
    await embedded?.stop();
    runDirectory.remove();
    throw error;
  });

  const template = `billing_template_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await admin.end();
  await migrate({ connectionString: withDatabase(adminUrl, template), log });

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    // Whatever step fails, the folder goes, and with it what is left of the run (test/setup/run-directory.ts).
    try {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2', [
        template,
        `t_${process.pid}_%`,
      ]);
      for (const row of rows) await client.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
      await client.end();
      await embedded?.stop();
    } finally {
      runDirectory.remove();
    }
  };
}
