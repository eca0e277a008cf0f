// The request limits of the merchant API (RATE_LIMIT_API) and the admin routes (RATE_LIMIT_ADMIN) hold for requests
// without a valid token too: such a request counts against its client address and is answered 429 RATE_LIMITED
// past the limit, not 401 for ever (docs/operating.md "Environment variables"). A valid token has its own budget whatever the
// address. The failed-authentication limit (RATE_LIMIT_AUTH_FAILURES) is separate and set above every count here, so
// every 429 below is the request limit's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp, TEST_ADMIN_TOKEN, TEST_API_KEY } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const API_LIMIT = 5;
// Unlike the API's, so a 429 on the admin routes can only come from RATE_LIMIT_ADMIN.
const ADMIN_LIMIT = 3;
const OTHER_KEY = 'second_api_key_0123456789abcdef';
const WRONG_TOKEN = 'wrong_token_0123456789abcdef';
// Routes of different route files: the budget belongs to the scope, not to one route.
const API_ROUTES = ['/api/v1/subscriptions', '/api/v1/payments', '/api/v1/events', '/api/v1/webhook-endpoints'];
const ADMIN_ROUTES = ['/admin/subscriptions', '/admin/payments', '/admin/clock'];

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, {
    env: {
      RATE_LIMIT_API: String(API_LIMIT),
      RATE_LIMIT_ADMIN: String(ADMIN_LIMIT),
      RATE_LIMIT_AUTH_FAILURES: '20',
      API_KEYS: `${TEST_API_KEY},${OTHER_KEY}`,
    },
  });
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

type Call = { remoteAddress: string; authorization?: string; forwardedFor?: string };

async function statusesOf(target: App, routes: string[], calls: Call[]) {
  const responses = [];
  for (const [i, call] of calls.entries()) {
    const headers: Record<string, string> = {};
    if (call.authorization) headers.authorization = call.authorization;
    if (call.forwardedFor) headers['x-forwarded-for'] = call.forwardedFor;
    responses.push(await target.inject({ method: 'GET', url: routes[i % routes.length]!, remoteAddress: call.remoteAddress, headers }));
  }
  return { statuses: responses.map((r) => r.statusCode), last: responses.at(-1)! };
}

const times = (n: number, call: (i: number) => Call) => Array.from({ length: n }, (_, i) => call(i));
const expected = (limit: number, total: number) => [...Array(limit).fill(401), ...Array(total - limit).fill(429)];

function expectRateLimited(response: { statusCode: number; json: () => unknown }) {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual({ statusCode: 429, code: 'RATE_LIMITED', error: 'Too Many Requests', message: expect.any(String) });
}

describe('merchant API: a request without a valid API key counts against its client address', () => {
  it('8 requests with a wrong token from one address: 401 for the first RATE_LIMIT_API, then 429 RATE_LIMITED', async () => {
    const { statuses, last } = await statusesOf(
      app,
      API_ROUTES,
      times(8, () => ({ remoteAddress: '10.2.0.1', authorization: `Bearer ${WRONG_TOKEN}` })),
    );
    expect(statuses).toEqual(expected(API_LIMIT, 8));
    expectRateLimited(last);
  });

  it('8 requests without a token, each with another X-Forwarded-For (not believed without TRUST_PROXY): 429 from the 6th', async () => {
    const { statuses, last } = await statusesOf(
      app,
      API_ROUTES,
      times(8, (i) => ({ remoteAddress: '10.2.0.2', forwardedFor: `192.0.2.${i + 1}` })),
    );
    expect(statuses).toEqual(expected(API_LIMIT, 8));
    expectRateLimited(last);
  });

  it('an admin token is not an API key: it counts against the address like a wrong one', async () => {
    const { statuses } = await statusesOf(
      app,
      API_ROUTES,
      times(API_LIMIT + 1, () => ({ remoteAddress: '10.2.0.3', authorization: `Bearer ${TEST_ADMIN_TOKEN}` })),
    );
    expect(statuses).toEqual(expected(API_LIMIT, API_LIMIT + 1));
  });

  it('a valid key keeps its own budget: not spent by the address’s failures, not shared with another key', async () => {
    const address = '10.2.0.4';
    const refused = await statusesOf(
      app,
      API_ROUTES,
      times(API_LIMIT + 1, () => ({ remoteAddress: address, authorization: `Bearer ${WRONG_TOKEN}` })),
    );
    expect(refused.statuses.at(-1)).toBe(429);

    const first = await statusesOf(
      app,
      API_ROUTES,
      times(API_LIMIT + 1, () => ({ remoteAddress: address, authorization: `Bearer ${TEST_API_KEY}` })),
    );
    expect(first.statuses).toEqual([...Array(API_LIMIT).fill(200), 429]);
    expectRateLimited(first.last);

    const second = await statusesOf(app, API_ROUTES, [{ remoteAddress: address, authorization: `Bearer ${OTHER_KEY}` }]);
    expect(second.statuses).toEqual([200]);
  });
});

