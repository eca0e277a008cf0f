// A registration choosing Toss (docs/api.md "Gateways"), through the public routes against the Toss sandbox: the
// window carries Toss's parameters with a random customerKey, the success redirect's authKey is exchanged for a key
// stored with its gateway and customerKey, and the subscription's charges go through Toss. TOSS takes CARD only,
// and only where Toss is configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { createRegistration as createRegistrationRow } from '../../../src/modules/registrations/create-registration.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { getSubscription, paymentsOf, runPass, setClock } from '../../helpers/billing.ts';
import { follow } from '../../helpers/checkout.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

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

  it('takes CARD only, key-only in this version, and only where Toss runs', async () => {
    const mobile = await register({ gateway: 'TOSS', method: 'MOBILE', itemCode: 'ITEM01' });
    expect([mobile.statusCode, mobile.json().code]).toEqual([400, 'METHOD_NOT_SUPPORTED_BY_GATEWAY']);
    const charged = await register({ gateway: 'TOSS' });
    expect([charged.statusCode, charged.json().code]).toEqual([400, 'VALIDATION_ERROR']);
    const deps = { db: app.db, clock: app.clock, config: app.config, gateway: app.gateway, gateways: { DANAL: app.gateway } };
    await expect(
      createRegistrationRow(deps, { userId: 'u', method: 'CARD', amount: 1000, orderName: 'x', issueKeyOnly: true, gateway: 'TOSS' }),
    ).rejects.toMatchObject({ code: 'GATEWAY_NOT_CONFIGURED', statusCode: 422 });
    // DANAL stays the default.
    expect((await register({})).json()).toMatchObject({ gateway: 'DANAL', window: { paymentsMethod: 'CARD' } });
  });
});
