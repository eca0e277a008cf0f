// The Toss sandbox over HTTP, mounted in the app as in development (/sandbox/toss) and served by `npm run sandbox`
// (/toss): each of Toss's rules with the refusal it gives, Idempotency-Key replays and the in-flight 409, lookups,
// cancels against the balance, settlements by Korea date, faults and the ledger (docs/sandbox.md "The Toss
// sandbox").
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../../src/dev-secrets.ts';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { run } from '../helpers/process.ts';
import { waitFor } from '../helpers/service.ts';
import { freePort } from '../setup/global-setup.ts';

let database: TestDatabase;
let app: App;
let base: string;

const kst = (local: string) => new Date(`${local}+09:00`);
const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
const AUTH = basic(`${TOSS_SANDBOX_SECRET_KEY}:`);

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated' } }));
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/sandbox/toss`;
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});
beforeEach(async () => {
  await control('POST', '/_control/reset', {});
  await setClock(kst('2027-03-10T10:00:00'));
});

// biome-ignore lint/suspicious/noExplicitAny: Toss's JSON answers, read by the assertions
type Json = any;

interface Answer {
  status: number;
  body: Json;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A call to Toss's API with the sandbox's secret key (unless headers say otherwise). */
async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, on = base): Promise<Answer> {
  const init: RequestInit = { method, headers: { authorization: AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  return answer(await fetch(`${on}${path}`, init));
}

async function control(method: string, path: string, body?: unknown, on = base): Promise<Json> {
  const response = await fetch(`${on}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`control ${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

const setClock = (instant: Date) => control('PUT', '/_control/clock', { now: instant.toISOString() });
const advance = async (ms: number) => setClock(new Date(app.clock.now().getTime() + ms));
const ledger = async (): Promise<Json[]> => (await control('GET', '/_control/ledger')).entries;
const fault = (spec: Record<string, unknown>): Promise<{ id: number }> => control('POST', '/_control/faults', spec);

const WINDOW = {
  clientKey: TOSS_SANDBOX_CLIENT_KEY,
  successUrl: 'http://shop.test/toss/success?state=s1',
  failUrl: 'http://shop.test/toss/fail?state=s1',
};

async function authorize(customerKey: string, on = base): Promise<string> {
  const result = await control('POST', '/window/authorize', { ...WINDOW, customerKey, decision: 'approve' }, on);
  return result.authKey;
}

async function issueKey(customerKey: string, on = base): Promise<string> {
  const issued = await api('POST', '/v1/billing/authorizations/issue', { authKey: await authorize(customerKey, on), customerKey }, {}, on);
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  return issued.body.billingKey;
}

const order = (orderId: string, amount = 9900, customerKey = 'cust-1') => ({ customerKey, amount, orderId, orderName: '월간 플랜' });

function charge(billingKey: string, body: unknown, idempotencyKey?: string, on = base): Promise<Answer> {
  return api('POST', `/v1/billing/${encodeURIComponent(billingKey)}`, body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}, on);
}

function cancel(paymentKey: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
  return api('POST', `/v1/payments/${encodeURIComponent(paymentKey)}/cancel`, body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
}

describe('Basic auth with the secret key and a colon', () => {
  it('takes base64(secretKey + ":") and refuses anything else with Toss’s codes', async () => {
    const key = await issueKey('cust-1');
    const path = `/v1/billing/${encodeURIComponent(key)}`;
    expect(await api('POST', path, order('order-auth-1'), { authorization: '' })).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED_KEY' } });
    expect(await api('POST', path, order('order-auth-1'), { authorization: basic(TOSS_SANDBOX_SECRET_KEY) })).toMatchObject({
      status: 403,
      body: { code: 'INCORRECT_BASIC_AUTH_FORMAT' },
    });
    expect(await api('POST', path, order('order-auth-1'), { authorization: basic('test_sk_someone_else:') })).toMatchObject({
      status: 401,
      body: { code: 'UNAUTHORIZED_KEY' },
    });
    expect(await api('POST', path, order('order-auth-1'), { authorization: basic(`${TOSS_SANDBOX_SECRET_KEY}:password`) })).toMatchObject({
      status: 401,
      body: { code: 'UNAUTHORIZED_KEY' },
    });
    expect(await api('GET', '/v1/payments/orders/order-auth-1', undefined, { authorization: basic(TOSS_SANDBOX_CLIENT_KEY) })).toMatchObject({
      status: 403,
      body: { code: 'INCORRECT_BASIC_AUTH_FORMAT' },
    });
    expect(await ledger()).toEqual([]);
    expect((await charge(key, order('order-auth-1'))).status).toBe(200);
  });

  it('takes JSON bodies only', async () => {
    const key = await issueKey('cust-1');
    const form = await api('POST', `/v1/billing/${encodeURIComponent(key)}`, 'customerKey=cust-1&amount=9900', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    const text = await api('POST', `/v1/billing/${encodeURIComponent(key)}`, JSON.stringify(order('order-json-1')), { 'content-type': 'text/plain' });
    expect(text).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    const broken = await api('POST', `/v1/billing/${encodeURIComponent(key)}`, '{"customerKey":');
    expect(broken).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    expect(await ledger()).toEqual([]);
  });
});

describe('the billing-authentication window', () => {
  const query = (terms: Record<string, string>) => new URLSearchParams(terms).toString();

  it('shows Approve and Decline; Approve redirects (303) to successUrl with customerKey and an authKey, keeping its query', async () => {
    const page = await fetch(`${base}/window?${query({ ...WINDOW, customerKey: 'cust-window' })}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="approve"');
    expect(html).toContain('id="decline"');
    expect(html).toContain('action="/sandbox/toss/window/decision"');

    const approved = await fetch(`${base}/window/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...WINDOW, customerKey: 'cust-window', decision: 'approve' }),
    });
    expect(approved.status).toBe(303);
    const location = new URL(approved.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://shop.test/toss/success');
    expect(Object.fromEntries(location.searchParams)).toEqual({ state: 's1', customerKey: 'cust-window', authKey: expect.stringMatching(/^bln_/) });
    const issued = await api('POST', '/v1/billing/authorizations/issue', { authKey: location.searchParams.get('authKey'), customerKey: 'cust-window' });
    expect(issued.status).toBe(200);
  });

  it('Decline redirects to failUrl with PAY_PROCESS_CANCELED; the JSON decision can fail with a chosen code', async () => {
    const declined = await fetch(`${base}/window/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...WINDOW, customerKey: 'cust-window', decision: 'decline' }),
    });
    const location = new URL(declined.headers.get('location')!);
    expect(location.pathname).toBe('/toss/fail');
    expect(location.searchParams.get('code')).toBe('PAY_PROCESS_CANCELED');
    expect(location.searchParams.get('message')).toBeTruthy();

    const failed = await control('POST', '/window/authorize', {
      ...WINDOW,
      customerKey: 'cust-window',
      decision: 'decline',
      code: 'INVALID_CARD_EXPIRATION',
      message: 'expired',
    });
    expect(failed.authKey).toBeUndefined();
    expect(new URL(failed.redirectUrl).searchParams.get('code')).toBe('INVALID_CARD_EXPIRATION');
  });

  it('refuses another client key, a malformed customerKey or missing URLs', async () => {
    for (const terms of [
      { ...WINDOW, customerKey: 'cust-window', clientKey: 'test_ck_other' },
      { ...WINDOW, customerKey: 'x' },
      { ...WINDOW, customerKey: 'has space' },
      { clientKey: WINDOW.clientKey, successUrl: WINDOW.successUrl, customerKey: 'cust-window' },
    ]) {
      const page = await fetch(`${base}/window?${query(terms)}`);
      expect(page.status, JSON.stringify(terms)).toBe(400);
    }
  });
});

