// The supported PostgreSQL majors (docs/operating.md "Commands"): 15 and later run; an older server is refused by npm start
// and npm run db:migrate with one line and exit 1, before anything is written to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { assertSupportedServer, MINIMUM_MAJOR, majorOf, unsupportedServerMessage } from '../../src/db/server-version.ts';
import { createEmptyDatabase } from '../helpers/database.ts';
import { startOldPostgres } from '../helpers/old-postgres.ts';
import { run } from '../helpers/process.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

describe('the supported PostgreSQL majors', () => {
  it('refuses every major before 15 by its own name, and takes 15 and later, betas included', () => {
    expect(MINIMUM_MAJOR).toBe(15);
    expect(unsupportedServerMessage({ num: 140009, name: '14.9' })).toBe('PostgreSQL 14.9 is not supported; use 15 or later');
    expect(unsupportedServerMessage({ num: 149999, name: '14.99' })).toBe('PostgreSQL 14.99 is not supported; use 15 or later');
    expect(unsupportedServerMessage({ num: 90624, name: '9.6.24' })).toBe('PostgreSQL 9.6.24 is not supported; use 15 or later');
    for (const version of [
      { num: 150000, name: '15beta1' },
      { num: 150018, name: '15.18' },
      { num: 160013, name: '16.13' },
      { num: 170010, name: '17.10' },
      { num: 180004, name: '18.4' },
      { num: 190000, name: '19devel' },
    ]) {
      expect(unsupportedServerMessage(version)).toBeUndefined();
    }
  });

  it('the server the tests run on passes the check, and is the major TEST_POSTGRES_MAJOR asked for', async () => {
    const db = await createEmptyDatabase();
    cleanup.push(() => db.drop());
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const version = await assertSupportedServer(client);
      expect(majorOf(version)).toBeGreaterThanOrEqual(MINIMUM_MAJOR);
      expect(version.name).toMatch(/^\d+(\.\d+|beta\d+|rc\d+|devel)/);
      if (process.env.TEST_POSTGRES_MAJOR) expect(majorOf(version)).toBe(Number(process.env.TEST_POSTGRES_MAJOR));
    } finally {
      await client.end();
    }
  });

  it('npm run db:migrate and npm start refuse PostgreSQL 14 with one line and exit 1, having asked only its version', async () => {
    const old = await startOldPostgres('14.9 (Debian 14.9-1.pgdg120+1)', 140009);
    cleanup.push(() => old.close());
    // Every secret given, so the service prints nothing of its own; and a working directory of its own all the same.
    const workDir = mkdtempSync(path.join(tmpdir(), 'billing-old-postgres-'));
    cleanup.push(() => rmSync(workDir, { recursive: true, force: true }));
    const env = {
      DATABASE_URL: old.url,
      HOST: '127.0.0.1',
      PORT: '0',
      SCHEDULER_ENABLED: 'false',
      API_KEYS: 'old_postgres_api_key_0123456789',
      ADMIN_TOKENS: 'old_postgres_admin_token_0123456789',
      BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 5).toString('base64')}`,
      CONSOLE_SESSION_KEYS: Buffer.alloc(32, 6).toString('base64'),
    };
    for (const script of ['src/cli/migrate.ts', 'src/server.ts']) {
      const process = run(script, env, workDir);
      expect(await process.exit).toBe(1);
      expect(process.output().trim().split('\n')).toEqual(['PostgreSQL 14.9 is not supported; use 15 or later']);
    }
    // Nothing but the version was asked: no advisory lock, no migrations table, no schema.
    expect(old.queries).toHaveLength(2);
    expect(old.queries.every((sql) => sql.includes('server_version_num'))).toBe(true);
  });
});
