// The Toss outcome classes the engine acts on by the adapter's outcome table (docs/api.md "Gateways"), through the
// public routes against the Toss sandbox and its fault injection:
// - a dead instrument (INVALID_STOPPED_CARD, a decline the table marks INSTRUMENT_DEAD) fails the payment with no retry,
//   whatever the retry delays, and leaves the subscription PAST_DUE under PAYMENT_METHOD_INVALID until a new payment
//   method, after which the cycle is charged once; an operator's charge meets the same outcome;
// - our configuration refused (401 UNAUTHORIZED_KEY, NOT_SENT for REFUSED_UNPROCESSED) declines nothing: the pass
//   stops calling Toss, leaves its rows due and charges Danal's; /ready and the metrics say why until Toss answers
//   normally again, and the next pass charges the Toss rows once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { TOSS_SANDBOX_SECRET_KEY } from '../../src/dev-secrets.ts';
import { apiHeaders, buildTestApp } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../helpers/database.ts';
import { waitFor } from '../helpers/service.ts';
import { approveTossWindow, subscribeThroughToss } from '../helpers/gateways.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  // One call at a time: the pass's first refused Toss call is its only one (the others are never sent).
  app = await buildTestApp(database.url, { env: { CLOCK: 'simulated', SCHEDULER_CONCURRENCY: '1' } });
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(async () => {
  await truncateAll(app.db);
  await app.inject({ method: 'DELETE', url: '/sandbox/toss/_control/faults' });
  await setClock(app, '2027-03-10T01:00:00.000Z');
});

const DAY = 86_400_000;
const later = (ms: number) => new Date(app.clock.now().getTime() + ms);

/** The customer approves Toss's window; its success redirect is followed. Answers the redirect's JSON. */
async function approve(window: Parameters<typeof approveTossWindow>[1]) {
  return (await approveTossWindow(app, window)).json() as { subscriptionId: string };
}

/** A Toss subscription through the public routes: key only, due at once (its first charge is the next pass's). */
async function tossSubscription(userId: string): Promise<string> {
  return (await subscribeThroughToss(app, { userId, amount: 15000, orderName: 'Toss plan' })).subscriptionId;
}

const tossFault = async (spec: Record<string, unknown>) => {
  const response = await app.inject({ method: 'POST', url: '/sandbox/toss/_control/faults', payload: { operation: 'CHARGE', kind: 'decline', ...spec } });
  expect(response.statusCode, response.body).toBeLessThan(300);
};

const tossCharges = async () =>
  ((await app.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).json().entries as Array<{ type: string; orderId: string }>).filter(
    (e) => e.type === 'CHARGE',
  );

/** When the payment is retried (not in its public shape: read from its row). */
const nextRetryAt = async (id: string) => (await app.db.payment.findUniqueOrThrow({ where: { id }, select: { nextRetryAt: true } })).nextRetryAt;