describe('POST /v1/billing/authorizations/issue', () => {
  it('answers the billing key object for the authKey’s customer', async () => {
    const authKey = await authorize('cust-key');
    const issued = await api('POST', '/v1/billing/authorizations/issue', { authKey, customerKey: 'cust-key' });
    expect(issued).toMatchObject({
      status: 200,
      body: {
        mId: expect.any(String),
        customerKey: 'cust-key',
        authenticatedAt: '2027-03-10T10:00:00+09:00',
        method: '카드',
        billingKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}=$/),
        card: {
          issuerCode: expect.stringMatching(/^\w{2}$/),
          acquirerCode: expect.stringMatching(/^\w{2}$/),
          number: expect.stringMatching(/^\d{8}\*{4}\d{3}\*$/),
          cardType: '신용',
          ownerType: '개인',
        },
      },
    });
  });

  it('an authKey is single-use and bound to its customerKey', async () => {
    const authKey = await authorize('cust-key');
    const other = await api('POST', '/v1/billing/authorizations/issue', { authKey, customerKey: 'cust-other' });
    expect(other).toMatchObject({ status: 400, body: { code: 'NOT_MATCHES_CUSTOMER_KEY' } });
    expect((await api('POST', '/v1/billing/authorizations/issue', { authKey, customerKey: 'cust-key' })).status).toBe(200);
    const again = await api('POST', '/v1/billing/authorizations/issue', { authKey, customerKey: 'cust-key' });
    expect(again).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    const unknown = await api('POST', '/v1/billing/authorizations/issue', { authKey: 'bln_never_issued', customerKey: 'cust-key' });
    expect(unknown).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    expect(await api('POST', '/v1/billing/authorizations/issue', { customerKey: 'cust-key' })).toMatchObject({
      status: 400,
      body: { code: 'INVALID_REQUEST' },
    });
  });
});

