// Admin routes of the charging engine: tokens, the simulated clock, and the cron tick driving passes by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { apiHeaders, buildTestApp, startTestApp } from '../../helpers/app.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { waitFor } from '../../helpers/service.ts';

let database: TestDatabase;
let simulated: App;
let system: App;

beforeAll(async () => {
  database = await createTestDatabase();
  simulated = await buildTestApp(database.url, { env: { CLOCK: 'simulated' } });
  system = await buildTestApp(database.url);
});
afterAll(async () => {
  await simulated.close();
  await system.close();
  await database.drop();
});

describe('admin tokens', () => {
  it.each([
    ['no token', {}],
    ['an API key', apiHeaders],
    ['a wrong token', { authorization: 'Bearer not_a_real_admin_token_000' }],
  ])('POST /admin/scheduler/run with %s is 401 and runs nothing', async (_, headers) => {
    const response = await system.inject({ method: 'POST', url: '/admin/scheduler/run', headers });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('GET /admin/clock with an API key is 401', async () => {
    expect((await system.inject({ method: 'GET', url: '/admin/clock', headers: apiHeaders })).statusCode).toBe(401);
  });
});

describe('the clock', () => {
  it('a simulated clock follows the system until set, then stays where it was set', async () => {
    const before = (await simulated.inject({ method: 'GET', url: '/admin/clock', headers: adminHeaders })).json();
    expect(before).toMatchObject({ kind: 'simulated', frozen: false });
    expect(Math.abs(Date.parse(before.now) - Date.now())).toBeLessThan(60_000);
    const set = await simulated.inject({ method: 'PUT', url: '/admin/clock', headers: adminHeaders, payload: { now: '2030-02-28T15:00:00.000Z' } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ now: '2030-02-28T15:00:00.000Z', kind: 'simulated', frozen: true });
    // Not synchronisation: real time has to pass for a clock that still followed the system to show it. There is no
    // condition to wait on instead, and a loaded machine only lets more time pass, which makes the check stronger.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await simulated.inject({ method: 'GET', url: '/admin/clock', headers: adminHeaders })).json().now).toBe('2030-02-28T15:00:00.000Z');
    // The mounted sandbox shares it.
    expect((await simulated.inject({ method: 'GET', url: '/sandbox/_control/clock' })).json().now).toBe('2030-02-28T15:00:00.000Z');
  });

  it('refuses a malformed instant and unknown fields', async () => {
    for (const payload of [{ now: 'tomorrow' }, { now: '2030-01-01T00:00:00Z', speed: 2 }, {}]) {
      const response = await simulated.inject({ method: 'PUT', url: '/admin/clock', headers: adminHeaders, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('PUT is 409 CLOCK_NOT_SIMULATED with the system clock, which keeps running', async () => {
    const response = await system.inject({ method: 'PUT', url: '/admin/clock', headers: adminHeaders, payload: { now: '2030-01-01T00:00:00Z' } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 'CLOCK_NOT_SIMULATED' });
    const clock = (await system.inject({ method: 'GET', url: '/admin/clock', headers: adminHeaders })).json();
    expect(clock).toMatchObject({ kind: 'system', frozen: false });
    expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(60_000);
  });
});

describe('the scheduler', () => {
  it('with SCHEDULER_ENABLED=true the cron tick charges due subscriptions without anyone calling', async () => {
    await truncateAll(system.db);
    const { app, baseUrl } = await startTestApp(database.url, { env: { SCHEDULER_ENABLED: 'true', SCHEDULER_CRON: '* * * * * *' } });
    try {
      await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
        count: 3,
        sandboxUrl: `${baseUrl}/sandbox`,
        dueAt: new Date(Date.now() - 1000),
      });
      await waitFor('the cron tick to charge the three due subscriptions', async () => (await app.db.payment.count({ where: { status: 'SUCCEEDED' } })) >= 3);
      expect(await app.db.subscription.count({ where: { cycle: 2 } })).toBe(3);
    } finally {
      await app.close();
    }
  });
});
