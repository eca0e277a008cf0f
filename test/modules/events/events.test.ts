// Merchant events (issue #13, docs/architecture.md, invariant 12): each change a merchant cares about has its event, written by
// the path that causes it in the change's own transaction, with the public shape after the change and the old
// values of what changed; the feed never lets a reader that continues from its last sequence miss one.
import Fastify from 'fastify';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { apiHeaders, TEST_SECRET_KEY } from '../../helpers/app.ts';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { readBillingKey } from '../../../src/modules/billing-keys/billing-keys.service.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { createRegistration, decideWindow, follow, sandboxFault } from '../../helpers/checkout.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import type { PublicEvent } from '../../../src/modules/events/events.render.ts';
import { EventList } from '../../../src/modules/events/events.schemas.ts';
import { EVENT_TYPES } from '../../../src/modules/events/event-types.ts';
import { createEventsService } from '../../../src/modules/events/events.service.ts';
import { waitFor } from '../../helpers/service.ts';

const running = useRunningApp({ CLOCK: 'simulated', RETRY_DELAYS: '1d,3d' });
const PHONE = '01012345678';

/**
 * Events are numbered once no older transaction is in flight in the whole cluster, and the other test files run
 * theirs meanwhile: wait until every committed event of this database is numbered, then read.
 */
async function numbered(): Promise<void> {
  await waitFor('events numbered', async () => {
    await running.app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: apiHeaders });
    return (await running.app.db.event.count({ where: { sequence: null } })) === 0;
  });
}

async function feed(after = 0, query = ''): Promise<PublicEvent[]> {
  await numbered();
  const items: PublicEvent[] = [];
  let cursor = after;
  for (;;) {
    const response = await running.app.inject({ method: 'GET', url: `/api/v1/events?after=${cursor}&limit=100${query}`, headers: apiHeaders });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json() as { items: PublicEvent[]; nextCursor: string | null };
    items.push(...page.items);
    if (!page.nextCursor) return items;
    cursor = Number(page.nextCursor);
  }
}