describe('POST /v1/billing/{billingKey}', () => {
  it('approves at once: a DONE Payment, booked in the ledger', async () => {
    const key = await issueKey('cust-1');
    const paid = await charge(key, order('order-done-1'));
    expect(paid).toMatchObject({
      status: 200,
      body: {
        paymentKey: expect.any(String),
        orderId: 'order-done-1',
        orderName: '월간 플랜',
        status: 'DONE',
        method: '카드',
        type: 'BILLING',
        currency: 'KRW',
        totalAmount: 9900,
        balanceAmount: 9900,
        suppliedAmount: 9000,
        vat: 900,
        approvedAt: '2027-03-10T10:00:00+09:00',
        card: { amount: 9900, installmentPlanMonths: 0, approveNo: expect.stringMatching(/^\d{8}$/) },
        cancels: null,
        failure: null,
      },
    });
    expect(await ledger()).toEqual([
      expect.objectContaining({ type: 'CHARGE', paymentKey: paid.body.paymentKey, orderId: 'order-done-1', customerKey: 'cust-1', amount: 9900 }),
    ]);
  });

  it('refuses another customerKey, an unknown key, less than 100 won and amounts that are not JSON integers', async () => {
    const key = await issueKey('cust-1');
    expect(await charge(key, order('order-rule-1', 9900, 'cust-2'))).toMatchObject({ status: 400, body: { code: 'NOT_MATCHES_CUSTOMER_KEY' } });
    expect(await charge('bm90LWEta2V5LWF0LWFsbC1ub3QtYS1rZXktYXQtYWxsLg=', order('order-rule-1'))).toMatchObject({
      status: 400,
      body: { code: 'INVALID_BILL_KEY_REQUEST' },
    });
    expect(await charge(key, order('order-rule-1', 99))).toMatchObject({ status: 400, body: { code: 'BELOW_MINIMUM_AMOUNT' } });
    for (const amount of ['9900', 9900.5, true, null, -100]) {
      expect(await charge(key, { ...order('order-rule-1'), amount }), String(amount)).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    }
    expect(await charge(key, { customerKey: 'cust-1', amount: 9900, orderId: 'order-rule-1' })).toMatchObject({
      status: 400,
      body: { code: 'INVALID_REQUEST' },
    });
    expect(await ledger()).toEqual([]);
    expect((await charge(key, order('order-rule-1', 100))).status).toBe(200);
  });

  it('takes an orderId of 6 to 64 characters of A-Z a-z 0-9 - _ =', async () => {
    const key = await issueKey('cust-1');
    for (const orderId of ['abc12', 'x'.repeat(65), 'order 1234', 'order.1234', 'order/1234', '주문번호123']) {
      expect(await charge(key, order(orderId)), orderId).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    }
    for (const orderId of ['abc123', 'A'.repeat(64), 'Ord_er-1=']) expect((await charge(key, order(orderId))).status, orderId).toBe(200);
  });

  it('approves an orderId once: the same charge again is ALREADY_PROCESSED_PAYMENT, another one DUPLICATED_ORDER_ID', async () => {
    const key = await issueKey('cust-1');
    const other = await issueKey('cust-1');
    expect((await charge(key, order('order-once-1'))).status).toBe(200);
    expect(await charge(key, order('order-once-1'))).toMatchObject({ status: 400, body: { code: 'ALREADY_PROCESSED_PAYMENT' } });
    expect(await charge(key, order('order-once-1', 5000))).toMatchObject({ status: 400, body: { code: 'DUPLICATED_ORDER_ID' } });
    expect(await charge(other, order('order-once-1'))).toMatchObject({ status: 400, body: { code: 'DUPLICATED_ORDER_ID' } });
    expect((await ledger()).filter((e) => e.orderId === 'order-once-1')).toHaveLength(1);
  });
});

