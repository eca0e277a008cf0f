// A Toss registration that is not key-only charges its first payment at once (docs/api.md "Gateways"), through the
// public routes against the Toss sandbox: Toss's key issuance charges nothing (the adapter's issueCharges), so the
// success redirect issues the key, stores it, then charges the INITIAL payment with it under the registration's lease.
// Approved: the registration completes and the subscription starts with that payment as cycle 0, as Danal's does
// (same events); declined: the registration fails and the key is revoked; unknown: the registration waits for an
// operator, whose resolve finishes it as the live answer would; not sent: the registration stays pending and a replay
// charges it. No replay of the redirect, sequential or concurrent, ever charges twice.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import type { PublicEvent } from '../../../src/modules/events/events.render.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { follow } from '../../helpers/checkout.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { waitFor } from '../../helpers/service.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildTestApp(database.url, { env: { CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) } });
  await setClock(app, '2027-03-10T01:00:00.000Z');
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(async () => {
  await truncateAll(app.db);
  await app.inject({ method: 'DELETE', url: '/sandbox/toss/_control/faults' });
});

interface TossWindow {
  clientKey: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
}

interface Registered {
  id: string;
  orderId: string;
  window: TossWindow;
  redirectUrl: string;
}

/** A Toss registration charging 15,000 monthly, approved in Toss's window: the success redirect to follow. */
async function approvedRegistration(userId: string): Promise<Registered> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/registrations',
    headers: apiHeaders,
    payload: { userId, method: 'CARD', amount: 15000, orderName: 'Toss plan', gateway: 'TOSS' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const registration = created.json() as { id: string; orderId: string; window: TossWindow };
  const { window } = registration;
  const authorized = await app.inject({
    method: 'POST',
    url: '/sandbox/toss/window/authorize',
    payload: { clientKey: window.clientKey, customerKey: window.customerKey, successUrl: window.successUrl, failUrl: window.failUrl },
  });
  expect(authorized.statusCode, authorized.body).toBe(200);
  return { ...registration, redirectUrl: authorized.json().redirectUrl as string };
}

async function tossFault(spec: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/sandbox/toss/_control/faults', payload: spec });
  expect(response.statusCode, response.body).toBeLessThan(300);
}

/** What Toss booked for an orderId: its approvals (the sandbox's ledger). */
async function tossCharges(orderId: string) {
  const entries = (await app.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).json().entries as Array<{
    type: string;
    orderId: string;
    amount: number;
    paymentKey: string;
  }>;
  return entries.filter((e) => e.type === 'CHARGE' && e.orderId === orderId);
}

const registrationOf = (id: string) =>
  app.db.registration.findUniqueOrThrow({ where: { id }, include: { subscription: true, payments: { include: { attempts: true } } } });
const keyOf = (registrationId: string) => app.db.billingKey.findFirstOrThrow({ where: { registrationId } });

/** Every event of this database, once all are numbered (the feed shows an event once numbered). */
async function allEvents(): Promise<PublicEvent[]> {
  await waitFor('events numbered', async () => {
    await app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: apiHeaders });
    return (await app.db.event.count({ where: { sequence: null } })) === 0;
  });
  const items: PublicEvent[] = [];
  for (let cursor = 0; ; ) {
    const page = (await app.inject({ method: 'GET', url: `/api/v1/events?after=${cursor}&limit=100`, headers: apiHeaders })).json() as {
      items: PublicEvent[];
      nextCursor: string | null;
    };
    items.push(...page.items);
    if (!page.nextCursor) return items;
    cursor = Number(page.nextCursor);
  }
}

/** The events of one registration, its subscription and its payment: type and the fields of the object, sorted. */
async function eventsOfRegistration(registrationId: string) {
  const registration = await registrationOf(registrationId);
  const ids = new Set([registrationId, registration.subscription?.id, ...registration.payments.map((p) => p.id)]);
  return (await allEvents())
    .filter((e) => ids.has((e.data.object as { id: string }).id))
    .map((e) => `${e.type} ${Object.keys(e.data.object).sort().join(',')}`)
    .sort();
}

const resolve = (paymentId: string, payload: Record<string, unknown>) =>
  app.inject({
    method: 'POST',
    url: `/admin/payments/${paymentId}/resolve`,
    headers: { ...adminHeaders, 'idempotency-key': crypto.randomUUID() },
    payload: { reason: 'checked with Toss', ...payload },
  });

