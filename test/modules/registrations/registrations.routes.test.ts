// Registrations end to end through the public routes: the merchant API, the sandbox window, and the browser
// routes, against real PostgreSQL and the mounted sandbox over HTTP.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import type { SimulatedClock } from '../../../src/lib/clock.ts';
import { readBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { apiHeaders, startTestApp, TEST_ADMIN_TOKEN, TEST_API_KEY } from '../../helpers/app.ts';
import { createRegistration, decideWindow, follow, sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { loadConfig } from '../../../src/config.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

let database: TestDatabase;
let app: App;
let baseUrl: string;
let clock: SimulatedClock;

const CARD = { userId: 'user-1', method: 'CARD', amount: 9900, orderName: '프리미엄 플랜' };
const MOBILE = { userId: 'user-2', method: 'MOBILE', amount: 5500, orderName: 'Phone plan', itemCode: 'ITEM01', userPhoneNumber: '010-9876-5432' };

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app, baseUrl } = await startTestApp(database.url, { env: { CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) } }));
  clock = app.clock as SimulatedClock;
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(async () => {
  await truncateAll(app.db);
  await app.inject({ method: 'POST', url: '/sandbox/_control/reset' });
  clock.set(new Date('2026-03-10T03:00:00Z'));
});

async function complete(body: Record<string, unknown>, options: { json?: boolean; form?: boolean } = { json: true }) {
  const registration = await createRegistration(app, body);
  // The merchant hands the customer's real phone number to the gateway's SDK; our response only masks it.
  const window = await decideWindow(app, registration.window, 'approve', { userPhoneNumber: body.userPhoneNumber });
  const response = await follow(app, window.redirectUrl, options);
  return { registration, window, response };
}

describe('merchant API authentication', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer wrong_token_0123456789abcdef' }],
    ['a token of another length', { authorization: 'Bearer x' }],
    ['an admin token (wrong kind)', { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }],
    ['a Basic credential', { authorization: `Basic ${Buffer.from(`${TEST_API_KEY}:`).toString('base64')}` }],
  ])('refuses %s with 401', async (_name, headers) => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/registrations', headers, payload: CARD });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
    expect((await app.inject({ method: 'GET', url: '/api/v1/subscriptions', headers })).statusCode).toBe(401);
  });

  it('accepts any of several API keys, so keys can be rotated', async () => {
    const { app: rotated } = await startTestApp(database.url, { env: { API_KEYS: `old_key_0123456789abcdef,${TEST_API_KEY}` } });
    try {
      for (const key of ['old_key_0123456789abcdef', TEST_API_KEY]) {
        const response = await rotated.inject({ method: 'GET', url: '/api/v1/subscriptions', headers: { authorization: `Bearer ${key}` } });
        expect(response.statusCode).toBe(200);
      }
    } finally {
      await rotated.close();
    }
  });
});