/** Every event of the feed, oldest first. */
async function allEvents() {
  type Event = { type: string; data: { object: Record<string, unknown> } };
  const events: Event[] = [];
  for (let after = 0; ; ) {
    const page = (await app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100`, headers: apiHeaders })).json() as {
      items: (Event & { sequence: number })[];
    };
    if (page.items.length === 0) return events;
    events.push(...page.items);
    after = page.items.at(-1)!.sequence;
  }
}

/** One sample's value in GET /metrics, e.g. metric('x_total{a="b"}'). */
async function metric(sample: string): Promise<number | undefined> {
  const line = (await app.inject({ method: 'GET', url: '/metrics' })).body.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

describe('a dead instrument', () => {
  it('fails the payment with no retry, leaves the subscription PAST_DUE under PAYMENT_METHOD_INVALID, and a new payment method charges the cycle once', async () => {
    const id = await tossSubscription('toss-dead-1');
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });

    // The next month Toss answers the card stopped.
    await setClock(app, (await getSubscription(app, id)).nextChargeAt!);
    await tossFault({ code: 'INVALID_STOPPED_CARD' });
    expect(await runPass(app)).toMatchObject({ claimed: 1, declined: 1 });
    const sub = await getSubscription(app, id);
    expect(sub).toMatchObject({ status: 'PAST_DUE', needsAttention: true, attentionReason: 'PAYMENT_METHOD_INVALID' });
    expect(sub.nextChargeAt ?? null).toBeNull();
    const failed = (await paymentsOf(app, id))[1]!;
    expect(failed).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_STOPPED_CARD' });
    expect(await nextRetryAt(failed.id)).toBeNull();
    await waitFor('the decline’s events in the feed', async () => {
      const events = await allEvents();
      const paymentFailed = events.some((e) => e.type === 'payment.failed' && e.data.object.id === failed.id);
      const raised = events.some(
        (e) => e.type === 'subscription.updated' && e.data.object.id === id && e.data.object.attentionReason === 'PAYMENT_METHOD_INVALID',
      );
      return paymentFailed && raised;
    });

    // Past every RETRY_DELAYS step (1d, 3d, 5d by default): nothing is tried again.
    const chargesBefore = (await tossCharges()).length;
    for (const days of [2, 4, 6, 10]) {
      await setClock(app, later(days * DAY));
      expect(await runPass(app)).toMatchObject({ claimed: 0 });
    }
    expect((await tossCharges()).length).toBe(chargesBefore);
    expect((await paymentsOf(app, id))[1]!.attempts!.map((a) => a.outcome)).toEqual(['DECLINED']);
    expect(await getSubscription(app, id)).toMatchObject({ status: 'PAST_DUE', attentionReason: 'PAYMENT_METHOD_INVALID' });

    // The customer gives a new card (through Toss again): the attention clears and the cycle is due at once.
    const replaced = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${id}/payment-method`,
      headers: apiHeaders,
      payload: { method: 'CARD', gateway: 'TOSS' },
    });
    expect(replaced.statusCode, replaced.body).toBe(201);
    await approve(replaced.json().window);
    const after = await getSubscription(app, id);
    expect(after).toMatchObject({ status: 'PAST_DUE', needsAttention: false });
    expect(after.attentionReason).toBeUndefined();
    expect(new Date(after.nextChargeAt!).getTime()).toBeLessThanOrEqual(app.clock.now().getTime());

    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await runPass(app)).toMatchObject({ claimed: 0 });
    const paid = (await paymentsOf(app, id))[1]!;
    expect(paid).toMatchObject({ id: failed.id, status: 'SUCCEEDED' });
    expect(paid.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'SUCCEEDED']);
    expect((await tossCharges()).filter((e) => paid.attempts!.some((a) => a.orderId === e.orderId))).toHaveLength(1);
    expect(await getSubscription(app, id)).toMatchObject({ status: 'ACTIVE', needsAttention: false });
  });

  it('meets an operator’s charge the same way', async () => {
    const id = await tossSubscription('toss-dead-2');
    expect(await runPass(app)).toMatchObject({ succeeded: 1 });
    await setClock(app, (await getSubscription(app, id)).nextChargeAt!);
    await tossFault({ code: 'INVALID_CARD_EXPIRATION' });
    const charged = await app.inject({
      method: 'POST',
      url: `/admin/subscriptions/${id}/charge`,
      headers: { ...adminHeaders, 'idempotency-key': `dead-${id}` },
      payload: { reason: 'customer asked' },
    });
    expect(charged.statusCode, charged.body).toBe(402);
    expect(charged.json()).toMatchObject({ details: { gatewayCode: 'INVALID_CARD_EXPIRATION' } });
    expect(await getSubscription(app, id)).toMatchObject({ status: 'PAST_DUE', needsAttention: true, attentionReason: 'PAYMENT_METHOD_INVALID' });
    const failed = (await paymentsOf(app, id))[1]!;
    expect(failed).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_CARD_EXPIRATION' });
    expect(await nextRetryAt(failed.id)).toBeNull();
    await setClock(app, later(10 * DAY));
    expect(await runPass(app)).toMatchObject({ claimed: 0 });
  });

  it('a decline that may recover is retried as before', async () => {
    const id = await tossSubscription('toss-recover-1');
    expect(await runPass(app)).toMatchObject({ succeeded: 1 });
    await setClock(app, (await getSubscription(app, id)).nextChargeAt!);
    await tossFault({ code: 'REJECT_CARD_COMPANY' });
    expect(await runPass(app)).toMatchObject({ declined: 1 });
    const sub = await getSubscription(app, id);
    expect(sub).toMatchObject({ status: 'PAST_DUE', needsAttention: false });
    expect(sub.nextChargeAt).not.toBeNull();
    expect((await nextRetryAt((await paymentsOf(app, id))[1]!.id))?.toISOString()).toBe(sub.nextChargeAt);
  });
});

