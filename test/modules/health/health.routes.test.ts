import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { freePort } from '../../setup/global-setup.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { createEmptyDatabase, createTestDatabase, databaseUrl, type TestDatabase } from '../../helpers/database.ts';

let migrated: TestDatabase;
let empty: TestDatabase;
const apps: App[] = [];

async function appFor(url: string) {
  const app = await buildTestApp(url);
  apps.push(app);
  return app;
}

beforeAll(async () => {
  [migrated, empty] = await Promise.all([createTestDatabase(), createEmptyDatabase()]);
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await Promise.all([migrated.drop(), empty.drop()]);
});

describe('GET /health', () => {
  it('answers ok while the process is up', async () => {
    const response = await (await appFor(migrated.url)).inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /ready', () => {
  it('is ready when the database answers and every migration is applied', async () => {
    const response = await (await appFor(migrated.url)).inject({ method: 'GET', url: '/ready' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready' });
  });

  it('is not ready when migrations are missing', async () => {
    const response = await (await appFor(empty.url)).inject({ method: 'GET', url: '/ready' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ status: 'not_ready', reason: expect.stringMatching(/^migrations not applied: \d+_init/) });
  });

  it('is not ready when a function file is not applied as it is now', async () => {
    const changed = await createTestDatabase();
    try {
      const client = new pg.Client({ connectionString: changed.url });
      await client.connect();
      await client.query(`UPDATE _function_files SET checksum = 'an older text' WHERE name = 'events.sql'`);
      await client.end();
      const app = await buildTestApp(changed.url);
      try {
        const response = await app.inject({ method: 'GET', url: '/ready' });
        expect(response.statusCode).toBe(503);
        expect(response.json()).toEqual({ status: 'not_ready', reason: 'migrations not applied: prisma/functions/events.sql' });
      } finally {
        await app.close();
      }
    } finally {
      await changed.drop();
    }
  });

  it('is not ready when the database cannot be reached, and does not leak why', async () => {
    const url = new URL(databaseUrl('nowhere'));
    url.port = String(await freePort());
    const response = await (await appFor(url.toString())).inject({ method: 'GET', url: '/ready' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ status: 'not_ready', reason: 'database unreachable' });
  });
});