describe('admin routes: a request without a valid admin token counts against its client address', () => {
  it('wrong tokens from one address: 401 for the first RATE_LIMIT_ADMIN, then 429 RATE_LIMITED', async () => {
    const { statuses, last } = await statusesOf(
      app,
      ADMIN_ROUTES,
      times(8, () => ({ remoteAddress: '10.3.0.1', authorization: `Bearer ${WRONG_TOKEN}` })),
    );
    expect(statuses).toEqual(expected(ADMIN_LIMIT, 8));
    expectRateLimited(last);
  });

  it('no token, each with another X-Forwarded-For: 429 past RATE_LIMIT_ADMIN', async () => {
    const { statuses, last } = await statusesOf(
      app,
      ADMIN_ROUTES,
      times(8, (i) => ({ remoteAddress: '10.3.0.2', forwardedFor: `198.51.100.${i + 1}` })),
    );
    expect(statuses).toEqual(expected(ADMIN_LIMIT, 8));
    expectRateLimited(last);
  });

  it('an API key is not an admin token: it counts against the address; a valid admin token keeps its own budget', async () => {
    const address = '10.3.0.3';
    const refused = await statusesOf(
      app,
      ADMIN_ROUTES,
      times(ADMIN_LIMIT + 1, () => ({ remoteAddress: address, authorization: `Bearer ${TEST_API_KEY}` })),
    );
    expect(refused.statuses).toEqual(expected(ADMIN_LIMIT, ADMIN_LIMIT + 1));

    const admin = await statusesOf(
      app,
      ADMIN_ROUTES,
      times(ADMIN_LIMIT + 1, () => ({ remoteAddress: address, authorization: `Bearer ${TEST_ADMIN_TOKEN}` })),
    );
    expect(admin.statuses).toEqual([...Array(ADMIN_LIMIT).fill(200), 429]);
  });
});

describe('behind a trusted proxy (TRUST_PROXY)', () => {
  it('a request without a valid token counts against the forwarded client, not the proxy', async () => {
    const proxied = await buildTestApp(database.url, { env: { RATE_LIMIT_API: '2', RATE_LIMIT_AUTH_FAILURES: '20', TRUST_PROXY: '10.4.0.1' } });
    try {
      const viaProxy = (client: string) => ({ remoteAddress: '10.4.0.1', forwardedFor: client });
      const same = await statusesOf(
        proxied,
        API_ROUTES,
        times(3, () => viaProxy('192.0.2.10')),
      );
      expect(same.statuses).toEqual([401, 401, 429]);
      const other = await statusesOf(proxied, API_ROUTES, [viaProxy('192.0.2.11')]);
      expect(other.statuses).toEqual([401]);
    } finally {
      await proxied.close();
    }
  });
});
