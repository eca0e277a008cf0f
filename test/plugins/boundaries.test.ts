// What the service accepts at its edges: JSON only on the merchant API and admin routes (form posts only on the
// browser routes), and in production /docs and /metrics only with a bearer token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders, buildTestApp, TEST_ADMIN_TOKEN, TEST_API_KEY, TEST_ENCRYPTION_KEYS, TEST_SECRET_KEY } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { adminHeaders } from '../helpers/billing.ts';

const METRICS_TOKEN = 'metrics_token_0123456789abcdef';
let database: TestDatabase;
let app: App;
let production: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
  production = await buildTestApp(database.url, {
    env: {
      NODE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://billing.example',
      PAYMENT_API_BASE_URL: 'http://127.0.0.1:9',
      PAYMENT_SECRET_KEY: TEST_SECRET_KEY,
      PAYMENT_MERCHANT_ID: 'TEST_MERCHANT',
      BILLING_KEY_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      METRICS_TOKENS: METRICS_TOKEN,
    },
  });
});
afterAll(async () => {
  await app?.close();
  await production?.close();
  await database?.drop();
});

const registration = { userId: 'u-json', method: 'CARD', amount: 9900, orderName: 'Plan' };

describe('request bodies', () => {
  it.each([
    ['application/x-www-form-urlencoded', 'userId=u&method=CARD&amount=9900&orderName=Plan'],
    ['text/plain', JSON.stringify(registration)],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('the merchant API refuses %s with 415 UNSUPPORTED_MEDIA_TYPE in the error shape', async (type, payload) => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/registrations', headers: { ...apiHeaders, 'content-type': type }, payload });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', error: 'Unsupported Media Type' });
  });

  it('admin routes refuse a form body with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/admin/scheduler/run',
      headers: { ...adminHeaders, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'a=b',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('JSON is accepted, with or without a charset', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/registrations',
      headers: { ...apiHeaders, 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify(registration),
    });
    expect(response.statusCode).toBe(201);
  });

  it('browser routes still take the form post a gateway may send', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/billing/fail',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      payload: 'state=unknown-state&code=USER_CANCEL',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'INVALID_STATE' });
  });
});

describe('internal routes', () => {
  it('are open in development', async () => {
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode).toBe(200);
  });

  it.each(['/metrics', '/docs/json', '/docs'])('in production %s is 401 without a token', async (url) => {
    const response = await production.inject({ method: 'GET', url });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('in production /metrics takes a METRICS_TOKENS or an admin token, not an API key', async () => {
    const scrape = (token: string) => production.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect((await scrape(METRICS_TOKEN)).statusCode).toBe(200);
    expect((await scrape(TEST_ADMIN_TOKEN)).statusCode).toBe(200);
    expect((await scrape(TEST_API_KEY)).statusCode).toBe(401);
  });

  it('in production /docs/json takes any token of the service', async () => {
    for (const token of [TEST_API_KEY, TEST_ADMIN_TOKEN, METRICS_TOKEN]) {
      const response = await production.inject({ method: 'GET', url: '/docs/json', headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode).toBe(200);
    }
  });
});