/** One read of the feed, without waiting for numbering. */
async function page(after: number): Promise<PublicEvent[]> {
  const response = await running.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100`, headers: apiHeaders });
  return (response.json() as { items: PublicEvent[] }).items;
}

const lastSequence = async () => (await feed()).at(-1)?.sequence ?? 0;
const types = (events: PublicEvent[]) => events.map((e) => e.type);
const of = (events: PublicEvent[], type: string) => events.filter((e) => e.type === type);
const admin = (method: 'POST' | 'PATCH', url: string, payload: object, key = crypto.randomUUID()) =>
  running.app.inject({ method, url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });

describe('every event type, emitted by the path that causes it', () => {
  it('a subscription through the window: the initial payment, the subscription and the completed registration, in one transaction', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900, userPhoneNumber: PHONE, userName: '홍길동' });
    const events = await feed();
    expect(types(events).sort()).toEqual(['payment.succeeded', 'registration.completed', 'subscription.created']);
    const [created] = of(events, 'subscription.created');
    expect(created!.data.object).toEqual(await getSubscription(running.app, id));
    expect(created!.data.previousAttributes).toBeUndefined();
    const [completed] = of(events, 'registration.completed');
    expect(completed!.data.object).toMatchObject({ status: 'COMPLETED', subscriptionId: id, window: { amount: 9900, userName: '홍길동' } });
    expect(completed!.data.previousAttributes).toMatchObject({ status: 'PENDING' });
    // The single-use state, the URLs that carry it and the customer's phone number never reach an event.
    expect(completed!.data.object).not.toHaveProperty('state');
    expect(completed!.data.object).not.toHaveProperty('successUrl');
    const [paid] = of(events, 'payment.succeeded');
    expect(paid!.data.object).toMatchObject({ kind: 'INITIAL', status: 'SUCCEEDED', amount: 9900, subscriptionId: id });
    expect(paid!.data.previousAttributes).toMatchObject({ status: 'PENDING' });
    const body = JSON.stringify(events);
    expect(body).not.toContain(PHONE);
    expect(body).not.toContain('1234-5678');
    // Nor the billing key itself, nor the gateway's secret.
    const keyring = createKeyring(running.app.config.encryptionKeys);
    const keys = await running.app.db.billingKey.findMany();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(body).not.toContain(readBillingKey(keyring, key));
    expect(body).not.toContain(TEST_SECRET_KEY);
    // Sequences are positive, unique and ascending; ids are UUIDs.
    const sequences = events.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences[0]).toBeGreaterThan(0);
  });

  it('a renewal: payment.succeeded and one subscription.updated with the old period as previousAttributes', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900 });
    const before = await getSubscription(running.app, id);
    const mark = await lastSequence();
    await setClock(running.app, before.nextChargeAt!);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const events = await feed(mark);
    expect(types(events).sort()).toEqual(['payment.succeeded', 'subscription.updated']);
    const [updated] = of(events, 'subscription.updated');
    const after = await getSubscription(running.app, id);
    expect(updated!.data.object).toEqual(after);
    expect(updated!.data.previousAttributes).toEqual({
      currentPeriodStart: before.currentPeriodStart,
      currentPeriodEnd: before.currentPeriodEnd,
      nextChargeAt: before.nextChargeAt,
      updatedAt: (updated!.data.previousAttributes as { updatedAt: string }).updatedAt,
    });
    const [paid] = of(events, 'payment.succeeded');
    expect(paid!.data.object).toMatchObject({ kind: 'RECURRING', cycle: 1, status: 'SUCCEEDED' });
  });

  it('declines, then the last retry declined: payment.failed, PAST_DUE, then subscription.canceled', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900 });
    const due = new Date((await getSubscription(running.app, id)).nextChargeAt!);
    const mark = await lastSequence();
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_DECLINED' });
    await setClock(running.app, due);
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    const declined = await feed(mark);
    expect(types(declined).sort()).toEqual(['payment.failed', 'subscription.updated']);
    expect(of(declined, 'payment.failed')[0]!.data.object).toMatchObject({ status: 'FAILED', failureCode: 'CARD_DECLINED' });
    expect(of(declined, 'subscription.updated')[0]!.data.previousAttributes).toMatchObject({ status: 'ACTIVE' });
    expect(of(declined, 'subscription.updated')[0]!.data.object).toMatchObject({ status: 'PAST_DUE' });

    for (const days of [1, 3]) {
      await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_DECLINED' });
      await setClock(running.app, new Date(due.getTime() + days * 86_400_000));
      expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    }
    const canceled = of(await feed(mark), 'subscription.canceled');
    expect(canceled).toHaveLength(1);
    expect(canceled[0]!.data.object).toMatchObject({ status: 'CANCELED', billingKey: { status: 'REVOKED' } });
    expect(canceled[0]!.data.previousAttributes).toMatchObject({ status: 'PAST_DUE' });
  });

  it('an unknown outcome (payment.unknown, attention) and a refund (payment.canceled)', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900 });
    const [initial] = await paymentsOf(running.app, id);
    let mark = await lastSequence();
    expect((await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 1000, reason: 'goodwill' })).statusCode).toBe(200);
    const partial = await feed(mark);
    expect(types(partial)).toEqual(['payment.canceled']);
    expect(partial[0]!.data.object).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 1000 });
    expect(partial[0]!.data.previousAttributes).toMatchObject({ canceledAmount: 0 });

    mark = await lastSequence();
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    await setClock(running.app, (await getSubscription(running.app, id)).nextChargeAt!);
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const unknown = await feed(mark);
    expect(types(unknown).sort()).toEqual(['payment.unknown', 'subscription.updated']);
    expect(of(unknown, 'payment.unknown')[0]!.data.object).toMatchObject({ status: 'UNKNOWN', needsAttention: true });
    expect(of(unknown, 'subscription.updated')[0]!.data.previousAttributes).toMatchObject({ needsAttention: false });
  });

  it('merchant cancel at period end, then now: subscription.updated then subscription.canceled', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900 });
    const mark = await lastSequence();
    const cancel = (payload: object) => running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/cancel`, headers: apiHeaders, payload });
    expect((await cancel({ atPeriodEnd: true })).statusCode).toBe(200);
    expect((await cancel({})).statusCode).toBe(200);
    const events = await feed(mark);
    expect(types(events)).toEqual(['subscription.updated', 'subscription.canceled']);
    expect(events[0]!.data.previousAttributes).toMatchObject({ cancelAtPeriodEnd: false });
    expect(events[1]!.data.object).toMatchObject({ status: 'CANCELED' });
  });

  it('registrations failed and expired, orders completed and failed', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const failing = await createRegistration(running.app, { userId: 'u-f', method: 'CARD', amount: 5000, orderName: 'Plan' });
    const window = await decideWindow(running.app, failing.window, 'decline');
    await follow(running.app, window.redirectUrl, { json: true });
    const expiring = await createRegistration(running.app, { userId: 'u-e', method: 'CARD', amount: 5000, orderName: 'Plan' });
    const late = await decideWindow(running.app, expiring.window);
    await setClock(running.app, '2030-01-10T03:00:00.000Z');
    await follow(running.app, late.redirectUrl, { json: true });

    const order = async (decision: 'approve' | 'decline') => {
      const created = await running.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: apiHeaders,
        payload: { method: 'CARD', amount: 3000, orderName: 'Once' },
      });
      const w = await decideWindow(running.app, created.json().window, decision);
      await follow(running.app, w.redirectUrl, { json: true });
      return created.json().id as string;
    };
    const paidOrder = await order('approve');
    const failedOrder = await order('decline');

    const events = await feed();
    expect(of(events, 'registration.failed').map((e) => e.data.object.id)).toEqual([failing.id]);
    expect(of(events, 'registration.expired').map((e) => e.data.object.id)).toEqual([expiring.id]);
    expect(of(events, 'order.completed').map((e) => e.data.object.id)).toEqual([paidOrder]);
    expect(of(events, 'order.completed')[0]!.data.object).toMatchObject({ status: 'COMPLETED', paymentId: expect.any(String) });
    expect(of(events, 'order.failed').map((e) => e.data.object.id)).toEqual([failedOrder]);
    expect(of(events, 'payment.succeeded').map((e) => e.data.object.kind)).toEqual(['ONE_TIME']);
    // The type filter.
    expect(types(await feed(0, '&type=order.failed'))).toEqual(['order.failed']);
  });

  it('GET /events/:id answers one event; unknown ids and types, and sequences out of range, are refused', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    await subscribe(running.app, { amount: 9900 });
    const [first] = await feed();
    const one = await running.app.inject({ method: 'GET', url: `/api/v1/events/${first!.id}`, headers: apiHeaders });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual({ ...first, deliveries: [] });
    expect((await running.app.inject({ method: 'GET', url: `/api/v1/events/${crypto.randomUUID()}`, headers: apiHeaders })).statusCode).toBe(404);
    const badType = await running.app.inject({ method: 'GET', url: '/api/v1/events?type=payment.exploded', headers: apiHeaders });
    expect(badType.statusCode).toBe(400);
    // A sequence past what a bigint (and a JavaScript integer) holds is a coded 400, not a database error.
    for (const after of ['100000000000000000000', '1e300']) {
      const huge = await running.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}`, headers: apiHeaders });
      expect(huge.statusCode).toBe(400);
      expect(huge.json().code).toBe('VALIDATION_ERROR');
    }
    expect((await running.app.inject({ method: 'GET', url: '/api/v1/events' })).statusCode).toBe(401);
  });
});

/**
 * What GET answers for an event's object, less what the contract leaves out of events (docs/api.md "Events and webhooks"): a registration's
 * or order's single-use `state`, the URLs that carry it (`successUrl`, `failUrl`, the window's and its `url`) and the
 * customer's phone number. A payment's GET by id adds its `attempts` ("with attempts"); an event's object has the
 * payment's list shape, which has none. Anything else GET shows, the event must show, with the same value.
 */
async function publicGet(objectType: string, id: string): Promise<Record<string, unknown>> {
  // An erasure has no GET of the merchant API: its event shows what the erasure route answered, less status and counts.
  if (objectType === 'customer') {
    const { status: _status, counts: _counts, ...rest } = erasures.get(id)!;
    return rest;
  }
  const path = { subscription: 'subscriptions', payment: 'payments', registration: 'registrations', order: 'orders' }[objectType];
  if (!path) throw new Error(`no GET for ${objectType}`);
  const response = await running.app.inject({ method: 'GET', url: `/api/v1/${path}/${id}`, headers: apiHeaders });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json() as Record<string, unknown>;
  if (objectType === 'payment') {
    const { attempts: _attempts, ...rest } = body;
    return rest;
  }
  if (objectType === 'registration' || objectType === 'order') {
    const { state: _state, successUrl: _s, failUrl: _f, window, ...rest } = body as Record<string, unknown> & { window: Record<string, unknown> };
    const { successUrl: _ws, failUrl: _wf, url: _url, userPhoneNumber: _phone, ...terms } = window;
    return { ...rest, window: terms };
  }
  return body;
}

/** The erasure route's answers by erasure id (publicGet's source for customer.erased). */
const erasures = new Map<string, Record<string, unknown>>();

describe('an event’s object is what GET answered at that moment, for every event type', () => {
  it('each event, read when it is emitted and again at the end, equals its resource’s GET right after the change', async () => {
    await setClock(running.app, '2030-03-10T01:00:00.000Z');
    const start = await lastSequence();
    let mark = start;
    const answered = new Map<string, { type: string; get: Record<string, unknown> }>();
    /** Runs one change, then compares each event it emitted with its resource's GET (one change per object per step). */
    async function step(what: string, change: () => Promise<unknown>): Promise<PublicEvent[]> {
      await change();
      const events = await feed(mark);
      mark = events.at(-1)?.sequence ?? mark;
      for (const event of events) {
        const objectType = event.type.split('.')[0]!;
        const get = await publicGet(objectType, String(event.data.object.id));
        expect(event.data.object, `${what}: ${event.type}`).toEqual(get);
        answered.set(event.id, { type: event.type, get });
      }
      return events;
    }
    const expectStatus = async (request: Promise<{ statusCode: number; body: string }>, status: number) => {
      const response = await request;
      expect(response.statusCode, response.body).toBe(status);
    };

    let subscriptionId = '';
    await step('subscribe', async () => {
      subscriptionId = await subscribe(running.app, { userId: 'get-1', amount: 9900, userPhoneNumber: PHONE, userName: '홍길동' });
    });
    const [initial] = await paymentsOf(running.app, subscriptionId);
    const refunds = `/admin/payments/${initial!.id}/cancel`;
    await step('a partial refund', () => expectStatus(admin('POST', refunds, { amount: 1000, reason: 'goodwill' }), 200));
    // A declined refund and one of unknown outcome write no event; the settled one's event shows all three as of then.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'decline', code: 'CANCEL_REFUSED' });
    expect(await step('a declined refund', () => expectStatus(admin('POST', refunds, { amount: 500, reason: 'declined' }), 402))).toEqual([]);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500' });
    expect(await step('a refund of unknown outcome', () => expectStatus(admin('POST', refunds, { amount: 700, reason: 'unknown' }), 502))).toEqual([]);
    const settled = await step('the unknown refund settled', () =>
      expectStatus(admin('POST', `${refunds}/resolve`, { outcome: 'SUCCEEDED', reason: 'the gateway says it went through' }), 200),
    );
    expect(types(settled)).toEqual(['payment.canceled']);
    expect((settled[0]!.data.object.refunds as Array<{ status: string }>).map((r) => r.status)).toEqual(['SUCCEEDED', 'FAILED', 'SUCCEEDED']);
    const external = await step('the rest refunded outside the gateway', () =>
      expectStatus(admin('POST', `/admin/payments/${initial!.id}/refunds/external`, { amount: 9900 - 1700, reason: 'bank transfer', reference: 'TR-1' }), 201),
    );
    expect(external[0]!.data.object).toMatchObject({ status: 'CANCELED', refunds: [{}, {}, {}, { channel: 'EXTERNAL' }] });

    const due = new Date((await getSubscription(running.app, subscriptionId)).nextChargeAt!);
    await step('a renewal', async () => {
      await setClock(running.app, due);
      expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    });
    const nextDue = new Date((await getSubscription(running.app, subscriptionId)).nextChargeAt!);
    await step('a declined charge', async () => {
      await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_DECLINED' });
      await setClock(running.app, nextDue);
      expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    });
    await step('a retry of unknown outcome', async () => {
      await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
      await setClock(running.app, new Date(nextDue.getTime() + 86_400_000));
      expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    });
    // An hour later: a key's status in an event is as of the event's time (a revocation at the very instant of an
    // earlier event, which only a frozen clock makes, counts as before it).
    await setClock(running.app, new Date(running.app.clock.now().getTime() + 3_600_000));
    await step('a cancel', () =>
      expectStatus(running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscriptionId}/cancel`, headers: apiHeaders, payload: {} }), 200),
    );
    await step('a trial', () => subscribe(running.app, { userId: 'get-2', amount: 9900, trialDays: 14 }));
    await step('a failed registration', async () => {
      const registration = await createRegistration(running.app, { userId: 'get-3', method: 'CARD', amount: 5000, orderName: 'Plan', userPhoneNumber: PHONE });
      await follow(running.app, (await decideWindow(running.app, registration.window, 'decline')).redirectUrl, { json: true });
    });
    await step('an expired registration', async () => {
      const registration = await createRegistration(running.app, { userId: 'get-4', method: 'CARD', amount: 5000, orderName: 'Plan' });
      const window = await decideWindow(running.app, registration.window);
      await setClock(running.app, new Date(running.app.clock.now().getTime() + 3_600_000));
      await follow(running.app, window.redirectUrl, { json: true });
    });
    for (const decision of ['approve', 'decline'] as const) {
      await step(`an order, ${decision}d`, async () => {
        const created = await running.app.inject({
          method: 'POST',
          url: '/api/v1/orders',
          headers: apiHeaders,
          payload: { userId: 'get-5', method: 'CARD', amount: 3000, orderName: 'Once' },
        });
        expect(created.statusCode, created.body).toBe(201);
        await follow(running.app, (await decideWindow(running.app, created.json().window, decision)).redirectUrl, { json: true });
      });
    }

    // A customer of their own (an erasure rewrites the customer's earlier events, which the final read compares).
    await step('an erasure', async () => {
      const created = await running.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: apiHeaders,
        payload: { userId: 'get-6', method: 'CARD', amount: 3000, orderName: 'Once' },
      });
      await follow(running.app, (await decideWindow(running.app, created.json().window, 'decline')).redirectUrl, { json: true });
      const erased = await running.app.inject({
        method: 'POST',
        url: '/admin/customers/get-6/erasure',
        headers: { ...adminHeaders, 'idempotency-key': 'erase-get-6' },
        payload: { reason: 'privacy request' },
      });
      expect(erased.statusCode, erased.body).toBe(201);
      erasures.set(erased.json().id, erased.json());
    });

    // Every type was compared, so the next field added to a resource cannot be left out of its events.
    expect([...new Set([...answered.values()].map((a) => a.type))].sort()).toEqual([...EVENT_TYPES].sort());
    // Read again after everything since: each event still shows its object as GET answered then, refunds included (a
    // refund settled or added later does not rewrite an older payment event) and the billing key's status (the key
    // revoked by the cancel was ACTIVE in the earlier events).
    const again = await feed(start);
    expect(again.map((e) => e.id).sort()).toEqual([...answered.keys()].sort());
    for (const event of again) expect(event.data.object, event.type).toEqual(answered.get(event.id)!.get);
  });
});

