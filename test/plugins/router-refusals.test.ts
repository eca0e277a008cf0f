// What the router refuses before a route runs (issue 30, found by an API fuzzer) answers like everything else:
// - a path that is not valid percent-encoded UTF-8, or a path parameter over find-my-way's 100 characters, is
//   400 VALIDATION_ERROR in the service's error shape, logged, counted by the scope's rate limit and behind its token
//   guard (401 first), and the answer does not repeat the path;
// - a method that the path is not served with is 405 METHOD_NOT_ALLOWED with `Allow` (the path's methods), after the
//   guards; an unknown path stays 404, OPTIONS stays 404 and HEAD answers wherever GET does, as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp, LogCapture, TEST_ADMIN_TOKEN, TEST_API_KEY } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const api = { authorization: `Bearer ${TEST_API_KEY}` };
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const BROKEN_ESCAPE = '%E0%A4%A';
const LONG_ID = 'a'.repeat(101);
const API_LIMIT = 3;

let database: TestDatabase;
let app: App;
let limited: App;
const logs = new LogCapture();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { logs });
  limited = await buildTestApp(database.url, { env: { RATE_LIMIT_API: String(API_LIMIT), RATE_LIMIT_ADMIN: String(API_LIMIT) } });
});
afterAll(async () => {
  await app.close();
  await limited.close();
  await database.drop();
});

const shape = (statusCode: number, code: string, error: string) => ({ statusCode, code, error, message: expect.any(String) });

describe('paths the router cannot route as sent', () => {
  for (const [name, path] of [
    ['a broken percent-escape', `/api/v1/payments/${BROKEN_ESCAPE}`],
    ['a path parameter over 100 characters', `/api/v1/payments/${LONG_ID}`],
    ['a broken percent-escape on the admin routes', `/admin/payments/${BROKEN_ESCAPE}`],
    ['a long parameter on the admin routes', `/admin/payments/${LONG_ID}`],
  ] as const) {
    it(`${name}: 401 without a token, then 400 VALIDATION_ERROR in the error shape, not repeating the path`, async () => {
      const headers = path.startsWith('/admin') ? admin : api;
      const anonymous = await app.inject({ method: 'GET', url: path });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toEqual(shape(401, 'UNAUTHORIZED', 'Unauthorized'));

      const response = await app.inject({ method: 'GET', url: path, headers });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(shape(400, 'VALIDATION_ERROR', 'Bad Request'));
      expect(response.body).not.toContain(BROKEN_ESCAPE);
      expect(response.body).not.toContain(LONG_ID);
    });
  }

  it('a broken escape outside the guarded prefixes is 400 VALIDATION_ERROR too (not 404, not FST_ERR_BAD_URL)', async () => {
    for (const url of ['/health%E0', `/billing/success/${BROKEN_ESCAPE}`]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toEqual(shape(400, 'VALIDATION_ERROR', 'Bad Request'));
    }
  });

  it('is logged like any request: a completed line with its status (the router’s own answer logged nothing)', async () => {
    for (const path of [`/api/v1/payments/${BROKEN_ESCAPE}`, `/api/v1/payments/${LONG_ID}`]) {
      const before = logs.lines.length;
      const response = await app.inject({ method: 'GET', url: path, headers: api });
      expect(response.statusCode).toBe(400);
      const completed = logs.lines.slice(before).filter((line) => line.msg === 'request completed');
      expect(completed, path).toEqual([expect.objectContaining({ res: { statusCode: 400 } })]);
    }
  });

  it('counts in the scope’s rate limit: past RATE_LIMIT_API such requests are 429 RATE_LIMITED', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < API_LIMIT + 2; i++) {
      const response = await limited.inject({ method: 'GET', url: `/api/v1/payments/${BROKEN_ESCAPE}`, headers: api, remoteAddress: '10.30.0.1' });
      statuses.push(response.statusCode);
      if (response.statusCode === 429) expect(response.json()).toEqual(shape(429, 'RATE_LIMITED', 'Too Many Requests'));
    }
    expect(statuses).toEqual([...Array(API_LIMIT).fill(400), 429, 429]);
    const admins: number[] = [];
    for (let i = 0; i < API_LIMIT + 1; i++) {
      admins.push((await limited.inject({ method: 'GET', url: `/admin/payments/${LONG_ID}`, remoteAddress: '10.30.0.2' })).statusCode);
    }
    expect(admins).toEqual([...Array(API_LIMIT).fill(401), 429]);
  });

  it('a parameter beyond any request line Node accepts (only inject can send one) is 414 URI_TOO_LONG in the shape, logged', async () => {
    const huge = 'b'.repeat(17 * 1024);
    const before = logs.lines.length;
    const response = await app.inject({ method: 'GET', url: `/api/v1/payments/${huge}`, headers: api });
    expect(response.statusCode).toBe(414);
    expect(response.json()).toEqual(shape(414, 'URI_TOO_LONG', 'URI Too Long'));
    expect(response.body).not.toContain(huge.slice(0, 200));
    const refused = logs.lines.slice(before).find((line) => line.msg === 'request refused by the router');
    expect(refused).toMatchObject({ code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 });
    expect(JSON.stringify(refused)).not.toContain(huge.slice(0, 200));
  });
});

