// What an erasure refuses (docs/operating.md "A customer asks to be forgotten"): a userId no row carries (404), each
// blocker kind (409 ERASURE_BLOCKED naming it), a request without a reason or an Idempotency-Key (400); and that a
// refusal changes nothing: every table's rows are the same before and after (the idempotency record of a coded refusal
// aside, which stores it by design). Blockers are made through the real flows and the sandbox's faults; the two states
// no sandbox flow reaches quickly (NEEDS_ATTENTION, WITHDRAWAL_REFUND_DUE) are written by hand.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { createRegistration, sandboxFault } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { kst } from '../portal/portal-helpers.ts';
import { digestOfTables, erase } from './erasure-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2030-03-01T10:00:00')));

const USER = 'refused-customer-01';

/** The erasure's answer, and that nothing but the idempotency record changed. */
async function refused(userId: string, body: Record<string, unknown>, key?: string | null) {
  const before = await digestOfTables(running.app.db);
  const response = await erase(running.app, userId, body, key);
  expect(await digestOfTables(running.app.db)).toEqual(before);
  return response;
}

const blockersOf = (response: { json(): unknown }) => (response.json() as { details: { blockers: unknown[] } }).details.blockers;

describe('an erasure refuses', () => {
  it('400 without a reason or with an empty one, and without an Idempotency-Key', async () => {
    await subscribe(running.app, { userId: USER, amount: 9900 });
    expect((await refused(USER, {})).statusCode).toBe(400);
    expect((await refused(USER, { reason: '' })).statusCode).toBe(400);
    const keyless = await refused(USER, { reason: 'privacy', cancelOpenSubscriptions: true }, null);
    expect(keyless.statusCode).toBe(400);
    expect(keyless.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REQUIRED' });
  });

  it('404 CUSTOMER_NOT_FOUND for a userId never seen', async () => {
    await subscribe(running.app, { userId: USER, amount: 9900 });
    const response = await refused('never-seen', { reason: 'privacy' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'CUSTOMER_NOT_FOUND' });
  });

  it('409 for a subscription not CANCELED, unless cancelOpenSubscriptions (then canceled now, reason ERASED)', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900 });
    const response = await refused(USER, { reason: 'privacy' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: 'ERASURE_BLOCKED' });
    expect(blockersOf(response)).toEqual([{ kind: 'subscription', id, reason: 'NOT_CANCELED' }]);
    expect((await erase(running.app, USER, { reason: 'privacy', cancelOpenSubscriptions: true })).statusCode).toBe(201);
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'ERASED', nextChargeAt: null });
  });

  it('409 for a payment of unknown outcome, and for a refund of unknown outcome, even with cancelOpenSubscriptions', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900 });
    const [initial] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500' });
    const refund = await running.app.inject({
      method: 'POST',
      url: `/admin/payments/${initial!.id}/cancel`,
      headers: { ...adminHeaders, 'idempotency-key': 'refund-1' },
      payload: { amount: 1000, reason: 'goodwill' },
    });
    expect(refund.statusCode, refund.body).toBe(502);
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    await setClock(running.app, new Date((await getSubscription(running.app, id)).nextChargeAt!));
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const renewal = (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN')!;
    const refundAttempt = await running.app.db.paymentAttempt.findFirstOrThrow({ where: { paymentId: initial!.id, operation: 'CANCEL' } });

    const response = await refused(USER, { reason: 'privacy', cancelOpenSubscriptions: true });
    expect(response.statusCode).toBe(409);
    expect(blockersOf(response)).toEqual([
      { kind: 'payment', id: renewal.id, reason: 'UNKNOWN' },
      { kind: 'refund', id: refundAttempt.id, reason: 'UNKNOWN' },
    ]);
  });

  it('409 for a registration or an order PENDING or NEEDS_ATTENTION', async () => {
    const registration = await createRegistration(running.app, { userId: USER, method: 'CARD', amount: 5000, orderName: 'Plan' });
    const order = await running.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: apiHeaders,
      payload: { userId: USER, method: 'CARD', amount: 3000, orderName: 'Once' },
    });
    expect(order.statusCode, order.body).toBe(201);
    const pending = await refused(USER, { reason: 'privacy' });
    expect(pending.statusCode).toBe(409);
    expect(blockersOf(pending)).toEqual([
      { kind: 'order', id: order.json().id, reason: 'PENDING' },
      { kind: 'registration', id: registration.id, reason: 'PENDING' },
    ]);
    await running.app.db.registration.update({ where: { id: registration.id }, data: { status: 'NEEDS_ATTENTION' } });
    await running.app.db.order.update({ where: { id: order.json().id }, data: { status: 'NEEDS_ATTENTION' } });
    expect(blockersOf(await refused(USER, { reason: 'privacy' }))).toEqual([
      { kind: 'order', id: order.json().id, reason: 'NEEDS_ATTENTION' },
      { kind: 'registration', id: registration.id, reason: 'NEEDS_ATTENTION' },
    ]);
  });

  it('409 for a withdrawal refund still owed (WITHDRAWAL_REFUND_DUE), even on a CANCELED subscription', async () => {
    const id = await subscribe(running.app, { userId: USER, amount: 9900 });
    await running.app.db.subscription.update({
      where: { id },
      data: { status: 'CANCELED', canceledAt: running.app.clock.now(), needsAttention: true, attentionReason: 'WITHDRAWAL_REFUND_DUE', refundDue: 9900 },
    });
    const response = await refused(USER, { reason: 'privacy', cancelOpenSubscriptions: true });
    expect(response.statusCode).toBe(409);
    expect(blockersOf(response)).toEqual([{ kind: 'subscription', id, reason: 'WITHDRAWAL_REFUND_DUE' }]);
  });
});
