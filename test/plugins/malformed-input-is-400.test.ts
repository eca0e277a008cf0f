// Malformed input is a 400, never a 500: a 36-character id that is not a UUID, a tampered cursor, a year-0000 date
// filter and NUL characters in strings are all 400 VALIDATION_ERROR in the error shape. (Regression test for issue
// #12 defect 11.)
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { adminHeaders } from '../helpers/billing.ts';

const running = useRunningApp();
const NOT_A_UUID = '-'.repeat(36);
const ALMOST = 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz';

const ID_ROUTES = [
  ['GET', '/api/v1/registrations/:id', apiHeaders],
  ['GET', '/api/v1/orders/:id', apiHeaders],
  ['GET', '/api/v1/subscriptions/:id', apiHeaders],
  ['POST', '/api/v1/subscriptions/:id/cancel', apiHeaders],
  ['GET', '/api/v1/payments/:id', apiHeaders],
  ['GET', '/admin/subscriptions/:id', adminHeaders],
  ['PATCH', '/admin/subscriptions/:id', adminHeaders],
  ['POST', '/admin/subscriptions/:id/charge', adminHeaders],
  ['POST', '/admin/subscriptions/:id/pause', adminHeaders],
  ['POST', '/admin/subscriptions/:id/resume', adminHeaders],
  ['POST', '/admin/subscriptions/:id/cancel', adminHeaders],
  ['GET', '/admin/payments/:id', adminHeaders],
  ['POST', '/admin/payments/:id/resolve', adminHeaders],
  ['POST', '/admin/payments/:id/cancel', adminHeaders],
] as const;

function expect400(response: { statusCode: number; json: () => unknown }) {
  expect(response.statusCode).toBe(400);
  expect(response.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request' });
}

const cursor = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');

describe('malformed input is a 400, never a 500', () => {
  it.each(ID_ROUTES)('%s %s with a 36-character id that is not a UUID', async (method, route, headers) => {
    for (const id of [NOT_A_UUID, ALMOST]) {
      const response = await running.app.inject({
        method,
        url: route.replace(':id', id),
        headers: { ...headers, 'idempotency-key': `k-${id.length}` },
        ...(method === 'GET' ? {} : { payload: { reason: 'r' } }),
      });
      expect400(response);
    }
  });

  it.each([
    ['a dashed id', cursor(['2027-01-01T00:00:00.000Z', NOT_A_UUID])],
    ['a year-0000 time', cursor(['0000-01-01T00:00:00.000Z', '00000000-0000-4000-8000-000000000000'])],
    ['not JSON', 'bm90IGpzb24'],
  ])('a tampered cursor (%s)', async (_name, value) => {
    expect400(await running.app.inject({ method: 'GET', url: `/api/v1/subscriptions?cursor=${value}`, headers: apiHeaders }));
    expect400(await running.app.inject({ method: 'GET', url: `/admin/payments?cursor=${value}`, headers: adminHeaders }));
  });

  it.each(['createdFrom', 'createdTo'])('a year-0000 %s filter', async (name) => {
    expect400(await running.app.inject({ method: 'GET', url: `/admin/subscriptions?${name}=0000-01-01T00:00:00Z`, headers: adminHeaders }));
    expect400(await running.app.inject({ method: 'GET', url: `/admin/payments?${name}=0000-06-01T00:00:00Z`, headers: adminHeaders }));
  });

  it('NUL characters in a body, a query string or a form post', async () => {
    expect400(
      await running.app.inject({
        method: 'POST',
        url: '/api/v1/registrations',
        headers: apiHeaders,
        payload: { userId: 'u\u0000', method: 'CARD', amount: 1000, orderName: 'Plan' },
      }),
    );
    expect400(await running.app.inject({ method: 'GET', url: '/api/v1/subscriptions?userId=a%00b', headers: apiHeaders }));
    expect400(
      await running.app.inject({
        method: 'POST',
        url: '/billing/fail',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        payload: 'state=abc%00&code=X',
      }),
    );
    expect(await running.app.db.registration.count()).toBe(0);
  });
});