describe('methods a path is not served with', () => {
  it('TRACE, QUERY and PUT on GET /api/v1/payments: 405 METHOD_NOT_ALLOWED with Allow: GET, HEAD', async () => {
    for (const method of ['TRACE', 'QUERY', 'PUT', 'DELETE']) {
      const response = await app.inject({ method: method as 'GET', url: '/api/v1/payments', headers: api });
      expect(response.statusCode, method).toBe(405);
      expect(response.headers.allow, method).toBe('GET, HEAD');
      expect(response.json(), method).toEqual(shape(405, 'METHOD_NOT_ALLOWED', 'Method Not Allowed'));
    }
  });

  it('lists every method of a parametric path, and holds for the admin routes and the root', async () => {
    const endpoint = await app.inject({ method: 'PUT', url: '/api/v1/webhook-endpoints/00000000-0000-4000-8000-000000000000', headers: api });
    expect(endpoint.statusCode).toBe(405);
    expect(endpoint.headers.allow).toBe('GET, HEAD, PATCH, DELETE');
    const registrations = await app.inject({ method: 'GET', url: '/api/v1/registrations', headers: api });
    expect(registrations.statusCode).toBe(405);
    expect(registrations.headers.allow).toBe('POST');
    const run = await app.inject({ method: 'GET', url: '/admin/scheduler/run', headers: admin });
    expect(run.statusCode).toBe(405);
    expect(run.headers.allow).toBe('POST');
    const health = await app.inject({ method: 'DELETE', url: '/health' });
    expect(health.statusCode).toBe(405);
    expect(health.headers.allow).toBe('GET, HEAD');
  });

  it('is behind the scope’s token guard: 401 first', async () => {
    const response = await app.inject({ method: 'TRACE', url: '/api/v1/payments' });
    expect(response.statusCode).toBe(401);
    expect(response.headers.allow).toBeUndefined();
  });

  it('an unknown path stays 404 NOT_FOUND (behind the guard under /api/v1 and /admin); HEAD and OPTIONS as before', async () => {
    for (const [url, headers] of [
      ['/api/v1/nothing-here', api],
      ['/admin/nothing-here', admin],
      ['/nothing-here', {}],
    ] as const) {
      const response = await app.inject({ method: 'TRACE', url, headers });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual(shape(404, 'NOT_FOUND', 'Not Found'));
    }
    expect((await app.inject({ method: 'GET', url: '/api/v1/nothing-here' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/admin/nothing-here' })).statusCode).toBe(401);
    const head = await app.inject({ method: 'HEAD', url: '/api/v1/payments', headers: api });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const options = await app.inject({ method: 'OPTIONS', url: '/api/v1/payments', headers: api });
    expect(options.statusCode).toBe(404);
  });
});