describe('Idempotency-Key', () => {
  it('a replay answers the first answer (status and body) and books nothing more', async () => {
    const key = await issueKey('cust-1');
    const first = await charge(key, order('order-idem-1'), 'idem-1');
    expect(first.status).toBe(200);
    const replay = await charge(key, order('order-idem-1'), 'idem-1');
    expect(replay).toEqual(first);
    // The key decides, not the body: another body under the same key still gets the first answer.
    expect(await charge(key, order('order-idem-2'), 'idem-1')).toEqual(first);
    expect(await ledger()).toHaveLength(1);
    // A refusal is an answer too.
    const refused = await charge(key, order('order-idem-3', 50), 'idem-refused');
    expect(refused).toMatchObject({ status: 400, body: { code: 'BELOW_MINIMUM_AMOUNT' } });
    expect(await charge(key, order('order-idem-3'), 'idem-refused')).toEqual(refused);
    // Without a key, the same charge is refused as processed already.
    expect(await charge(key, order('order-idem-1'))).toMatchObject({ status: 400, body: { code: 'ALREADY_PROCESSED_PAYMENT' } });
  });

  it('is kept 15 days from the first request', async () => {
    const key = await issueKey('cust-1');
    const first = await charge(key, order('order-idem-15'), 'idem-15');
    await advance(15 * 24 * 3600_000 - 1000);
    expect(await charge(key, order('order-idem-15'), 'idem-15')).toEqual(first);
    await advance(1000);
    expect(await charge(key, order('order-idem-15'), 'idem-15')).toMatchObject({ status: 400, body: { code: 'ALREADY_PROCESSED_PAYMENT' } });
    expect(await ledger()).toHaveLength(1);
  });

  it('the same key while the first call runs is 409 IDEMPOTENT_REQUEST_PROCESSING; then the first answer is replayed', async () => {
    const key = await issueKey('cust-1');
    const held = await fault({ operation: 'CHARGE', kind: 'latency', until: 'released' });
    const first = charge(key, order('order-flight-1'), 'idem-flight');
    await waitFor('the first charge held by the sandbox', async () => (await control('GET', '/_control/held')).held.length === 1);
    expect(await charge(key, order('order-flight-1'), 'idem-flight')).toMatchObject({ status: 409, body: { code: 'IDEMPOTENT_REQUEST_PROCESSING' } });
    expect(await ledger()).toEqual([]);
    expect(await control('POST', '/_control/release', { faultId: held.id })).toEqual({ released: 1 });
    const answered = await first;
    expect(answered).toMatchObject({ status: 200, body: { status: 'DONE' } });
    expect(await charge(key, order('order-flight-1'), 'idem-flight')).toEqual(answered);
    expect(await ledger()).toHaveLength(1);
  });

  it('an answer lost after the charge was booked is replayed; a call never processed is processed when sent again', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'CHARGE', kind: 'reset', booked: true });
    await expect(charge(key, order('order-lost-1'), 'idem-lost')).rejects.toThrow();
    const retried = await charge(key, order('order-lost-1'), 'idem-lost');
    expect(retried).toMatchObject({ status: 200, body: { orderId: 'order-lost-1', status: 'DONE' } });
    expect((await ledger()).map((e) => e.paymentKey)).toEqual([retried.body.paymentKey]);

    await fault({ operation: 'CHARGE', kind: 'http_500' });
    expect(await charge(key, order('order-500-1'), 'idem-500')).toMatchObject({ status: 500, body: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' } });
    expect((await charge(key, order('order-500-1'), 'idem-500')).status).toBe(200);
    expect(await ledger()).toHaveLength(2);
  });

  it('a decline that is no processed call’s answer (our credentials, the first call running, Toss failing) is not replayed', async () => {
    const key = await issueKey('cust-1');
    for (const [code, status] of [
      ['IDEMPOTENT_REQUEST_PROCESSING', 409],
      ['UNAUTHORIZED_KEY', 401],
      ['FAILED_INTERNAL_SYSTEM_PROCESSING', 500],
    ] as const) {
      await fault({ operation: 'CHARGE', kind: 'decline', code });
      expect(await charge(key, order(`order-${status}-x`), `idem-${code}`)).toMatchObject({ status, body: { code } });
      expect(await charge(key, order(`order-${status}-x`), `idem-${code}`)).toMatchObject({ status: 200, body: { status: 'DONE' } });
    }
    // A card's refusal is an answer: replayed.
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'REJECT_CARD_PAYMENT' });
    const refused = await charge(key, order('order-refused-x'), 'idem-refused-x');
    expect(refused).toMatchObject({ status: 403, body: { code: 'REJECT_CARD_PAYMENT' } });
    expect(await charge(key, order('order-refused-x'), 'idem-refused-x')).toEqual(refused);
    expect(await ledger()).toHaveLength(3);
  });

  it('refuses a key longer than 300 characters; is per path (a cancel under a charge’s key is its own call)', async () => {
    const key = await issueKey('cust-1');
    expect(await charge(key, order('order-long-1'), 'k'.repeat(301))).toMatchObject({ status: 400, body: { code: 'INVALID_IDEMPOTENCY_KEY' } });
    const paid = await charge(key, order('order-long-1'), 'k'.repeat(300));
    expect(paid.status).toBe(200);
    const cancelled = await cancel(paid.body.paymentKey, { cancelReason: 'asked' }, 'k'.repeat(300));
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'CANCELED' } });
  });
});