describe('the feed’s JSON', () => {
  it('is what the route schema’s own serializer writes of the same page (the route writes it with JSON.stringify)', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const id = await subscribe(running.app, { amount: 9900, userPhoneNumber: PHONE, userName: '홍 "길동" \\ 😀' });
    const mark = await lastSequence();
    const cancel = await running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/cancel`, headers: apiHeaders, payload: { atPeriodEnd: true } });
    expect(cancel.statusCode).toBe(200);
    await numbered();
    const after = Math.max(0, mark - 3);
    const response = await running.app.inject({ method: 'GET', url: `/api/v1/events?after=${after}&limit=100`, headers: apiHeaders });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const page = await createEventsService({ db: running.app.db, config: running.app.config }).list({ after, limit: 100 });
    // The page has what the schema's serializer treats apart: several object types and old values.
    expect(new Set(page.items.map((e) => e.type.split('.')[0])).size).toBeGreaterThanOrEqual(3);
    expect(page.items.some((e) => e.data.previousAttributes)).toBe(true);
    const reference = Fastify();
    reference.get('/', { schema: { response: { 200: EventList } } }, async () => page);
    const viaSchema = await reference.inject({ method: 'GET', url: '/' });
    await reference.close();
    expect(response.json()).toStrictEqual(viaSchema.json());
  });
});

describe('the feed and transactions that commit out of order', () => {
  it('holds back an event while an older transaction is in flight, then shows both in order: a reader continuing from its last sequence misses none', async () => {
    await setClock(running.app, '2030-01-10T01:00:00.000Z');
    const a = await subscribe(running.app, { userId: 'a', amount: 9900 });
    const b = await subscribe(running.app, { userId: 'b', amount: 9900 });
    const seen = await lastSequence();

    const first = new pg.Client({ connectionString: running.databaseUrl });
    const second = new pg.Client({ connectionString: running.databaseUrl });
    await Promise.all([first.connect(), second.connect()]);
    try {
      // The first transaction takes its id first (a write with no event), the second writes its event first,
      // then the first writes its own: the event written first belongs to the transaction that commits last.
      await first.query('BEGIN');
      await first.query(`UPDATE "subscriptions" SET "leaseOwner" = 'test' WHERE "id" = $1`, [a]);
      await second.query('BEGIN');
      await second.query(`UPDATE "subscriptions" SET "orderName" = 'B renamed' WHERE "id" = $1`, [b]);
      await first.query(`UPDATE "subscriptions" SET "orderName" = 'A renamed', "leaseOwner" = NULL WHERE "id" = $1`, [a]);
      await second.query('COMMIT');

      // The second's event is committed, but the first (older) is still in flight: nothing new is shown yet.
      expect(await page(seen)).toEqual([]);
      // It is stored, committed, and held back without a sequence.
      const pending = await running.app.db.event.findMany({ where: { sequence: null }, select: { objectId: true } });
      expect(pending.map((e) => e.objectId)).toEqual([b]);

      await first.query('COMMIT');
      const after = await feed(seen);
      expect(after.map((e) => [e.type, e.data.object.id])).toEqual([
        ['subscription.updated', a],
        ['subscription.updated', b],
      ]);
      expect(after[0]!.sequence).toBeGreaterThan(seen);
      expect(after[1]!.sequence).toBeGreaterThan(after[0]!.sequence);
      // A rolled-back change leaves no event.
      await first.query('BEGIN');
      await first.query(`UPDATE "subscriptions" SET "orderName" = 'never' WHERE "id" = $1`, [a]);
      await first.query('ROLLBACK');
      expect(await feed(after[1]!.sequence)).toEqual([]);
      // A lease-only change is not a merchant event.
      await first.query(`UPDATE "subscriptions" SET "leaseOwner" = 'x', "leaseExpiresAt" = now() WHERE "id" = $1`, [a]);
      expect(await feed(after[1]!.sequence)).toEqual([]);
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
  });
});
