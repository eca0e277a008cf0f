// Every registration, billing key and payment names its gateway (migration 20261201100000_gateways): rows written as
// before are Danal's and say so in their public shapes (the subscription through its key), and a Toss key or
// registration cannot exist without the customerKey Toss binds it to (nor a Danal one with one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createBillingKey, createRegistration } from '../factories/index.ts';
import { apiHeaders, buildTestApp } from '../helpers/app.ts';
import { getSubscription, paymentsOf, subscribe } from '../helpers/billing.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url);
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('the gateway column', () => {
  it('is DANAL for a registration, its key and its payment written as before, in every public shape', async () => {
    const subscriptionId = await subscribe(app, {});
    const subscription = await getSubscription(app, subscriptionId);
    expect((subscription.billingKey as { gateway?: string }).gateway).toBe('DANAL');
    const [payment] = await paymentsOf(app, subscriptionId);
    expect((payment as { gateway?: string }).gateway).toBe('DANAL');
    const row = await app.db.subscription.findUniqueOrThrow({ where: { id: subscriptionId }, include: { registration: true, billingKey: true } });
    expect([row.registration.gateway, row.billingKey.gateway, row.registration.customerKey, row.billingKey.customerKey]).toEqual([
      'DANAL',
      'DANAL',
      null,
      null,
    ]);
    const registration = await app.inject({ method: 'GET', url: `/api/v1/registrations/${row.registrationId}`, headers: apiHeaders });
    expect(registration.json()).toMatchObject({ gateway: 'DANAL' });
  });

  it('refuses a Toss key or registration without a customerKey, and a Danal one with one', async () => {
    await expect(createBillingKey(app.db, { gateway: 'TOSS' })).rejects.toThrow(/billing_keys_customerKey_gateway/);
    await expect(createBillingKey(app.db, { customerKey: 'ck_0123456789' })).rejects.toThrow(/billing_keys_customerKey_gateway/);
    await expect(createRegistration(app.db, { gateway: 'TOSS' })).rejects.toThrow(/registrations_customerKey_gateway/);
    const toss = await createBillingKey(app.db, { gateway: 'TOSS', customerKey: 'ck_0123456789' });
    expect(toss.gateway).toBe('TOSS');
  });
});