describe('lookups', () => {
  it('by orderId and by paymentKey; 404 NOT_FOUND_PAYMENT otherwise', async () => {
    const key = await issueKey('cust-1');
    const paid = await charge(key, order('order-look-1'));
    expect(await api('GET', '/v1/payments/orders/order-look-1')).toEqual(paid);
    expect(await api('GET', `/v1/payments/${encodeURIComponent(paid.body.paymentKey)}`)).toEqual(paid);
    expect(await api('GET', '/v1/payments/orders/order-never')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND_PAYMENT' } });
    expect(await api('GET', '/v1/payments/tbillnever')).toMatchObject({ status: 404, body: { code: 'NOT_FOUND_PAYMENT' } });
  });

  it('a card’s refusal is kept ABORTED with its failure, nothing booked; the orderId stays free', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'REJECT_CARD_COMPANY', message: 'refused by the issuer' });
    expect(await charge(key, order('order-refused-1'))).toMatchObject({ status: 403, body: { code: 'REJECT_CARD_COMPANY' } });
    expect(await api('GET', '/v1/payments/orders/order-refused-1')).toMatchObject({
      status: 200,
      body: { status: 'ABORTED', approvedAt: null, failure: { code: 'REJECT_CARD_COMPANY', message: 'refused by the issuer' } },
    });
    expect(await ledger()).toEqual([]);
    const paid = await charge(key, order('order-refused-1'));
    expect(paid.status).toBe(200);
    expect(await api('GET', '/v1/payments/orders/order-refused-1')).toEqual(paid);
  });
});