describe('POST /api/v1/registrations', () => {
  it('returns the state, URLs and window parameters, and GET returns the same', async () => {
    const registration = await createRegistration(app, { ...CARD, userName: '홍길동', userPhoneNumber: '010-1234-5678', returnUrl: 'https://shop.test/done' });
    expect(registration.status).toBe('PENDING');
    expect(Buffer.from(registration.state, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(registration.successUrl).toBe(`${baseUrl}/billing/success?state=${registration.state}`);
    expect(registration.failUrl).toBe(`${baseUrl}/billing/fail?state=${registration.state}`);
    expect(Buffer.byteLength(registration.orderId)).toBeLessThanOrEqual(50);
    expect(new Date(registration.expiresAt).getTime() - clock.now().getTime()).toBe(30 * 60_000);
    expect(registration.window).toMatchObject({
      paymentsMethod: 'CARD',
      merchantId: 'TEST_MERCHANT',
      orderId: registration.orderId,
      amount: 9900,
      issueKeyOnly: false,
      successUrl: registration.successUrl,
      failUrl: registration.failUrl,
      userPhoneNumber: '010-****-5678',
      url: expect.stringContaining(`${baseUrl}/sandbox/window?`),
    });
    expect(registration.window.url).not.toContain('5678');
    const fetched = await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders });
    expect(fetched.json()).toEqual(registration);
  });

  it('gives every registration its own state and orderId', async () => {
    const [a, b] = await Promise.all([createRegistration(app, CARD), createRegistration(app, CARD)]);
    expect(a.state).not.toBe(b.state);
    expect(a.orderId).not.toBe(b.orderId);
  });

  it.each([
    ['a 34-syllable Hangul orderName (102 bytes)', { ...CARD, orderName: '가'.repeat(34) }, /orderName is 102 bytes/],
    ['a zero amount', { ...CARD, amount: 0 }, /amount/],
    ['a fractional amount', { ...CARD, amount: 99.5 }, /amount/],
    ['an unknown field', { ...CARD, status: 'COMPLETED' }, /additional properties/i],
    ['an unknown method', { ...CARD, method: 'BANK' }, /method/],
    ['MOBILE without itemCode', { ...MOBILE, itemCode: undefined }, /itemCode is required/],
    ['MOBILE billed weekly', { ...MOBILE, interval: { unit: 'week', count: 1 } }, /monthly/],
    ['MOBILE with issueKeyOnly', { ...MOBILE, issueKeyOnly: true }, /issueKeyOnly is not available for MOBILE/],
    ['a phone number that is not one', { ...CARD, userPhoneNumber: 'call me' }, /userPhoneNumber/],
    ['a returnUrl that is not http(s)', { ...CARD, returnUrl: 'javascript:alert(1)' }, /returnUrl/],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_name, body, message) => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/registrations', headers: apiHeaders, payload: body });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
  });

  it('accepts 33 Hangul syllables (99 bytes)', async () => {
    expect((await createRegistration(app, { ...CARD, orderName: '가'.repeat(33) })).status).toBe('PENDING');
  });

  it('refuses an amount over the per-method maximum', async () => {
    const { app: capped } = await startTestApp(database.url, { env: { AMOUNT_MAX_CARD: '5000' } });
    try {
      const response = await capped.inject({ method: 'POST', url: '/api/v1/registrations', headers: apiHeaders, payload: CARD });
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toMatch(/over the CARD maximum of 5000/);
    } finally {
      await capped.close();
    }
  });

  it('answers 404 for an unknown registration', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/registrations/00000000-0000-0000-0000-000000000000', headers: apiHeaders });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('NOT_FOUND');
  });
});

