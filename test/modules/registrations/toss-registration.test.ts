// A registration choosing Toss (docs/api.md "Gateways"), through the public routes against the Toss sandbox: the
// window carries Toss's parameters with a random customerKey, the success redirect's authKey is exchanged for a key
// stored with its gateway and customerKey, and the subscription's charges go through Toss. TOSS takes CARD only,
// and only where Toss is configured.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createRegistration as createRegistrationRow } from '../../../src/modules/registrations/create-registration.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow, sandboxLedger } from '../../helpers/checkout.ts';
import { subscribeThroughToss } from '../../helpers/gateways.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { env: { CLOCK: 'simulated' } });
  await setClock(app, '2027-03-10T01:00:00.000Z');
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(() => truncateAll(app.db));

const register = (body: Record<string, unknown>) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId: 'toss-user-1', method: 'CARD', amount: 15000, orderName: 'Toss plan', ...body },
  });

const tossLedger = async () =>
  (await app.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).json().entries as Array<{
    type: string;
    orderId: string;
    customerKey: string;
    amount: number;
  }>;

interface TossWindow {
  gateway: string;
  clientKey: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
  url: string;
}

describe('POST /api/v1/registrations with gateway TOSS', () => {
  it('opens Toss’s window with a random customerKey, issues the key from the redirect, and charges the subscription through Toss', async () => {
    const created = await register({ gateway: 'TOSS', issueKeyOnly: true });
    expect(created.statusCode, created.body).toBe(201);
    const registration = created.json() as { id: string; gateway: string; window: TossWindow };
    expect(registration.gateway).toBe('TOSS');
    const { window } = registration;
    expect(window).toMatchObject({
      gateway: 'TOSS',
      successUrl: expect.stringContaining('/billing/success'),
      failUrl: expect.stringContaining('/billing/fail'),
    });
    expect(window.customerKey).not.toContain('toss-user-1');
    expect(new URL(window.url).pathname).toBe('/sandbox/toss/window');
    expect(Object.fromEntries(new URL(window.url).searchParams)).toEqual({
      clientKey: window.clientKey,
      customerKey: window.customerKey,
      successUrl: window.successUrl,
      failUrl: window.failUrl,
    });
    // GET answers the same window.
    const read = await app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders });
    expect(read.json().window).toEqual(window);

    // The customer approves in Toss's window; its redirect brings customerKey and authKey.
    const authorized = await app.inject({
      method: 'POST',
      url: '/sandbox/toss/window/authorize',
      payload: { clientKey: window.clientKey, customerKey: window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl, decision: 'approve' },
    });
    expect(authorized.statusCode, authorized.body).toBe(200);
    const done = await follow(app, authorized.json().redirectUrl, { json: true });
    expect(done.statusCode, done.body).toBe(200);
    const subscriptionId = done.json().subscriptionId as string;
    const subscription = await getSubscription(app, subscriptionId);
    expect(subscription.billingKey).toMatchObject({ gateway: 'TOSS', status: 'ACTIVE' });
    const key = await app.db.billingKey.findFirstOrThrow({ where: { registrationId: registration.id } });
    expect([key.gateway, key.customerKey]).toEqual(['TOSS', window.customerKey]);

    // Key-only: due at once, charged by the next pass through Toss with the key's customerKey.
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
    const [payment] = await paymentsOf(app, subscriptionId);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', amount: 15000, gateway: 'TOSS' });
    expect((await tossLedger()).filter((e) => e.orderId === payment!.orderId)).toEqual([
      expect.objectContaining({ type: 'CHARGE', customerKey: window.customerKey, amount: 15000 }),
    ]);

    // A replay of the completed redirect answers the same without calling Toss again.
    const replay = await follow(app, authorized.json().redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ subscriptionId });
  });

  it('charges the following months through Toss; a decline is retried with a new orderId, through Toss again', async () => {
    const { window } = (await register({ gateway: 'TOSS', issueKeyOnly: true, userId: 'toss-user-2' })).json() as { window: TossWindow };
    const authorized = await app.inject({
      method: 'POST',
      url: '/sandbox/toss/window/authorize',
      payload: { clientKey: window.clientKey, customerKey: window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl },
    });
    const subscriptionId = (await follow(app, authorized.json().redirectUrl, { json: true })).json().subscriptionId as string;
    expect(await runPass(app)).toMatchObject({ succeeded: 1 });

    // The next month: charged by the scheduled pass through Toss.
    await setClock(app, (await getSubscription(app, subscriptionId)).nextChargeAt!);
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });

    // The month after: Toss declines (a decline that may recover); the retry a day later is a new attempt.
    await setClock(app, (await getSubscription(app, subscriptionId)).nextChargeAt!);
    const fault = await app.inject({
      method: 'POST',
      url: '/sandbox/toss/_control/faults',
      payload: { operation: 'CHARGE', kind: 'decline', code: 'REJECT_CARD_PAYMENT' },
    });
    expect(fault.statusCode, fault.body).toBeLessThan(300);
    expect(await runPass(app)).toMatchObject({ claimed: 1, declined: 1 });
    expect((await getSubscription(app, subscriptionId)).status).toBe('PAST_DUE');
    await setClock(app, (await getSubscription(app, subscriptionId)).nextChargeAt!);
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });

    const payments = await paymentsOf(app, subscriptionId);
    expect(payments.map((p) => [p.status, (p as { gateway?: string }).gateway])).toEqual([
      ['SUCCEEDED', 'TOSS'],
      ['SUCCEEDED', 'TOSS'],
      ['SUCCEEDED', 'TOSS'],
    ]);
    const third = payments[2]!;
    expect(third.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'SUCCEEDED']);
    expect(new Set(third.attempts!.map((a) => a.orderId)).size).toBe(2);
    // Toss approved each orderId of this customer once: the declined attempt charged nothing.
    const charges = (await tossLedger()).filter((e) => e.type === 'CHARGE' && e.customerKey === window.customerKey);
    expect(charges.map((e) => e.orderId)).toEqual(payments.map((p) => p.orderId));
    expect((await getSubscription(app, subscriptionId)).status).toBe('ACTIVE');
  });

  it('moves a Danal CARD subscription to Toss through a new payment method, its schedule kept', async () => {
    const subscriptionId = await subscribe(app, { userId: 'mover-1', amount: 9900 });
    const before = await getSubscription(app, subscriptionId);
    const opened = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${subscriptionId}/payment-method`,
      headers: apiHeaders,
      payload: { gateway: 'TOSS' },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const { window } = opened.json() as { window: TossWindow };
    expect(window.gateway).toBe('TOSS');
    const authorized = await app.inject({
      method: 'POST',
      url: '/sandbox/toss/window/authorize',
      payload: { clientKey: window.clientKey, customerKey: window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl },
    });
    expect((await follow(app, authorized.json().redirectUrl, { json: true })).statusCode).toBe(200);
    const moved = await getSubscription(app, subscriptionId);
    expect(moved.billingKey).toMatchObject({ gateway: 'TOSS', status: 'ACTIVE' });
    expect(moved.nextChargeAt).toBe(before.nextChargeAt);

    await setClock(app, moved.nextChargeAt!);
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
    const payments = await paymentsOf(app, subscriptionId);
    expect(payments.map((p) => [p.kind, (p as { gateway?: string }).gateway])).toEqual([
      ['INITIAL', 'DANAL'],
      ['RECURRING', 'TOSS'],
    ]);
    expect((await tossLedger()).filter((e) => e.customerKey === window.customerKey).map((e) => e.orderId)).toEqual([payments[1]!.orderId]);
    // MOBILE stays Danal's.
    const mobile = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${subscriptionId}/payment-method`,
      headers: apiHeaders,
      payload: { gateway: 'TOSS', method: 'MOBILE', itemCode: 'ITEM01' },
    });
    expect([mobile.statusCode, mobile.json().code]).toEqual([400, 'METHOD_NOT_SUPPORTED_BY_GATEWAY']);
  });

  it('moves a Toss CARD subscription back to Danal through a new payment method, its schedule kept', async () => {
    const { subscriptionId } = await subscribeThroughToss(app, { userId: 'mover-back-1', amount: 9900 });
    await runPass(app);
    const before = await getSubscription(app, subscriptionId);
    expect(before.billingKey).toMatchObject({ gateway: 'TOSS' });
    const opened = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${subscriptionId}/payment-method`,
      headers: apiHeaders,
      payload: { gateway: 'DANAL' },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const { window } = opened.json() as { window: Parameters<typeof decideWindow>[1] & { gateway?: string } };
    expect(window.gateway).toBeUndefined();
    const decided = await decideWindow(app, window);
    expect((await follow(app, decided.redirectUrl, { json: true })).statusCode).toBe(200);
    const moved = await getSubscription(app, subscriptionId);
    expect(moved.billingKey).toMatchObject({ gateway: 'DANAL', status: 'ACTIVE' });
    expect(moved.nextChargeAt).toBe(before.nextChargeAt);

    await setClock(app, moved.nextChargeAt!);
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
    const payments = await paymentsOf(app, subscriptionId);
    expect(payments.map((p) => [p.kind, (p as { gateway?: string }).gateway])).toEqual([
      ['RECURRING', 'TOSS'],
      ['RECURRING', 'DANAL'],
    ]);
    const danal = (await sandboxLedger(app)).filter((e) => e.type === 'CHARGE' && e.orderId === payments[1]!.orderId);
    expect(danal).toHaveLength(1);
  });

  it('refuses a redirect that names another customerKey', async () => {
    const { window } = (await register({ gateway: 'TOSS', issueKeyOnly: true })).json() as { window: TossWindow };
    const other = (await register({ gateway: 'TOSS', issueKeyOnly: true })).json() as { window: TossWindow };
    const authorized = await app.inject({
      method: 'POST',
      url: '/sandbox/toss/window/authorize',
      payload: { clientKey: other.window.clientKey, customerKey: other.window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl },
    });
    const done = await follow(app, authorized.json().redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'ORDER_MISMATCH' });
  });

  it('takes CARD only, charging at once as well as key-only, and only where Toss runs', async () => {
    const mobile = await register({ gateway: 'TOSS', method: 'MOBILE', itemCode: 'ITEM01' });
    expect([mobile.statusCode, mobile.json().code]).toEqual([400, 'METHOD_NOT_SUPPORTED_BY_GATEWAY']);
    // Without issueKeyOnly or trialDays the first payment is charged at once (toss-initial-charge.test.ts).
    const charged = await register({ gateway: 'TOSS' });
    expect([charged.statusCode, charged.json().status, charged.json().gateway]).toEqual([201, 'PENDING', 'TOSS']);
    const trial = await register({ gateway: 'TOSS', trialDays: 14 });
    expect([trial.statusCode, trial.json().trialDays]).toEqual([201, 14]);
    const deps = { db: app.db, clock: app.clock, config: app.config, gateway: app.gateway, gateways: { DANAL: app.gateway } };
    await expect(
      createRegistrationRow(deps, { userId: 'u', method: 'CARD', amount: 1000, orderName: 'x', issueKeyOnly: true, gateway: 'TOSS' }),
    ).rejects.toMatchObject({ code: 'GATEWAY_NOT_CONFIGURED', statusCode: 422 });
    // DANAL stays the default.
    expect((await register({})).json()).toMatchObject({ gateway: 'DANAL', window: { paymentsMethod: 'CARD' } });
  });
});