describe('POST /v1/payments/{paymentKey}/cancel', () => {
  it('cancels partially then in full against balanceAmount, one request per second, never more than the balance', async () => {
    const key = await issueKey('cust-1');
    const { paymentKey } = (await charge(key, order('order-cancel-1', 10_000))).body;
    const partial = await cancel(paymentKey, { cancelReason: 'one seat less', cancelAmount: 3000 });
    expect(partial).toMatchObject({
      status: 200,
      body: {
        status: 'PARTIAL_CANCELED',
        totalAmount: 10_000,
        balanceAmount: 7000,
        cancels: [{ cancelAmount: 3000, refundableAmount: 7000, cancelReason: 'one seat less', canceledAt: '2027-03-10T10:00:00+09:00', cancelStatus: 'DONE' }],
      },
    });
    expect(await cancel(paymentKey, { cancelReason: 'again', cancelAmount: 1000 })).toMatchObject({
      status: 403,
      body: { code: 'FORBIDDEN_CONSECUTIVE_REQUEST' },
    });
    await advance(1000);
    expect(await cancel(paymentKey, { cancelReason: 'too much', cancelAmount: 7001 })).toMatchObject({ status: 403, body: { code: 'NOT_CANCELABLE_AMOUNT' } });
    await advance(1000);
    const full = await cancel(paymentKey, { cancelReason: 'the rest' });
    expect(full).toMatchObject({ status: 200, body: { status: 'CANCELED', balanceAmount: 0 } });
    expect(full.body.cancels.map((c: Json) => [c.cancelAmount, c.refundableAmount])).toEqual([
      [3000, 7000],
      [7000, 0],
    ]);
    await advance(1000);
    expect(await cancel(paymentKey, { cancelReason: 'once more' })).toMatchObject({ status: 400, body: { code: 'ALREADY_CANCELED_PAYMENT' } });
    expect((await ledger()).map((e) => [e.type, e.amount])).toEqual([
      ['CHARGE', 10_000],
      ['CANCEL', 3000],
      ['CANCEL', 7000],
    ]);
    expect(await api('GET', '/v1/payments/orders/order-cancel-1')).toEqual(full);
  });

  it('a replay under the same Idempotency-Key is not a second request: answered as the first, within the second', async () => {
    const key = await issueKey('cust-1');
    const { paymentKey } = (await charge(key, order('order-cancel-2', 10_000))).body;
    const first = await cancel(paymentKey, { cancelReason: 'refund', cancelAmount: 2000 }, 'refund-1');
    expect(first.status).toBe(200);
    expect(await cancel(paymentKey, { cancelReason: 'refund', cancelAmount: 2000 }, 'refund-1')).toEqual(first);
    expect((await ledger()).filter((e) => e.type === 'CANCEL')).toHaveLength(1);
  });

  it('refuses an unknown payment, a missing reason, a refused payment and a non-integer amount', async () => {
    const key = await issueKey('cust-1');
    expect(await cancel('tbillnever', { cancelReason: 'x' })).toMatchObject({ status: 404, body: { code: 'NOT_FOUND_PAYMENT' } });
    const { paymentKey } = (await charge(key, order('order-cancel-3'))).body;
    expect(await cancel(paymentKey, {})).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    expect(await cancel(paymentKey, { cancelReason: 'x', cancelAmount: '100' })).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'INVALID_STOPPED_CARD' });
    expect(await charge(key, order('order-cancel-4'))).toMatchObject({ status: 400, body: { code: 'INVALID_STOPPED_CARD' } });
    const aborted = (await api('GET', '/v1/payments/orders/order-cancel-4')).body.paymentKey;
    expect(await cancel(aborted, { cancelReason: 'x' })).toMatchObject({ status: 403, body: { code: 'NOT_CANCELABLE_PAYMENT' } });
  });
});

describe('GET /v1/settlements', () => {
  it('lists approvals and cancels by their Korea date (soldDate or paidOutDate), paged', async () => {
    const key = await issueKey('cust-1');
    await setClock(kst('2027-03-10T23:59:00'));
    const march10 = (await charge(key, order('order-settle-1', 10_000))).body;
    // 2027-03-10T15:30Z is already the 11th in Korea.
    await setClock(new Date('2027-03-10T15:30:00Z'));
    const march11 = (await charge(key, order('order-settle-2', 20_000))).body;
    await cancel(march10.paymentKey, { cancelReason: 'refund', cancelAmount: 4000 });

    const day10 = await api('GET', '/v1/settlements?startDate=2027-03-10&endDate=2027-03-10');
    expect(day10).toMatchObject({
      status: 200,
      body: [{ paymentKey: march10.paymentKey, orderId: 'order-settle-1', amount: 10_000, soldDate: '2027-03-10', cancel: null }],
    });
    expect(day10.body).toHaveLength(1);
    const line = day10.body[0];
    expect(line.payOutAmount).toBe(line.amount - line.fees[0].fee);
    expect(line.supplyAmount + line.vat).toBe(line.fees[0].fee);

    const day11 = await api('GET', '/v1/settlements?startDate=2027-03-11&endDate=2027-03-11');
    expect(day11.body.map((l: Json) => [l.orderId, l.amount, l.cancel?.cancelAmount ?? null])).toEqual([
      ['order-settle-2', 20_000, null],
      ['order-settle-1', -4000, 4000],
    ]);
    expect(day11.body[1].approvedAt).toBe('2027-03-10T23:59:00+09:00');
    expect(march11.approvedAt).toBe('2027-03-11T00:30:00+09:00');

    const paidOut = await api('GET', '/v1/settlements?startDate=2027-03-12&endDate=2027-03-13&dateType=paidOutDate');
    expect(paidOut.body.map((l: Json) => l.paidOutDate)).toEqual(['2027-03-12', '2027-03-13', '2027-03-13']);
    const page2 = await api('GET', '/v1/settlements?startDate=2027-03-01&endDate=2027-03-31&page=2&size=2');
    expect(page2.body.map((l: Json) => l.amount)).toEqual([-4000]);
  });

  it('refuses missing or malformed dates and sizes', async () => {
    for (const query of [
      '',
      'startDate=2027-03-10',
      'startDate=2027-03-10&endDate=2027-03-09',
      'startDate=2027-02-30&endDate=2027-03-01',
      'startDate=2027-03-01&endDate=2027-03-02&size=0',
      'startDate=2027-03-01&endDate=2027-03-02&dateType=approvedAt',
    ]) {
      expect(await api('GET', `/v1/settlements?${query}`), query).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
    }
    expect(await api('GET', '/v1/settlements?startDate=2027-03-10&endDate=2027-03-10', undefined, { authorization: '' })).toMatchObject({ status: 401 });
  });
});