describe('our configuration refused', () => {
  it('leaves the Toss rows due and declines nothing, charges Danal’s, says why on /ready and in the metrics, and charges Toss once fixed', async () => {
    const danal = [await subscribe(app, { userId: 'danal-1' }), await subscribe(app, { userId: 'danal-2' })];
    const toss = [await tossSubscription('toss-conf-1'), await tossSubscription('toss-conf-2')];
    await setClock(app, later(32 * DAY));
    const refusedBefore = (await metric('billing_gateway_configuration_refused_total{gateway="TOSS"}')) ?? 0;
    const notSentBefore = (await metric('billing_gateway_calls_total{gateway="TOSS",operation="BILLING_CONFIRM",outcome="NOT_SENT"}')) ?? 0;
    const tossChargesBefore = (await tossCharges()).length;
    // Toss refuses our secret key on every call until the fault is removed.
    await tossFault({ code: 'UNAUTHORIZED_KEY', count: 100 });

    expect(await runPass(app)).toMatchObject({ claimed: 4, succeeded: 2, declined: 0, unknown: 0, skipped: 2 });
    for (const id of danal) expect((await paymentsOf(app, id)).map((p) => p.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    for (const id of toss) {
      const sub = await getSubscription(app, id);
      expect(sub).toMatchObject({ status: 'ACTIVE', needsAttention: false });
      expect(new Date(sub.nextChargeAt!).getTime()).toBeLessThanOrEqual(app.clock.now().getTime());
      for (const payment of await paymentsOf(app, id)) expect(payment.status).not.toBe('FAILED');
    }
    expect((await tossCharges()).slice(tossChargesBefore)).toEqual([]);
    // One call refused; the pass sent no other to Toss.
    expect(await metric('billing_gateway_configuration_refused_total{gateway="TOSS"}')).toBe(refusedBefore + 1);
    expect(await metric('billing_gateway_calls_total{gateway="TOSS",operation="BILLING_CONFIRM",outcome="NOT_SENT"}')).toBe(notSentBefore + 1);
    expect(await metric('billing_gateway_configuration_refused{gateway="TOSS"}')).toBe(1);
    expect(await metric('billing_gateway_configuration_refused{gateway="DANAL"}')).toBe(0);

    const ready = await app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({
      status: 'not_ready',
      reason: expect.stringContaining('TOSS UNAUTHORIZED_KEY'),
      checks: [{ name: 'gateway:TOSS', code: 'UNAUTHORIZED_KEY', since: app.clock.now().toISOString() }],
    });
    expect(ready.body).not.toContain(TOSS_SANDBOX_SECRET_KEY);

    // Fixed: the next pass charges each Toss row once, under the attempt prepared before; /ready is ready again.
    await app.inject({ method: 'DELETE', url: '/sandbox/toss/_control/faults' });
    expect(await runPass(app)).toMatchObject({ claimed: 2, succeeded: 2, declined: 0, unknown: 0 });
    for (const id of toss) {
      const payments = await paymentsOf(app, id);
      expect(payments.map((p) => p.status)).toEqual(['SUCCEEDED']);
      expect(payments[0]!.attempts!.map((a) => a.outcome)).toEqual(['SUCCEEDED']);
      expect((await tossCharges()).filter((e) => e.orderId === payments[0]!.orderId)).toHaveLength(1);
    }
    const readyAgain = await app.inject({ method: 'GET', url: '/ready' });
    expect([readyAgain.statusCode, readyAgain.json()]).toEqual([200, { status: 'ready' }]);
    expect(await metric('billing_gateway_configuration_refused{gateway="TOSS"}')).toBe(0);
  });
});