describe('GET|POST /billing/success', () => {
  it('issues the key, stores it encrypted, records the initial payment and creates the subscription', async () => {
    const { registration, response } = await complete(CARD);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({ status: 'success', registrationId: registration.id, subscriptionId: expect.any(String), paymentId: expect.any(String) });

    const subscription = (await app.inject({ method: 'GET', url: `/api/v1/subscriptions/${body.subscriptionId}`, headers: apiHeaders })).json();
    expect(subscription).toMatchObject({
      status: 'ACTIVE',
      userId: 'user-1',
      method: 'CARD',
      amount: 9900,
      orderName: '프리미엄 플랜',
      interval: { unit: 'month', count: 1 },
      currentPeriodStart: '2026-03-10T03:00:00.000Z',
      currentPeriodEnd: '2026-04-10T03:00:00.000Z',
      nextChargeAt: '2026-04-10T03:00:00.000Z',
      billingKey: { method: 'CARD', status: 'ACTIVE', cardName: expect.any(String), cardNumber: expect.stringContaining('*') },
    });
    const payment = (await app.inject({ method: 'GET', url: `/api/v1/payments/${body.paymentId}`, headers: apiHeaders })).json();
    expect(payment).toMatchObject({
      kind: 'INITIAL',
      status: 'SUCCEEDED',
      amount: 9900,
      subscriptionId: body.subscriptionId,
      orderId: registration.orderId,
      cycle: 0,
    });
    expect(payment.attempts).toMatchObject([
      { operation: 'ISSUE_KEY', outcome: 'SUCCEEDED', orderId: registration.orderId, transactionId: payment.transactionId },
    ]);
    expect((await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json()).toMatchObject({
      status: 'COMPLETED',
      subscriptionId: body.subscriptionId,
    });

    // The stored key is ciphertext bound to its row, and it is the real key: the gateway accepts it.
    const row = await app.db.billingKey.findFirstOrThrow();
    const keyring = createKeyring((await loadConfig({ BILLING_KEY_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` })).encryptionKeys);
    const billingKey = readBillingKey(keyring, row);
    expect(Buffer.from(row.keyCiphertext).toString('utf8')).not.toContain(billingKey);
    expect(() => readBillingKey(keyring, { ...row, id: registration.id })).toThrow(/cannot be decrypted/);
    const charge = await app.gateway.chargeBillingKey({
      method: 'CARD',
      billingKey,
      userId: 'user-1',
      amount: 9900,
      orderName: 'check',
      orderId: 'check-stored-key',
    });
    expect(charge.outcome).toBe('SUCCEEDED');
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE').map((e) => e.amount)).toEqual([9900, 9900]);
  });

  it('with issueKeyOnly charges nothing and makes the subscription due at once', async () => {
    const { response } = await complete({ ...CARD, issueKeyOnly: true });
    const { subscriptionId, paymentId } = response.json();
    expect(paymentId).toBeUndefined();
    const subscription = (await app.inject({ method: 'GET', url: `/api/v1/subscriptions/${subscriptionId}`, headers: apiHeaders })).json();
    expect(subscription.nextChargeAt).toBe(clock.now().toISOString());
    expect(await app.db.payment.count()).toBe(0);
    expect((await sandboxLedger(app)).map((e) => [e.type, e.amount])).toEqual([
      ['CHARGE', 100],
      ['CANCEL', 100],
    ]);
  });

  it('for MOBILE starts the chain with the registration’s transaction and masks the phone number', async () => {
    const { response } = await complete(MOBILE);
    const { subscriptionId } = response.json();
    const row = await app.db.subscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    const ledger = await sandboxLedger(app);
    expect(row).toMatchObject({ lastTransactionId: ledger[0]!.transactionId, lastAmount: 5500, lastTransactionAt: new Date('2026-03-10T03:00:00Z') });
    const subscription = (await app.inject({ method: 'GET', url: `/api/v1/subscriptions/${subscriptionId}`, headers: apiHeaders })).json();
    expect(subscription.billingKey).toMatchObject({ method: 'MOBILE', carrier: expect.stringMatching(/^(SKT|KTF|LGT)$/), phoneNumber: '010-****-5432' });
  });

  it('redirects the browser (303) to the result page, from a GET or a form POST', async () => {
    for (const form of [false, true]) {
      const { registration, response } = await complete(CARD, { form });
      expect(response.statusCode).toBe(303);
      const location = new URL(response.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(`${baseUrl}/result`);
      expect(location.searchParams.get('status')).toBe('success');
      expect(location.searchParams.get('registrationId')).toBe(registration.id);
      expect(location.searchParams.get('subscriptionId')).toBeTruthy();
      const page = await app.inject({ method: 'GET', url: `${location.pathname}${location.search}` });
      expect(page.body).toContain('All set');
    }
  });

  it('redirects to the registration’s own returnUrl when it has one', async () => {
    const { response } = await complete({ ...CARD, returnUrl: 'https://shop.test/thanks?plan=pro' }, {});
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.test/thanks');
    expect(location.searchParams.get('plan')).toBe('pro');
    expect(location.searchParams.get('status')).toBe('success');
  });

  it('answers a replay of a completed state with the same result and calls nothing', async () => {
    const { window, response } = await complete(CARD);
    const ledgerBefore = await sandboxLedger(app);
    const replay = await follow(app, window.redirectUrl, { json: true });
    expect(replay.json()).toEqual({ status: 'success', registrationId: response.json().registrationId, subscriptionId: response.json().subscriptionId });
    expect(await sandboxLedger(app)).toEqual(ledgerBefore);
    expect(await app.db.paymentAttempt.count()).toBe(1);
  });

  it('issues the key once for concurrent hits with the same state', async () => {
    const registration = await createRegistration(app, CARD);
    const window = await decideWindow(app, registration.window);
    const responses = await Promise.all(Array.from({ length: 6 }, () => follow(app, window.redirectUrl, { json: true })));
    const subscriptionIds = new Set(responses.map((r) => r.json().subscriptionId));
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(subscriptionIds.size).toBe(1);
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);
    expect(await app.db.billingKey.count()).toBe(1);
    expect(await app.db.subscription.count()).toBe(1);
  });

  it.each([
    ['a forged state', (url: URL) => url.searchParams.set('state', 'forged-state-value'), 400, 'INVALID_STATE'],
    ['no state', (url: URL) => url.searchParams.delete('state'), 400, 'INVALID_STATE'],
    ['an orderId that is not the registration’s', (url: URL) => url.searchParams.set('orderId', 'someone-else'), 409, 'ORDER_MISMATCH'],
    ['a failure code from the window', (url: URL) => url.searchParams.set('code', 'USER_CANCEL'), 422, 'WINDOW_FAILED'],
  ])('refuses %s without issuing a key', async (_name, tamper, status, code) => {
    const registration = await createRegistration(app, CARD);
    const window = await decideWindow(app, registration.window);
    const url = new URL(window.redirectUrl);
    tamper(url);
    const response = await follow(app, url.toString(), { json: true });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ code });
    expect(await sandboxLedger(app)).toEqual([]);
    expect(await app.db.billingKey.count()).toBe(0);
  });

  it('refuses an expired state without calling the gateway, and the registration says EXPIRED', async () => {
    const registration = await createRegistration(app, CARD);
    const window = await decideWindow(app, registration.window);
    clock.set(new Date(new Date(registration.expiresAt).getTime() + 1000));
    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.statusCode).toBe(410);
    expect(response.json()).toMatchObject({ code: 'STATE_EXPIRED' });
    expect(await sandboxLedger(app)).toEqual([]);
    expect((await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json().status).toBe('EXPIRED');
  });

  it('in browser mode redirects failures to the result page with status=failed and the code', async () => {
    const response = await app.inject({ method: 'GET', url: '/billing/success?state=nope&transactionId=W1', headers: { accept: 'text/html' } });
    expect(response.statusCode).toBe(303);
    const location = new URL(response.headers.location as string);
    expect(Object.fromEntries(location.searchParams)).toEqual({ status: 'failed', code: 'INVALID_STATE' });
  });
});

describe('GET|POST /billing/fail', () => {
  it('marks the registration FAILED, redirects with status=failed, and a later success with that state is refused', async () => {
    const registration = await createRegistration(app, CARD);
    const declined = await decideWindow(app, registration.window, 'decline');
    const response = await follow(app, declined.redirectUrl);
    expect(response.statusCode).toBe(303);
    const location = new URL(response.headers.location as string);
    expect(location.searchParams.get('status')).toBe('failed');
    expect(location.searchParams.get('code')).toBe('WINDOW_FAILED');
    expect(location.searchParams.get('gatewayCode')).toBe('USER_CANCEL');
    expect((await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json()).toMatchObject({
      status: 'FAILED',
      failureCode: 'WINDOW_FAILED',
    });

    const approved = await decideWindow(app, registration.window);
    const late = await follow(app, approved.redirectUrl, { json: true });
    expect(late.statusCode).toBe(400);
    expect(late.json()).toMatchObject({ code: 'INVALID_STATE' });
    expect(await sandboxLedger(app)).toEqual([]);
  });
});

describe('gateway outcomes during key issuance', () => {
  it('a decline fails the registration and its payment', async () => {
    await sandboxFault(app, { operation: 'ISSUE_KEY', kind: 'decline', code: 'CARD_EXPIRED', message: 'expired card' });
    const { registration, response } = await complete(CARD);
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ code: 'GATEWAY_DECLINED', details: { gatewayCode: 'CARD_EXPIRED' } });
    const row = await app.db.registration.findUniqueOrThrow({ where: { id: registration.id }, include: { payments: true } });
    expect(row.status).toBe('FAILED');
    expect(row.payments).toMatchObject([{ status: 'FAILED', failureCode: 'CARD_EXPIRED' }]);
  });

  it('UNKNOWN leaves the registration in NEEDS_ATTENTION, visible to the merchant, and a replay never fails it', async () => {
    await sandboxFault(app, { operation: 'ISSUE_KEY', kind: 'timeout' });
    const { registration, window, response } = await complete(CARD);
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN', details: { paymentId: expect.any(String) } });
    const fetched = (await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json();
    expect(fetched).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'PAYMENT_OUTCOME_UNKNOWN' });
    const payment = (await app.inject({ method: 'GET', url: `/api/v1/payments/${response.json().details.paymentId}`, headers: apiHeaders })).json();
    expect(payment).toMatchObject({ status: 'UNKNOWN', attempts: [{ outcome: 'UNKNOWN' }] });
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);

    // The replay calls issue-key again; the window transaction was used, so the gateway refuses. That refusal
    // must not be read as "nothing was charged": the registration stays for an operator.
    const replay = await follow(app, window.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const after = await app.db.payment.findUniqueOrThrow({ where: { id: payment.id }, include: { attempts: true } });
    expect(after.status).toBe('UNKNOWN');
    expect(after.attempts.map((a) => a.status).sort()).toEqual(['DECLINED', 'UNKNOWN']);
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);
  });

  it('an issuance left in flight by a crashed request becomes UNKNOWN, and the replay may issue the key', async () => {
    const registration = await createRegistration(app, CARD);
    const window = await decideWindow(app, registration.window);
    const past = new Date(clock.now().getTime() - 1);
    await app.db.registration.update({
      where: { id: registration.id },
      data: { transactionId: window.transactionId, leaseOwner: 'dead', leaseExpiresAt: past },
    });
    const payment = await app.db.payment.create({
      data: { registrationId: registration.id, kind: 'INITIAL', method: 'CARD', amount: 9900, orderId: registration.orderId, cycle: 0, attemptCount: 1 },
    });
    await app.db.paymentAttempt.create({
      data: {
        paymentId: payment.id,
        attemptNumber: 1,
        operation: 'ISSUE_KEY',
        orderId: registration.orderId,
        amount: 9900,
        leaseOwner: 'dead',
        leaseExpiresAt: past,
      },
    });

    // The window transaction was never used (the dead call did not reach the gateway), so issue-key succeeds.
    const response = await follow(app, window.redirectUrl, { json: true });
    expect(response.json()).toMatchObject({ status: 'success', subscriptionId: expect.any(String) });
    const attempts = await app.db.paymentAttempt.findMany({ orderBy: { attemptNumber: 'asc' } });
    expect(attempts.map((a) => [a.attemptNumber, a.status])).toEqual([
      [1, 'UNKNOWN'],
      [2, 'SUCCEEDED'],
    ]);
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);
  });

  it('after an UNKNOWN that charged nothing, a replay completes the registration', async () => {
    await sandboxFault(app, { operation: 'ISSUE_KEY', kind: 'http_500' });
    const { window, response } = await complete(CARD);
    expect(response.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const replay = await follow(app, window.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ status: 'success', subscriptionId: expect.any(String) });
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CHARGE')).toHaveLength(1);
    expect((await app.db.payment.findFirstOrThrow()).status).toBe('SUCCEEDED');
  });
});