describe('a Toss registration charges its first payment at once', () => {
  it('approved: COMPLETED, its INITIAL payment SUCCEEDED and charged once, the next charge one interval later, the events of a Danal registration', async () => {
    const registered = await approvedRegistration('initial-ok');
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.statusCode, done.body).toBe(200);
    const subscriptionId = done.json().subscriptionId as string;
    expect(done.json()).toMatchObject({ status: 'success', registrationId: registered.id, subscriptionId });

    const row = await registrationOf(registered.id);
    expect(row.status).toBe('COMPLETED');
    expect(row.payments).toHaveLength(1);
    const [payment] = row.payments;
    expect(payment).toMatchObject({
      kind: 'INITIAL',
      cycle: 0,
      status: 'SUCCEEDED',
      amount: 15000,
      gateway: 'TOSS',
      orderId: registered.orderId,
      subscriptionId,
    });
    expect(payment!.attempts.map((a) => [a.operation, a.status, a.orderId])).toEqual([['BILLING_CONFIRM', 'SUCCEEDED', registered.orderId]]);
    const charges = await tossCharges(registered.orderId);
    expect(charges.map((c) => c.amount)).toEqual([15000]);
    expect(payment!.transactionId).toBe(charges[0]!.paymentKey);
    expect(await keyOf(registered.id)).toMatchObject({ gateway: 'TOSS', status: 'ACTIVE', customerKey: registered.window.customerKey });

    // Cycle 0 is paid: the next charge is one month after the approval, as a Danal registration's.
    const subscription = await getSubscription(app, subscriptionId);
    expect(subscription).toMatchObject({ status: 'ACTIVE', currentPeriodStart: payment!.approvedAt!.toISOString() });
    expect(subscription.nextChargeAt).toBe('2027-04-10T01:00:00.000Z');
    expect(subscription.currentPeriodEnd).toBe(subscription.nextChargeAt);
    expect((await paymentsOf(app, subscriptionId)).map((p) => [p.kind, p.status])).toEqual([['INITIAL', 'SUCCEEDED']]);

    // A reload of the redirect shows the same result and charges nothing.
    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ status: 'success', subscriptionId });
    expect(await tossCharges(registered.orderId)).toHaveLength(1);

    // The same events, with the same shapes, as a Danal registration's.
    const danal = await subscribe(app, { userId: 'danal-peer', amount: 15000 });
    const danalRegistration = (await app.db.subscription.findUniqueOrThrow({ where: { id: danal } })).registrationId!;
    const tossEvents = await eventsOfRegistration(registered.id);
    expect(tossEvents.map((e) => e.split(' ')[0])).toEqual(['payment.succeeded', 'registration.completed', 'subscription.created']);
    expect(tossEvents).toEqual(await eventsOfRegistration(danalRegistration));
  });

  it('concurrent hits of the redirect charge once and answer the same', async () => {
    const registered = await approvedRegistration('initial-concurrent');
    const answers = await Promise.all([1, 2, 3].map(() => follow(app, registered.redirectUrl, { json: true })));
    const subscriptionIds = new Set(answers.map((a) => a.json().subscriptionId as string | undefined));
    expect(subscriptionIds.size, answers.map((a) => a.body).join('\n')).toBe(1);
    expect([...subscriptionIds][0]).toEqual(expect.any(String));
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
    expect((await registrationOf(registered.id)).payments.flatMap((p) => p.attempts)).toHaveLength(1);
  });

  it('declined at the first charge: FAILED with the gateway’s code, the key REVOKED, no subscription, and a replay charges nothing', async () => {
    const registered = await approvedRegistration('initial-declined');
    await tossFault({ operation: 'CHARGE', kind: 'decline', code: 'REJECT_CARD_PAYMENT' });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.statusCode, done.body).toBe(502);
    expect(done.json()).toMatchObject({ code: 'GATEWAY_DECLINED', details: { gatewayCode: 'REJECT_CARD_PAYMENT' } });

    const row = await registrationOf(registered.id);
    expect(row).toMatchObject({ status: 'FAILED', failureCode: 'GATEWAY_DECLINED', subscription: null });
    expect(row.failureMessage).toContain('REJECT_CARD_PAYMENT');
    expect(row.payments).toMatchObject([{ kind: 'INITIAL', status: 'FAILED', failureCode: 'REJECT_CARD_PAYMENT', subscriptionId: null }]);
    expect(row.payments[0]!.attempts.map((a) => a.status)).toEqual(['DECLINED']);
    expect(await keyOf(registered.id)).toMatchObject({ status: 'REVOKED' });
    expect(await app.db.subscription.count()).toBe(0);
    expect(await tossCharges(registered.orderId)).toEqual([]);
    const read = (await app.inject({ method: 'GET', url: `/api/v1/registrations/${registered.id}`, headers: apiHeaders })).json();
    expect(read).toMatchObject({ status: 'FAILED', failureCode: 'GATEWAY_DECLINED' });

    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ code: 'INVALID_STATE' });
    expect(await tossCharges(registered.orderId)).toEqual([]);
    expect((await registrationOf(registered.id)).payments[0]!.attempts).toHaveLength(1);
  });

  it('an answer lost after Toss booked it: NEEDS_ATTENTION, the payment UNKNOWN, never sent again; the operator’s resolve completes it', async () => {
    const registered = await approvedRegistration('initial-unknown');
    await tossFault({ operation: 'CHARGE', kind: 'timeout', booked: true });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN', details: { paymentId: expect.any(String) } });
    const paymentId = done.json().details.paymentId as string;
    const read = (await app.inject({ method: 'GET', url: `/api/v1/registrations/${registered.id}`, headers: apiHeaders })).json();
    expect(read).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'PAYMENT_OUTCOME_UNKNOWN' });
    const payment = (await app.inject({ method: 'GET', url: `/api/v1/payments/${paymentId}`, headers: apiHeaders })).json();
    expect(payment).toMatchObject({ kind: 'INITIAL', status: 'UNKNOWN', gateway: 'TOSS', attempts: [{ outcome: 'UNKNOWN' }] });
    const booked = await tossCharges(registered.orderId);
    expect(booked).toHaveLength(1);

    // Reloads (and concurrent ones) show the outcome: nothing is sent again.
    const replays = await Promise.all([1, 2].map(() => follow(app, registered.redirectUrl, { json: true })));
    for (const replay of replays) expect(replay.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
    const row = await registrationOf(registered.id);
    expect(row.status).toBe('NEEDS_ATTENTION');
    expect(row.payments[0]!.attempts.map((a) => [a.operation, a.status])).toEqual([['BILLING_CONFIRM', 'UNKNOWN']]);
    expect(await keyOf(registered.id)).toMatchObject({ status: 'ACTIVE' });

    // The operator finds it approved at Toss: the registration completes with its subscription, cycle 0 paid.
    const resolved = await resolve(paymentId, { outcome: 'SUCCEEDED', transactionId: booked[0]!.paymentKey });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'SUCCEEDED', transactionId: booked[0]!.paymentKey });
    const after = await registrationOf(registered.id);
    expect(after.status).toBe('COMPLETED');
    expect(after.subscription).toMatchObject({ status: 'ACTIVE', cycle: 1, billingKeyId: (await keyOf(registered.id)).id });
    expect(after.payments[0]).toMatchObject({ status: 'SUCCEEDED', subscriptionId: after.subscription!.id });
    expect(after.payments[0]!.attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
    const subscription = await getSubscription(app, after.subscription!.id);
    expect(new Date(subscription.nextChargeAt!).getTime()).toBeGreaterThan(app.clock.now().getTime());
    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ status: 'success', subscriptionId: after.subscription!.id });
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
  });

  it('an unknown first charge is finished by the inquiry pass: the registration completes with its subscription, charged once', async () => {
    const registered = await approvedRegistration('initial-inquired');
    await tossFault({ operation: 'CHARGE', kind: 'timeout', booked: true });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const booked = await tossCharges(registered.orderId);
    expect(booked).toHaveLength(1);

    // The first lookup is one delay (a minute) after the charge became UNKNOWN.
    await setClock(app, new Date(app.clock.now().getTime() + 2 * 60_000));
    const run = await app.inject({ method: 'POST', url: '/admin/inquiries/run', headers: adminHeaders });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toMatchObject({ asked: 1, succeeded: 1, failed: 0 });

    const after = await registrationOf(registered.id);
    expect(after.status).toBe('COMPLETED');
    expect(after.subscription).toMatchObject({ status: 'ACTIVE', cycle: 1 });
    expect(after.payments[0]).toMatchObject({ status: 'SUCCEEDED', transactionId: booked[0]!.paymentKey, subscriptionId: after.subscription!.id });
    expect(after.payments[0]!.attempts.map((a) => a.status)).toEqual(['SUCCEEDED']);
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
    const again = await app.inject({ method: 'POST', url: '/admin/inquiries/run', headers: adminHeaders });
    expect(again.json()).toMatchObject({ asked: 0 });
  });

  it('an unknown first charge the operator resolves FAILED: the registration fails and its key is revoked', async () => {
    const registered = await approvedRegistration('initial-unknown-failed');
    await tossFault({ operation: 'CHARGE', kind: 'http_500', booked: false });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const paymentId = done.json().details.paymentId as string;

    const resolved = await resolve(paymentId, { outcome: 'FAILED' });
    expect(resolved.statusCode, resolved.body).toBe(200);
    const after = await registrationOf(registered.id);
    expect(after).toMatchObject({ status: 'FAILED', failureCode: 'RESOLVED_FAILED', subscription: null });
    expect(after.payments[0]).toMatchObject({ status: 'FAILED', failureCode: 'RESOLVED_FAILED' });
    expect(await keyOf(registered.id)).toMatchObject({ status: 'REVOKED' });
    expect(await app.db.subscription.count()).toBe(0);
    expect(await tossCharges(registered.orderId)).toEqual([]);
  });

  it('not sent (Toss refused our credentials): the registration stays pending with its key, and a replay charges the same attempt once', async () => {
    const registered = await approvedRegistration('initial-not-sent');
    await tossFault({ operation: 'CHARGE', kind: 'decline', code: 'UNAUTHORIZED_KEY' });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'GATEWAY_UNAVAILABLE' });
    const pending = await registrationOf(registered.id);
    expect(pending).toMatchObject({ status: 'PENDING', leaseOwner: null, subscription: null });
    expect(pending.payments).toMatchObject([{ status: 'PENDING' }]);
    expect(pending.payments[0]!.attempts.map((a) => a.status)).toEqual(['NOT_SENT']);
    expect(await keyOf(registered.id)).toMatchObject({ status: 'ACTIVE' });
    expect(await tossCharges(registered.orderId)).toEqual([]);

    // The customer tries again: the key is not issued twice (the authKey is single use); the attempt is sent as itself.
    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ status: 'success', subscriptionId: expect.any(String) });
    const after = await registrationOf(registered.id);
    expect(after.status).toBe('COMPLETED');
    expect(after.payments[0]!.attempts.map((a) => [a.attemptNumber, a.status, a.orderId])).toEqual([[1, 'SUCCEEDED', registered.orderId]]);
    expect(await app.db.billingKey.count({ where: { registrationId: registered.id } })).toBe(1);
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
  });

  it('an issuance whose answer was lost before Toss processed it: NEEDS_ATTENTION with nothing charged; a replay issues the key and charges once', async () => {
    const registered = await approvedRegistration('initial-issue-unknown');
    await tossFault({ operation: 'ISSUE_BILLING_KEY', kind: 'http_500', booked: false });
    const done = await follow(app, registered.redirectUrl, { json: true });
    expect(done.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const held = await registrationOf(registered.id);
    expect(held).toMatchObject({ status: 'NEEDS_ATTENTION', payments: [] });
    expect(await app.db.billingKey.count()).toBe(0);

    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ status: 'success', subscriptionId: expect.any(String) });
    expect((await registrationOf(registered.id)).payments).toMatchObject([{ kind: 'INITIAL', status: 'SUCCEEDED' }]);
    expect(await tossCharges(registered.orderId)).toHaveLength(1);
  });

  it('a charge left in flight by a request that stopped: the replay sends nothing, the payment becomes UNKNOWN and the registration waits', async () => {
    // The key stored and the charge written (a not-sent answer leaves exactly that), then a request that took both
    // leases and stopped before recording anything: its lease has run out.
    const registered = await approvedRegistration('initial-stopped');
    await tossFault({ operation: 'CHARGE', kind: 'decline', code: 'UNAUTHORIZED_KEY' });
    expect((await follow(app, registered.redirectUrl, { json: true })).json()).toMatchObject({ code: 'GATEWAY_UNAVAILABLE' });
    const past = new Date(app.clock.now().getTime() - 1);
    const [payment] = (await registrationOf(registered.id)).payments;
    await app.db.registration.update({ where: { id: registered.id }, data: { leaseOwner: 'stopped', leaseExpiresAt: past } });
    await app.db.paymentAttempt.updateMany({ where: { paymentId: payment!.id }, data: { status: 'IN_FLIGHT', leaseOwner: 'stopped', leaseExpiresAt: past } });

    const replay = await follow(app, registered.redirectUrl, { json: true });
    expect(replay.json()).toMatchObject({ code: 'PAYMENT_OUTCOME_UNKNOWN' });
    const after = await registrationOf(registered.id);
    expect(after).toMatchObject({ status: 'NEEDS_ATTENTION', failureCode: 'PAYMENT_OUTCOME_UNKNOWN', leaseOwner: null, subscription: null });
    expect(after.payments).toMatchObject([{ status: 'UNKNOWN', attentionReason: 'LEASE_EXPIRED' }]);
    expect(after.payments[0]!.attempts.map((a) => a.status)).toEqual(['UNKNOWN']);
    expect(await tossCharges(registered.orderId)).toEqual([]);
  });
});
