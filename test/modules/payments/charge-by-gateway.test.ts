// The engine picks the adapter from the row (src/modules/shared/gateway-for.ts): a scheduled charge goes through its
// billing key's gateway with the key's customerKey, its payment names that gateway, and a refund goes where the payment
// was charged; a Danal subscription in the same pass is charged through Danal exactly as before. A row of a gateway not
// configured here is answered NOT_SENT and charges nothing. Against both sandboxes, over HTTP.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { storeBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { gatewayFor } from '../../../src/modules/shared/gateway-for.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { createRegistration, createSubscription } from '../../factories/index.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxLedger } from '../../helpers/checkout.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { tossLedger as tossLedgerOf } from '../../helpers/gateways.ts';

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

const tossLedger = () => tossLedgerOf(app);

/** A Toss subscription due now: a key the Toss sandbox minted for a random customerKey, stored encrypted as issuance stores it. */
async function dueTossSubscription(amount: number) {
  const customerKey = `ck_${randomUUID().replace(/-/g, '')}`;
  const minted = await app.inject({ method: 'POST', url: '/sandbox/toss/_control/billing-keys', payload: { customerKeys: [customerKey] } });
  expect(minted.statusCode, minted.body).toBe(201);
  const { billingKey } = minted.json().keys[0] as { billingKey: string };
  const registration = await createRegistration(app.db, { status: 'COMPLETED', gateway: 'TOSS', customerKey, amount });
  const key = await app.db.$transaction((tx) =>
    storeBillingKey(tx, createKeyring(app.config.encryptionKeys), {
      registrationId: registration.id,
      userId: registration.userId,
      method: 'CARD',
      fields: { billingKey, extra: {} },
      gateway: 'TOSS',
      customerKey,
    }),
  );
  const now = app.clock.now();
  const subscription = await createSubscription(app.db, {
    registrationId: registration.id,
    billingKeyId: key.id,
    userId: registration.userId,
    amount,
    anchorAt: new Date(now.getTime() - 31 * 86_400_000),
    currentPeriodStart: new Date(now.getTime() - 31 * 86_400_000),
    currentPeriodEnd: now,
    nextChargeAt: now,
  });
  return { subscription, customerKey };
}

const refund = (paymentId: string, body: Record<string, unknown>, key: string) =>
  app.inject({ method: 'POST', url: `/admin/payments/${paymentId}/cancel`, headers: { ...adminHeaders, 'idempotency-key': key }, payload: body });

describe('the engine charges and refunds through the row’s gateway', () => {
  it('charges a Toss key through Toss and a Danal key through Danal in one pass, then refunds each where it was charged', async () => {
    const danalId = await subscribe(app, { amount: 9900 });
    const danalBefore = (await sandboxLedger(app)).length;
    const { subscription: toss, customerKey } = await dueTossSubscription(12000);
    // The Danal subscription falls due a month on; the Toss one is due now and charged in the same pass.
    await setClock(app, new Date(app.clock.now().getTime() + 32 * 86_400_000));

    const report = await runPass(app);
    expect(report).toMatchObject({ claimed: 2, succeeded: 2, declined: 0, unknown: 0 });

    const [tossPayment] = await paymentsOf(app, toss.id);
    expect(tossPayment).toMatchObject({ status: 'SUCCEEDED', amount: 12000, gateway: 'TOSS', kind: 'RECURRING' });
    expect((await tossLedger()).filter((e) => e.type === 'CHARGE')).toEqual([
      expect.objectContaining({ orderId: tossPayment!.orderId, customerKey, amount: 12000 }),
    ]);
    const danalPayments = await paymentsOf(app, danalId);
    expect(danalPayments.map((p) => [p.kind, p.status, (p as { gateway?: string }).gateway])).toEqual([
      ['INITIAL', 'SUCCEEDED', 'DANAL'],
      ['RECURRING', 'SUCCEEDED', 'DANAL'],
    ]);
    const danalCharges = (await sandboxLedger(app)).slice(danalBefore);
    expect(danalCharges.map((e) => e.orderId)).toEqual([danalPayments[1]!.orderId]);

    // A partial then a full refund of the Toss payment, through Toss only.
    expect((await refund(tossPayment!.id, { amount: 2000, reason: 'partial' }, 'r1')).json()).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 2000 });
    // Toss refuses a second cancel of one payment within a second (its clock is ours, frozen): a second later.
    await setClock(app, new Date(app.clock.now().getTime() + 2_000));
    expect((await refund(tossPayment!.id, { reason: 'the rest' }, 'r2')).json()).toMatchObject({ status: 'CANCELED', canceledAmount: 12000 });
    expect((await tossLedger()).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([2000, 10000]);
    expect((await sandboxLedger(app)).slice(danalBefore).filter((e) => e.type !== 'APPROVAL' && e.operation === 'CANCEL')).toEqual([]);
  });

  it('answers NOT_SENT for a gateway not configured here, and picks each configured adapter by name', async () => {
    expect(gatewayFor(app, 'DANAL')).toBe(app.gateway);
    expect(gatewayFor(app, 'TOSS')).toBe(app.gateways.TOSS);
    const absent = gatewayFor({ gateway: app.gateway, gateways: { DANAL: app.gateway } }, 'TOSS');
    const result = await absent.chargeBillingKey({
      method: 'CARD',
      billingKey: 'k',
      userId: 'u',
      customerKey: 'c',
      amount: 100,
      orderName: 'x',
      orderId: 'order-1',
    });
    expect(result).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' });
    expect(absent.capabilities.methods).toEqual([]);
  });
});
