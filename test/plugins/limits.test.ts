// Abuse limits and security headers: browser routes are rate limited per client address, the merchant API and the
// admin routes per valid token (one noisy key does not starve another; invalid tokens count against the address),
// failed authentications per address whatever the token, and pages carry security headers (issue #12 defect 10).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, buildTestApp, TEST_API_KEY } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { adminHeaders } from '../helpers/billing.ts';

const OTHER_KEY = 'second_api_key_0123456789abcdef';
const THIRD_KEY = 'third_api_key_0123456789abcdef';
let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, {
    env: {
      RATE_LIMIT_BROWSER: '5',
      RATE_LIMIT_API: '3',
      RATE_LIMIT_ADMIN: '4',
      RATE_LIMIT_AUTH_FAILURES: '5',
      API_KEYS: `${TEST_API_KEY},${OTHER_KEY},${THIRD_KEY}`,
    },
  });
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('rate limits', () => {
  it('browser routes: 429 RATE_LIMITED after RATE_LIMIT_BROWSER requests a minute from one address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      statuses.push(
        (await app.inject({ method: 'GET', url: '/billing/success?state=nope', headers: { accept: 'application/json' }, remoteAddress: '10.0.0.1' }))
          .statusCode,
      );
    expect(statuses.slice(0, 5).every((s) => s !== 429)).toBe(true);
    expect(statuses[5]).toBe(429);
    const limited = await app.inject({ method: 'GET', url: '/result', remoteAddress: '10.0.0.1' });
    expect(limited.json()).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expect((await app.inject({ method: 'GET', url: '/result', remoteAddress: '10.0.0.2' })).statusCode).toBe(200);
  });

  it('X-Forwarded-For is not believed without TRUST_PROXY: an invented address does not reset the limit', async () => {
    const from = (forwarded?: string) =>
      app.inject({ method: 'GET', url: '/result', remoteAddress: '10.0.0.3', headers: forwarded ? { 'x-forwarded-for': forwarded } : {} });
    for (let i = 0; i < 5; i += 1) expect((await from(`192.0.2.${i}`)).statusCode).toBe(200);
    expect((await from('198.51.100.7')).statusCode).toBe(429);
  });

  it('behind a trusted proxy (TRUST_PROXY) each forwarded client has its own limit', async () => {
    const proxied = await buildTestApp(database.url, { env: { RATE_LIMIT_BROWSER: '2', TRUST_PROXY: '10.0.0.4' } });
    try {
      const from = (client: string) => proxied.inject({ method: 'GET', url: '/result', remoteAddress: '10.0.0.4', headers: { 'x-forwarded-for': client } });
      expect([(await from('192.0.2.1')).statusCode, (await from('192.0.2.1')).statusCode, (await from('192.0.2.1')).statusCode]).toEqual([200, 200, 429]);
      expect((await from('192.0.2.2')).statusCode).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('merchant API: per token; another key keeps working', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await app.inject({ method: 'GET', url: '/api/v1/subscriptions', headers: apiHeaders })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await app.inject({ method: 'GET', url: '/api/v1/subscriptions', headers: { authorization: `Bearer ${OTHER_KEY}` } })).statusCode).toBe(200);
  });

  it('"Bearer" spelled differently is the same token’s bucket', async () => {
    const statuses: number[] = [];
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      statuses.push(
        (await app.inject({ method: 'GET', url: '/api/v1/payments', remoteAddress: '10.1.0.1', headers: { authorization: `${scheme}  ${THIRD_KEY}` } }))
          .statusCode,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('admin routes: RATE_LIMIT_ADMIN per token; health is not limited', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push((await app.inject({ method: 'GET', url: '/admin/payments', remoteAddress: '10.1.0.2', headers: adminHeaders })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    for (let i = 0; i < 8; i += 1) expect((await app.inject({ method: 'GET', url: '/health', remoteAddress: '10.1.0.2' })).statusCode).toBe(200);
  });

  it('failed authentication: after RATE_LIMIT_AUTH_FAILURES wrong tokens an address is refused, even with a valid one', async () => {
    // Its own app, so the request limits of the tests above play no part.
    const guarded = await buildTestApp(database.url, { env: { RATE_LIMIT_AUTH_FAILURES: '5' } });
    const from = (address: string, token: string, url = '/admin/clock') =>
      guarded.inject({ method: 'GET', url, remoteAddress: address, headers: { authorization: `Bearer ${token}` } });
    const statuses: number[] = [];
    // A new wrong token each time, on both kinds of route.
    for (let i = 0; i < 5; i += 1)
      statuses.push(
        (await from('10.1.0.3', `guess_${i}_0123456789abcdef`, i % 2 ? '/admin/clock' : '/api/v1/orders/00000000-0000-4000-8000-000000000000')).statusCode,
      );
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const blocked = await from('10.1.0.3', 'test_admin_token_0123456789abcdef');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect((await from('10.1.0.4', 'test_admin_token_0123456789abcdef')).statusCode).toBe(200);
    await guarded.close();
  });
});

describe('security headers', () => {
  it('the result page carries a CSP, nosniff and frame protection', async () => {
    const page = await app.inject({ method: 'GET', url: '/result?status=succeeded', remoteAddress: '10.0.0.9' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['x-frame-options']).toBe('SAMEORIGIN');
  });
});