describe('faults', () => {
  it('declines with a chosen code and Toss’s status for it, nothing booked', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'INVALID_CARD_EXPIRATION' });
    expect(await charge(key, order('order-fault-1'))).toMatchObject({ status: 400, body: { code: 'INVALID_CARD_EXPIRATION' } });
    await fault({ operation: 'CHARGE', kind: 'decline' });
    expect(await charge(key, order('order-fault-1'))).toMatchObject({ status: 403, body: { code: 'REJECT_CARD_PAYMENT' } });
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'UNAUTHORIZED_KEY' });
    expect(await charge(key, order('order-fault-1'))).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED_KEY' } });
    // A configuration error is not a card's refusal: no payment is kept for it.
    expect(await api('GET', '/v1/payments/orders/order-fault-1')).toMatchObject({ status: 200, body: { failure: { code: 'REJECT_CARD_PAYMENT' } } });
    expect(await ledger()).toEqual([]);
  });

  it('a malformed body and a dropped connection after the charge is booked; a 5xx and a reset before', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'CHARGE', kind: 'malformed' });
    const malformed = await fetch(`${base}/v1/billing/${encodeURIComponent(key)}`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify(order('order-fault-2')),
    });
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();
    await fault({ operation: 'CHARGE', kind: 'truncated' });
    await expect(charge(key, order('order-fault-3'))).rejects.toThrow();
    await fault({ operation: 'CHARGE', kind: 'reset' });
    await expect(charge(key, order('order-fault-4'))).rejects.toThrow();
    await fault({ operation: 'CHARGE', kind: 'http_500' });
    expect(await charge(key, order('order-fault-5'))).toMatchObject({ status: 500 });
    expect((await ledger()).map((e) => e.orderId)).toEqual(['order-fault-2', 'order-fault-3']);
  });

  it('a mismatched approval, latency, lookups and cancels take faults too; the queue is listed and cleared', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'CHARGE', kind: 'mismatch', field: 'amount' });
    expect(await charge(key, order('order-fault-6'))).toMatchObject({ status: 200, body: { totalAmount: 9901 } });
    await fault({ operation: 'LOOKUP', kind: 'latency', latencyMs: 20 });
    expect(await api('GET', '/v1/payments/orders/order-fault-6')).toMatchObject({ status: 200, body: { totalAmount: 9900 } });
    await fault({ operation: 'LOOKUP', kind: 'http_500' });
    expect(await api('GET', '/v1/payments/orders/order-fault-6')).toMatchObject({ status: 500 });
    await fault({ operation: 'CANCEL', kind: 'decline', code: 'NOT_CANCELABLE_PAYMENT' });
    const paymentKey = (await api('GET', '/v1/payments/orders/order-fault-6')).body.paymentKey;
    expect(await cancel(paymentKey, { cancelReason: 'x' })).toMatchObject({ status: 403, body: { code: 'NOT_CANCELABLE_PAYMENT' } });

    await fault({ operation: 'SETTLEMENTS', kind: 'http_500', count: 3 });
    expect((await control('GET', '/_control/faults')).faults).toEqual([expect.objectContaining({ operation: 'SETTLEMENTS', count: 3 })]);
    expect(await control('DELETE', '/_control/faults')).toEqual({ cleared: 1 });
    const bad = await fetch(`${base}/_control/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'decline', operation: 'CONFIRM_PAYMENT' }),
    });
    expect(bad.status).toBe(400);
  });
});

describe('controls', () => {
  it('mints billing keys without a window, which charge under every rule; a reset forgets them', async () => {
    const minted = await control('POST', '/_control/billing-keys', { customerKeys: ['bulk-1', 'bulk-2'] });
    expect(minted.keys).toEqual([
      { billingKey: expect.stringMatching(/=$/), customerKey: 'bulk-1' },
      { billingKey: expect.stringMatching(/=$/), customerKey: 'bulk-2' },
    ]);
    const [first, second] = minted.keys;
    expect((await charge(first.billingKey, order('order-bulk-1', 9900, 'bulk-1'))).status).toBe(200);
    expect(await charge(second.billingKey, order('order-bulk-2', 9900, 'bulk-1'))).toMatchObject({ status: 400, body: { code: 'NOT_MATCHES_CUSTOMER_KEY' } });
    const bad = await fetch(`${base}/_control/billing-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerKeys: ['x'] }),
    });
    expect(bad.status).toBe(400);
    await control('POST', '/_control/reset', {});
    expect(await ledger()).toEqual([]);
    expect(await charge(first.billingKey, order('order-bulk-3', 9900, 'bulk-1'))).toMatchObject({ status: 400, body: { code: 'INVALID_BILL_KEY_REQUEST' } });
  });
});

