// Secrets never leak (docs/architecture.md, invariant 8): across whole registration, order, charging and operator flows, no log
// line, response body (the console's Audit and Subscription pages among them), audit event, stored idempotent response or stored gateway response carries a billing key, the gateway secret key, or a customer's phone number; logs carry no names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../../src/app.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { readBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { apiHeaders, LogCapture, startTestApp, TEST_ADMIN_TOKEN, TEST_ENCRYPTION_KEYS, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { consoleCookie } from '../../helpers/console.ts';
import { decideWindow, follow } from '../../helpers/checkout.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { loadConfig } from '../../../src/config.ts';

let database: TestDatabase;
let app: App;
const logs = new LogCapture();
const bodies: string[] = [];

const PHONE = '010-5555-7777';
const PHONE_DIGITS = '01055557777';
const NAME = '이몽룡';

async function record(response: Promise<LightMyRequestResponse> | LightMyRequestResponse) {
  const resolved = await response;
  bodies.push(resolved.body, JSON.stringify(resolved.headers));
  return resolved;
}

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { logs }));
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('the whole flow', () => {
  it('leaks no billing key, secret key or phone number in any response or log line, and no name in logs', async () => {
    for (const terms of [
      { userId: 'leak-card', method: 'CARD', amount: 9900, orderName: 'Plan', userName: NAME, userPhoneNumber: PHONE },
      { userId: 'leak-mobile', method: 'MOBILE', amount: 5500, orderName: 'Plan', itemCode: 'ITEM1', userName: NAME, userPhoneNumber: PHONE },
    ]) {
      const registration = (await record(app.inject({ method: 'POST', url: '/api/v1/registrations', headers: apiHeaders, payload: terms }))).json();
      const window = await decideWindow(app, registration.window, 'approve', { userPhoneNumber: PHONE, userName: NAME });
      const done = (await record(follow(app, window.redirectUrl, { json: true }))).json();
      await record(follow(app, window.redirectUrl));
      await record(app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders }));
      await record(app.inject({ method: 'GET', url: `/api/v1/subscriptions/${done.subscriptionId}`, headers: apiHeaders }));
      await record(app.inject({ method: 'GET', url: `/api/v1/payments/${done.paymentId}`, headers: apiHeaders }));
    }
    await record(app.inject({ method: 'GET', url: '/api/v1/subscriptions', headers: apiHeaders }));
    await record(app.inject({ method: 'GET', url: '/api/v1/payments', headers: apiHeaders }));
    const order = (
      await record(
        app.inject({
          method: 'POST',
          url: '/api/v1/orders',
          headers: apiHeaders,
          payload: { method: 'MOBILE', amount: 1000, orderName: 'x', userId: 'leak-order' },
        }),
      )
    ).json();
    const orderWindow = await decideWindow(app, order.window, 'approve', { userPhoneNumber: PHONE });
    await record(follow(app, orderWindow.redirectUrl, { json: true }));

    // A browser opens the sandbox window with the terms in its query string. The page itself stands in for the
    // gateway's window (it shows the customer their own terms), so only its request log is checked here.
    const page = await app.inject({
      method: 'GET',
      url: `/sandbox/window?${new URLSearchParams({ ...orderWindow.fields, paymentsMethod: 'CARD', merchantId: 'TEST_MERCHANT', orderName: 'x', amount: '1000', userId: 'u', successUrl: 'http://x.test/s', failUrl: 'http://x.test/f', userName: NAME, userPhoneNumber: PHONE })}`,
    });
    expect(page.statusCode).toBe(200);
    expect(logs.lines.some((line) => (line.req as { url?: string } | undefined)?.url === '/sandbox/window')).toBe(true);

    // Charging and operator actions: a pass (the CARD subscription made due), a refund, lists and the audit trail.
    const monthAgo = new Date(Date.now() - 32 * 86_400_000);
    await app.db.subscription.updateMany({ where: { userId: 'leak-card' }, data: { anchorAt: monthAgo, nextChargeAt: new Date(Date.now() - 1000) } });
    await record(app.inject({ method: 'POST', url: '/admin/scheduler/run', headers: adminHeaders }));
    const charged = await app.db.payment.findFirstOrThrow({ where: { kind: 'RECURRING', status: 'SUCCEEDED' } });
    await record(
      app.inject({
        method: 'POST',
        url: `/admin/payments/${charged.id}/cancel`,
        headers: { ...adminHeaders, 'idempotency-key': 'leak-1' },
        payload: { reason: 'test' },
      }),
    );
    await record(app.inject({ method: 'GET', url: '/admin/payments', headers: adminHeaders }));
    await record(app.inject({ method: 'GET', url: '/admin/subscriptions', headers: adminHeaders }));
    await record(app.inject({ method: 'GET', url: '/metrics' }));
    // The console's Audit page shows the trail's before and after, and the record pages their subscriptions.
    const cookie = await consoleCookie(app, TEST_ADMIN_TOKEN);
    expect((await record(app.inject({ method: 'GET', url: '/console/audit?limit=100', headers: { cookie } }))).statusCode).toBe(200);
    for (const { id } of await app.db.subscription.findMany({ select: { id: true } })) {
      expect((await record(app.inject({ method: 'GET', url: `/console/subscriptions/${id}`, headers: { cookie } }))).statusCode).toBe(200);
    }
    bodies.push(JSON.stringify(await app.db.auditEvent.findMany()), JSON.stringify(await app.db.idempotencyRecord.findMany()));
    bodies.push(JSON.stringify(await app.db.paymentAttempt.findMany({ select: { rawResponse: true, gatewayMessage: true } })));

    const keyring = createKeyring((await loadConfig({ BILLING_KEY_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS })).encryptionKeys);
    const billingKeys = (await app.db.billingKey.findMany()).map((row) => readBillingKey(keyring, row));
    expect(billingKeys).toHaveLength(2);

    const everything = [...bodies, logs.raw].join('\n');
    for (const secret of [...billingKeys, TEST_SECRET_KEY, Buffer.from(`${TEST_SECRET_KEY}:`).toString('base64'), PHONE, PHONE_DIGITS]) {
      expect(everything).not.toContain(secret);
    }
    expect(logs.raw).not.toContain(NAME);
    expect(logs.raw).not.toContain(encodeURIComponent(NAME));
    // The flow did log: the check above is about content, not silence.
    expect(logs.lines.filter((line) => line.msg === 'gateway call')).toHaveLength(5);
  });
});
