// Issue #14: a customer replaces the card or phone of a subscription without churning, through the same window and
// flow as a new registration; the mounted sandbox enforces the MOBILE chain and window on the new key as on the old.
import { describe, expect, it } from 'vitest';
import { apiHeaders, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { decideWindow, follow, sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import { getSubscription, paymentsOf, runPass, setClock, subscribe, type PaymentView } from '../helpers/billing.ts';
import { waitFor } from '../helpers/service.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const DAY = 86_400_000;

const running = useRunningApp({ CLOCK: 'simulated', RETRY_DELAYS: '1d,3d,5d' });

const post = (url: string, payload: object) => running.app.inject({ method: 'POST', url, headers: apiHeaders, payload });
const charges = async () => (await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE');

async function replace(id: string, body: object = {}, decision: 'approve' | 'decline' = 'approve') {
  const created = await post(`/api/v1/subscriptions/${id}/payment-method`, body);
  expect(created.statusCode, created.body).toBe(201);
  const registration = created.json() as { id: string; purpose: string; subscriptionId: string; window: Parameters<typeof decideWindow>[1] };
  expect(registration).toMatchObject({ purpose: 'PAYMENT_METHOD', subscriptionId: id });
  const window = await decideWindow(running.app, registration.window, decision);
  const redirect = await follow(running.app, window.redirectUrl, { json: true });
  return { registration, redirect };
}

describe('CARD: declined, updated, collected', () => {
  it('a PAST_DUE subscription is due at once with a new card, its retries reset and its anchor kept; the old key is revoked', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    const before = await getSubscription(running.app, id);
    const due = new Date(before.nextChargeAt!);
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_EXPIRED' });
    await setClock(running.app, due);
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'PAST_DUE', nextChargeAt: new Date(due.getTime() + DAY).toISOString() });

    await setClock(running.app, new Date(due.getTime() + 6 * 3600_000));
    const { redirect } = await replace(id);
    expect(redirect.statusCode, redirect.body).toBe(200);
    const updated = await getSubscription(running.app, id);
    expect(updated.billingKey.id).not.toBe(before.billingKey.id);
    expect(updated).toMatchObject({ status: 'PAST_DUE', nextChargeAt: new Date(due.getTime() + 6 * 3600_000).toISOString(), billingKey: { status: 'ACTIVE' } });
    const oldKey = await running.app.db.billingKey.findUniqueOrThrow({ where: { id: before.billingKey.id } });
    expect(oldKey.status).toBe('REVOKED');

    // Retries reset: one more decline is the first of a fresh schedule (retry one day later), not the second.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'INSUFFICIENT_FUNDS' });
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    expect((await getSubscription(running.app, id)).nextChargeAt).toBe(new Date(due.getTime() + 6 * 3600_000 + DAY).toISOString());
    await setClock(running.app, new Date(due.getTime() + 6 * 3600_000 + DAY));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const collected = await getSubscription(running.app, id);
    // The anchor stays: the next period ends on the original monthly boundary.
    expect(collected).toMatchObject({ status: 'ACTIVE', currentPeriodStart: due.toISOString(), nextChargeAt: kst('2030-03-10T10:00:00').toISOString() });
    const [cycle1] = (await paymentsOf(running.app, id)).filter((p) => p.cycle === 1);
    expect(cycle1).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('a switch from card to phone is told by subscription.updated with the old method in previousAttributes', async () => {
    await setClock(running.app, kst('2030-05-10T10:00:00'));
    const id = await subscribe(running.app, { amount: 5500 });
    const due = new Date((await getSubscription(running.app, id)).nextChargeAt!);
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_EXPIRED' });
    await setClock(running.app, due);
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    const { redirect } = await replace(id, { method: 'MOBILE', itemCode: 'ITEM01' });
    expect(redirect.statusCode, redirect.body).toBe(200);
    expect(await getSubscription(running.app, id)).toMatchObject({ method: 'MOBILE' });
    type Event = { type: string; data: { object: { id: string; method: string }; previousAttributes?: Record<string, unknown> } };
    // The feed shows an event once it is numbered, which waits for older transactions still in flight (the service's
    // background work among them): read it until the switch is there, as a merchant's reader continuing from its cursor.
    let switched: Event[] = [];
    await waitFor('the switch to MOBILE in the events feed', async () => {
      const events: Event[] = [];
      for (let after = 0; ; ) {
        const page = (await running.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100`, headers: apiHeaders })).json() as {
          items: (Event & { sequence: number })[];
        };
        if (page.items.length === 0) break;
        events.push(...page.items);
        after = page.items.at(-1)!.sequence;
      }
      switched = events.filter((e) => e.type === 'subscription.updated' && e.data.object.id === id && e.data.object.method === 'MOBILE');
      return switched.length > 0;
    });
    expect(switched[0]!.data.previousAttributes).toMatchObject({ method: 'CARD' });
  });

  it('an ACTIVE subscription keeps its schedule; a failed window changes nothing', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    const before = await getSubscription(running.app, id);
    const { registration, redirect: declined } = await replace(id, {}, 'decline');
    expect(declined.statusCode).toBe(422);
    expect(declined.json()).toMatchObject({ code: 'WINDOW_FAILED' });
    expect((await running.app.inject({ method: 'GET', url: `/api/v1/registrations/${registration.id}`, headers: apiHeaders })).json()).toMatchObject({
      status: 'FAILED',
      purpose: 'PAYMENT_METHOD',
      subscriptionId: id,
    });
    expect(await getSubscription(running.app, id)).toEqual(before);
    const { redirect } = await replace(id);
    expect(redirect.statusCode).toBe(200);
    const after = await getSubscription(running.app, id);
    expect(after.billingKey.id).not.toBe(before.billingKey.id);
    expect(after).toMatchObject({ status: 'ACTIVE', nextChargeAt: before.nextChargeAt, currentPeriodEnd: before.currentPeriodEnd });
  });

  it('refusals: CANCELED 409, a CARD amount 400, MOBILE when nothing is owed 409 NOT_DUE, an unknown subscription 404', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    expect((await post(`/api/v1/subscriptions/${id}/payment-method`, { amount: 5000 })).statusCode).toBe(400);
    const mobile = await post(`/api/v1/subscriptions/${id}/payment-method`, { method: 'MOBILE', itemCode: 'ITEM01' });
    expect(mobile.statusCode).toBe(409);
    expect(mobile.json().code).toBe('NOT_DUE');
    expect((await post(`/api/v1/subscriptions/${crypto.randomUUID()}/payment-method`, {})).statusCode).toBe(404);
    await post(`/api/v1/subscriptions/${id}/cancel`, {});
    const canceled = await post(`/api/v1/subscriptions/${id}/payment-method`, {});
    expect(canceled.statusCode).toBe(409);
    expect(canceled.json().code).toBe('STATE_CONFLICT');
  });
});

describe('MOBILE: window closed, updated, charged on the new chain', () => {
  it('is refused up front (409 PAYMENT_OUTCOME_UNKNOWN) while the owed cycle’s charge has an unknown outcome', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    await setClock(running.app, (await getSubscription(running.app, id)).nextChargeAt!);
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const refused = await post(`/api/v1/subscriptions/${id}/payment-method`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('PAYMENT_OUTCOME_UNKNOWN');
    expect(await running.app.db.registration.count({ where: { purpose: 'PAYMENT_METHOD' } })).toBe(0);
  });

  it('never charges a cycle a settlement file shows the gateway approved (SETTLEMENT_MISMATCH): refused up front and at the redirect', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'LIMIT_EXCEEDED' });
    await setClock(running.app, (await getSubscription(running.app, id)).nextChargeAt!);
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    // A window opened while the cycle was owed and nothing else was known.
    const created = await post(`/api/v1/subscriptions/${id}/payment-method`, {});
    expect(created.statusCode, created.body).toBe(201);
    const window = await decideWindow(running.app, created.json().window);
    // Then a settlement file shows that declined charge approved: what finish-settlement.ts writes on a STATUS line.
    const { db } = running.app;
    const [declined] = (await paymentsOf(running.app, id)).filter((p) => p.cycle === 1);
    await db.payment.update({ where: { id: declined!.id }, data: { attentionReason: 'SETTLEMENT_MISMATCH' } });
    await db.subscription.update({ where: { id }, data: { needsAttention: true, attentionReason: 'SETTLEMENT_MISMATCH' } });
    const chargesBefore = (await charges()).length;

    const redirect = await follow(running.app, window.redirectUrl, { json: true });
    expect(redirect.statusCode).not.toBe(200);
    expect((await charges()).length).toBe(chargesBefore);
    expect((await paymentsOf(running.app, id)).filter((p) => p.cycle === 1)).toMatchObject([{ status: 'FAILED' }]);
    const refused = await post(`/api/v1/subscriptions/${id}/payment-method`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('PAYMENT_OUTCOME_UNKNOWN');
  });

  it('the window payment pays the owed cycle, clears the attention and anchors the new chain; next month chains on it within ±5 days', async () => {
    const start = kst('2030-01-10T10:00:00');
    await setClock(running.app, start);
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    // Nothing charged until the ±5-day window around Feb 10 has closed.
    await setClock(running.app, kst('2030-02-16T10:00:00'));
    await runPass(running.app);
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'PAST_DUE', needsAttention: true, attentionReason: 'MOBILE_WINDOW_CLOSED' });

    const updateAt = kst('2030-02-18T10:00:00');
    await setClock(running.app, updateAt);
    const { redirect } = await replace(id, { method: 'MOBILE' });
    expect(redirect.statusCode, redirect.body).toBe(200);
    const updated = await getSubscription(running.app, id);
    expect(updated).toMatchObject({
      status: 'ACTIVE',
      needsAttention: false,
      currentPeriodStart: updateAt.toISOString(),
      nextChargeAt: kst('2030-03-18T10:00:00').toISOString(),
    });
    expect(updated).not.toHaveProperty('attentionReason');
    const payments = await paymentsOf(running.app, id);
    const cycle1 = payments.filter((p) => p.cycle === 1);
    expect(cycle1).toHaveLength(1);
    expect(cycle1[0]).toMatchObject({ status: 'SUCCEEDED', amount: 5500 });

    // Next month, on the new chain, one month after the update payment: the sandbox checks the chain and the window.
    await setClock(running.app, kst('2030-03-18T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    // The update's window charge is in the gateway's ledger as the new key's first link; the sandbox refuses a
    // charge whose lastTransactionId is not the previous transaction of its billing key, so this success chained on it.
    const ledger = await charges();
    expect(ledger.map((e) => [e.operation, e.amount])).toEqual([
      ['ISSUE_KEY', 5500],
      ['ISSUE_KEY', 5500],
      ['BILLING_CONFIRM', 5500],
    ]);
    expect(ledger[1]!.transactionId).toBe(cycle1[0]!.transactionId);
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'ACTIVE', nextChargeAt: kst('2030-04-18T10:00:00').toISOString() });
  });

  it('a window approved after the subscription was cancelled: nothing is swapped, and the charge waits for an operator’s refund', async () => {
    await setClock(running.app, kst('2030-01-10T10:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    await setClock(running.app, kst('2030-02-16T10:00:00'));
    await runPass(running.app);
    const before = await getSubscription(running.app, id);
    const created = await post(`/api/v1/subscriptions/${id}/payment-method`, {});
    expect(created.statusCode).toBe(201);
    // The customer is in the window when the merchant cancels.
    expect((await post(`/api/v1/subscriptions/${id}/cancel`, {})).statusCode).toBe(200);
    const window = await decideWindow(running.app, created.json().window);
    const redirect = await follow(running.app, window.redirectUrl, { json: true });
    expect(redirect.statusCode).toBeGreaterThanOrEqual(400);
    expect(redirect.json()).toMatchObject({ code: 'INVALID_STATE' });
    const registration = (await running.app.inject({ method: 'GET', url: `/api/v1/registrations/${created.json().id}`, headers: apiHeaders })).json();
    expect(registration).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'SUBSCRIPTION_CANCELED' });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', billingKey: { id: before.billingKey.id } });

    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const listed = (await running.app.inject({ method: 'GET', url: '/admin/payments?needsAttention=true', headers: admin })).json().items as PaymentView[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ status: 'SUCCEEDED', amount: 5500, attentionReason: 'SUBSCRIPTION_CANCELED', needsAttention: true });
    const refund = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${listed[0]!.id}/cancel`,
      headers: { ...admin, 'idempotency-key': 'refund-1' },
      payload: { reason: 'charged after cancel' },
    });
    expect(refund.statusCode, refund.body).toBe(200);
    expect((await running.app.inject({ method: 'GET', url: '/admin/payments?needsAttention=true', headers: admin })).json().items).toEqual([]);
  });
});