describe('mounted beside the Danal sandbox', () => {
  it('shares the app’s clock with it, and keeps what it issued across a restart', async () => {
    await control('PUT', '/_control/clock', { now: '2027-05-01T00:00:00Z' }, base.replace(/\/toss$/, ''));
    expect((await control('GET', '/_control/clock')).now).toBe('2027-05-01T00:00:00.000Z');
    const key = await issueKey('cust-restart');
    const paid = await charge(key, order('order-restart-1', 10_000, 'cust-restart'));
    await app.close();
    ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated' } }));
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/sandbox/toss`;
    await setClock(new Date('2027-05-01T00:00:05Z'));
    expect(await api('GET', '/v1/payments/orders/order-restart-1')).toEqual(paid);
    expect((await charge(key, order('order-restart-2', 10_000, 'cust-restart'))).status).toBe(200);
    expect((await cancel(paid.body.paymentKey, { cancelReason: 'after restart' })).status).toBe(200);
    expect((await ledger()).map((e) => e.type)).toEqual(['CHARGE', 'CHARGE', 'CANCEL']);
  });
});

describe('npm run sandbox', () => {
  it('serves the Toss sandbox under /toss beside Danal’s, on one clock', async () => {
    const port = await freePort();
    const sandbox = run('src/sandbox/server.ts', { SANDBOX_PORT: String(port), HOST: '127.0.0.1' });
    try {
      const root = `http://127.0.0.1:${port}`;
      await waitFor('npm run sandbox to listen', async () => (await fetch(`${root}/toss/_control/clock`).catch(() => undefined))?.status === 200);
      await control('PUT', '/_control/clock', { now: '2027-06-01T01:00:00Z' }, root);
      expect((await control('GET', '/toss/_control/clock', undefined, root)).now).toBe('2027-06-01T01:00:00.000Z');
      const key = await issueKey('cust-standalone', `${root}/toss`);
      const paid = await charge(key, order('order-standalone', 9900, 'cust-standalone'), 'idem-standalone', `${root}/toss`);
      expect(paid).toMatchObject({ status: 200, body: { status: 'DONE', approvedAt: '2027-06-01T10:00:00+09:00' } });
    } finally {
      sandbox.child.kill('SIGTERM');
      expect(await sandbox.exit).toBe(0);
    }
  });
});

describe('billing key deletion (an assumed call: docs/sandbox.md "The Toss sandbox")', () => {
  it('DELETE /v1/billing/{billingKey} deletes the key: charges with it are then refused INVALID_BILL_KEY_REQUEST, and so is a second deletion', async () => {
    const key = await issueKey('cust-1');
    const path = `/v1/billing/${encodeURIComponent(key)}`;
    expect(await api('DELETE', path, undefined, { authorization: '' })).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED_KEY' } });
    expect(await api('DELETE', path)).toMatchObject({ status: 200, body: { customerKey: 'cust-1', deletedAt: '2027-03-10T10:00:00+09:00' } });
    expect(await charge(key, order('order-del-1'))).toMatchObject({ status: 400, body: { code: 'INVALID_BILL_KEY_REQUEST' } });
    expect(await api('DELETE', path)).toMatchObject({ status: 400, body: { code: 'INVALID_BILL_KEY_REQUEST' } });
    expect(await ledger()).toEqual([]);
  });

  it('takes faults like every call', async () => {
    const key = await issueKey('cust-1');
    await fault({ operation: 'DELETE_BILLING_KEY', kind: 'http_500' });
    expect(await api('DELETE', `/v1/billing/${encodeURIComponent(key)}`)).toMatchObject({ status: 500 });
    expect((await charge(key, order('order-del-2'))).status).toBe(200);
  });
});
