// The sandbox's hosted window and controls, mounted in the app as in development (`npm start` with no gateway).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: App;
let base: string;

const terms = {
  paymentsMethod: 'CARD',
  merchantId: 'TEST_MERCHANT',
  orderId: 'reg-window-1',
  orderName: '프리미엄 <b>플랜</b>',
  amount: '15000',
  userId: 'user-7',
  successUrl: 'http://shop.test/billing/success?state=abc',
  failUrl: 'http://shop.test/billing/fail?state=abc',
  issueKeyOnly: 'false',
};

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/sandbox`;
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('hosted window', () => {
  it('shows the terms, escaped, with Approve and Decline', async () => {
    const response = await fetch(`${base}/window?${new URLSearchParams(terms)}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('15,000 KRW');
    expect(html).toContain('프리미엄 &lt;b&gt;플랜&lt;/b&gt;');
    expect(html).not.toContain('<b>플랜</b>');
    expect(html).toContain('id="approve"');
    expect(html).toContain('id="decline"');
  });

  it('Approve redirects (303) to successUrl with transactionId, orderId, code, method and amount, keeping its query', async () => {
    const response = await fetch(`${base}/window/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...terms, decision: 'approve' }),
    });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://shop.test/billing/success');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      state: 'abc',
      transactionId: expect.stringMatching(/^W[A-Z0-9]{17}$/),
      orderId: 'reg-window-1',
      code: 'SUCCESS',
      method: 'CARD',
      amount: '15000',
    });
  });

  it('Decline redirects to failUrl with a code and message', async () => {
    const response = await fetch(`${base}/window/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...terms, decision: 'decline' }),
    });
    const location = new URL(response.headers.get('location')!);
    expect(location.pathname).toBe('/billing/fail');
    expect(location.searchParams.get('code')).toBe('USER_CANCEL');
    expect(location.searchParams.get('message')).toBeTruthy();
  });

  it('can deliver the result as a form POST instead of a redirect', async () => {
    const response = await fetch(`${base}/window/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...terms, decision: 'approve', redirect: 'POST' }),
    });
    const html = await response.text();
    expect(html).toContain('method="post" action="http://shop.test/billing/success?state=abc"');
    expect(html).toMatch(/name="transactionId" value="W[A-Z0-9]{17}"/);
  });

  it('refuses a window for another merchant or with missing terms', async () => {
    const other = await fetch(`${base}/window?${new URLSearchParams({ ...terms, merchantId: 'OTHER' })}`);
    expect(other.status).toBe(400);
    const { successUrl: _omit, ...missing } = terms;
    const incomplete = await fetch(`${base}/window?${new URLSearchParams(missing)}`);
    expect(incomplete.status).toBe(400);
    expect(await incomplete.text()).toContain('successUrl is required');
  });
});

describe('mounted sandbox', () => {
  it('is what app.gateway calls in development, over HTTP on the app’s own port', async () => {
    const authorize = await fetch(`${base}/window/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...terms, orderId: 'reg-mounted', decision: 'approve' }),
    });
    const { transactionId } = (await authorize.json()) as { transactionId: string };
    const result = await app.gateway.issueBillingKey({ method: 'CARD', transactionId });
    expect(result.outcome).toBe('SUCCEEDED');
    const ledger = (await (await fetch(`${base}/_control/ledger`)).json()) as { entries: Array<{ orderId: string }> };
    expect(ledger.entries.map((e) => e.orderId)).toContain('reg-mounted');
  });

  it('shares the app clock, which cannot be set unless CLOCK=simulated', async () => {
    const put = await fetch(`${base}/_control/clock`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ now: '2030-01-01T00:00:00Z' }),
    });
    expect(put.status).toBe(409);
    expect(await put.json()).toMatchObject({ code: 'CLOCK_NOT_SIMULATED' });
  });

  it('refuses malformed fault specifications', async () => {
    const bad = await fetch(`${base}/_control/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'meteor' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('kind must be one of') });
  });
});

describe('mounted sandbox with CLOCK=simulated', () => {
  it('follows the simulated clock the app sets', async () => {
    const simulatedDb = await createTestDatabase();
    const simulated = await buildTestApp(simulatedDb.url, { env: { CLOCK: 'simulated' } });
    try {
      const put = await simulated.inject({ method: 'PUT', url: '/sandbox/_control/clock', payload: { now: '2030-01-01T00:00:00Z' } });
      expect(put.statusCode).toBe(200);
      expect(simulated.clock.now().toISOString()).toBe('2030-01-01T00:00:00.000Z');
    } finally {
      await simulated.close();
      await simulatedDb.drop();
    }
  });
});
