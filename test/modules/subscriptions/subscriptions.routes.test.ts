// The subscriptions' merchant API routes: keyset pagination, filters, cancel, and the shapes of docs/api.md "Shapes".
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { apiHeaders, buildTestApp } from '../../helpers/app.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { loadSubscription } from '../../../src/modules/subscriptions/audited-change.ts';
import { readSubscriptionInTransaction } from '../../../src/modules/subscriptions/subscriptions.read.ts';
import { serializeSubscription, WITH_KEY } from '../../../src/modules/subscriptions/subscriptions.shape.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../../helpers/database.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';

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
beforeEach(() => truncateAll(app.db));

const get = (url: string) => app.inject({ method: 'GET', url, headers: apiHeaders });

describe('GET /api/v1/subscriptions', () => {
  it('pages newest first with a cursor until the end, without repeats or gaps', async () => {
    const created = [];
    for (let i = 0; i < 7; i += 1) created.push(await createSubscription(app.db, { userId: 'pager', createdAt: new Date(Date.UTC(2026, 0, 1 + i)) }));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = (
        await get(`/api/v1/subscriptions?userId=pager&limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(created.map((s) => s.id).reverse());
  });

  it('filters by status and userId, and never shows the billing key', async () => {
    await createSubscription(app.db, { userId: 'a', status: 'ACTIVE' });
    await createSubscription(app.db, { userId: 'a', status: 'PAST_DUE' });
    await createSubscription(app.db, { userId: 'b', status: 'ACTIVE' });
    const page = (await get('/api/v1/subscriptions?userId=a&status=PAST_DUE')).json();
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ userId: 'a', status: 'PAST_DUE', billingKey: { cardName: 'Test Card' } });
    const text = JSON.stringify(page);
    expect(text).not.toMatch(/keyCiphertext|keyIv|encryptionKeyId/);
  });

  it('pages through rows created at the same instant by id, and shows every field as Prisma reads it', async () => {
    // The public reads are one SQL statement (subscriptions.read.ts); the shape must stay what the Prisma row gives.
    const at = new Date(Date.UTC(2026, 2, 1));
    const mobile = await createSubscription(app.db, {
      method: 'MOBILE',
      userId: 'tie',
      createdAt: at,
      status: 'PAST_DUE',
      needsAttention: true,
      attentionReason: 'MOBILE_WINDOW_CLOSED',
      lastTransactionId: 'tx-1',
    });
    await app.db.billingKey.update({
      where: { id: mobile.billingKeyId },
      data: { carrier: 'SKT', phoneNumber: '01012345678', cardName: null, cardNumber: null },
    });
    const trial = await createSubscription(app.db, {
      userId: 'tie',
      createdAt: at,
      status: 'TRIALING',
      trialEnd: new Date(Date.UTC(2026, 2, 15)),
      itemCode: 'item-1',
    });
    const priced = await createSubscription(app.db, { userId: 'tie', createdAt: at, pendingAmount: 12_900, pendingAmountRequestedAt: at });
    const obtainedAt = new Date(Date.UTC(2026, 1, 20));
    await app.db.consent.createMany({
      data: [
        { subscriptionId: priced.id, kind: 'PRICE_INCREASE', obtainedAt, channel: 'web', reference: 'ref-2', id: 'ffffffff-0000-4000-8000-000000000000' },
        { subscriptionId: priced.id, kind: 'TRIAL_CONVERSION', obtainedAt, id: '00000000-0000-4000-8000-000000000000' },
      ],
    });
    const canceled = await createSubscription(app.db, {
      userId: 'tie',
      createdAt: at,
      status: 'CANCELED',
      canceledAt: at,
      cancelReason: 'WITHDRAWN',
      nextChargeAt: null,
      usageStartedAt: new Date(Date.UTC(2026, 2, 1, 3, 4, 5, 678)),
      needsAttention: true,
      attentionReason: 'WITHDRAWAL_REFUND_DUE',
      refundDue: 5500,
    });
    const viaPrisma = async (id: string) =>
      JSON.parse(JSON.stringify(serializeSubscription(await app.db.subscription.findUniqueOrThrow({ where: { id }, include: WITH_KEY }))));

    const ids = [mobile, trial, priced, canceled]
      .map((s) => s.id)
      .sort()
      .reverse();
    const seen: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: unknown[]; nextCursor: string | null } = (
        await get(`/api/v1/subscriptions?userId=tie&limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      ).json();
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(await Promise.all(ids.map(viaPrisma)));
    for (const id of ids) {
      expect((await get(`/api/v1/subscriptions/${id}`)).json()).toEqual(await viaPrisma(id));
      expect((await app.inject({ method: 'GET', url: `/admin/subscriptions/${id}`, headers: adminHeaders })).json()).toEqual(await viaPrisma(id));
    }
    const shown = (await get(`/api/v1/subscriptions/${priced.id}`)).json();
    expect(shown.consents.map((c: { kind: string }) => c.kind)).toEqual(['TRIAL_CONVERSION', 'PRICE_INCREASE']);
    expect((await get(`/api/v1/subscriptions/${mobile.id}`)).json().billingKey).toMatchObject({
      carrier: 'SKT',
      phoneNumber: expect.not.stringContaining('12345678'),
    });
    const admin = (
      await app.inject({
        method: 'GET',
        url: '/admin/subscriptions?method=MOBILE&createdFrom=2026-03-01T00:00:00Z&createdTo=2026-03-01T00:00:00.001Z',
        headers: adminHeaders,
      })
    ).json();
    expect(admin.items.map((s: { id: string }) => s.id)).toEqual([mobile.id]);
  });

  it('writes each list item as serializeSubscription does: escapes, masked phone numbers, absent and null fields, instants', async () => {
    // The list pages are JSON written by PostgreSQL (pageSubscriptionsJson); the twin of the serializer must stay equal
    // to it on every field, including the ones only odd rows have.
    const odd = 'quote " backslash \\ newline \n tab \t control \u0001 한글 😀';
    const phones = ['010-1234-5678', '+82 10 9876 5432', '12-34', '', null];
    const made: Array<Awaited<ReturnType<typeof createSubscription>>> = [];
    for (const [i, phoneNumber] of phones.entries()) {
      const s = await createSubscription(app.db, {
        method: 'MOBILE',
        userId: 'twin',
        orderName: `${odd} ${i}`,
        createdAt: new Date(Date.UTC(2026, 3, 1, 0, 0, 0, i === 4 ? 999 : i + 1)),
        updatedAt: new Date(Date.UTC(2099, 11, 31, 23, 59, 59, 1)),
        itemCode: i === 1 ? '' : i === 2 ? odd : null,
        cancelAtPeriodEnd: i === 3,
        attentionReason: i === 4 ? odd : null,
        needsAttention: i === 4,
      });
      await app.db.billingKey.update({
        where: { id: s.billingKeyId },
        data: { carrier: i === 2 ? null : 'KT', phoneNumber, cardName: null, cardNumber: null },
      });
      made.push(s);
    }
    const card = await createSubscription(app.db, {
      userId: 'twin',
      createdAt: new Date(Date.UTC(2026, 3, 2)),
      status: 'CANCELED',
      canceledAt: new Date(Date.UTC(2026, 3, 3, 1, 2, 3, 456)),
      cancelReason: odd,
      nextChargeAt: null,
      trialEnd: new Date(Date.UTC(2026, 3, 16)),
      pendingAmount: 19_900,
      pendingAmountRequestedAt: new Date(Date.UTC(2026, 3, 2)),
      intervalUnit: 'week',
      intervalCount: 2,
    });
    await app.db.billingKey.update({ where: { id: card.billingKeyId }, data: { cardName: odd, cardNumber: '4321-****' } });
    await app.db.consent.createMany({
      data: [
        { subscriptionId: card.id, kind: 'PRICE_INCREASE', obtainedAt: new Date(Date.UTC(2026, 3, 2, 0, 0, 0, 7)), channel: odd, reference: null },
        { subscriptionId: card.id, kind: 'TRIAL_CONVERSION', obtainedAt: new Date(Date.UTC(2026, 3, 1)), channel: null, reference: 'r' },
      ],
    });
    const viaPrisma = async (id: string) =>
      JSON.parse(JSON.stringify(serializeSubscription(await app.db.subscription.findUniqueOrThrow({ where: { id }, include: WITH_KEY }))));
    const expected = await Promise.all([card, ...made.reverse()].map((s) => viaPrisma(s.id)));
    // The cases the twin must meet are all there (a dashed, a spaced, a short and an empty number, none).
    expect(expected.map((s) => s.billingKey.phoneNumber)).toEqual([undefined, undefined, undefined, '****', '821-****-5432', '010-****-5678']);
    expect(expected[0]).toMatchObject({ nextChargeAt: null, pendingAmountReason: 'CONSENT_REQUIRED', consents: [{ reference: 'r' }, { channel: odd }] });

    const merchant = await get('/api/v1/subscriptions?userId=twin&limit=100');
    expect(merchant.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(merchant.json()).toStrictEqual({ items: expected, nextCursor: null });
    // And in the serializer's field order, at every depth (the item and single routes read the same).
    expect(JSON.stringify(merchant.json())).toBe(JSON.stringify({ items: expected, nextCursor: null }));
    const admin = await app.inject({ method: 'GET', url: '/admin/subscriptions?userId=twin&limit=100', headers: adminHeaders });
    expect(admin.json()).toStrictEqual({ items: expected, nextCursor: null });
    // A page that is not the last names the next one by the last item's key, as before.
    const first = (await get('/api/v1/subscriptions?userId=twin&limit=2')).json();
    expect(first.items).toStrictEqual(expected.slice(0, 2));
    const second = (await get(`/api/v1/subscriptions?userId=twin&limit=4&cursor=${first.nextCursor}`)).json();
    expect(second).toStrictEqual({ items: expected.slice(2), nextCursor: null });

    // The shape after an audited change is read in the change's transaction in one statement
    // (readSubscriptionInTransaction): the same as Prisma's read there, field for field, its uncommitted writes seen.
    await app.db.$transaction(async (tx) => {
      for (const s of [card, ...made]) {
        await tx.subscription.update({ where: { id: s.id }, data: { orderName: `${odd} after`, cancelAtPeriodEnd: !s.cancelAtPeriodEnd } });
        const prisma = JSON.stringify(serializeSubscription(await loadSubscription(tx, s.id)));
        expect(prisma).toContain(`${JSON.stringify(`${odd} after`)}`);
        expect(JSON.stringify(serializeSubscription(await readSubscriptionInTransaction(tx, s.id)))).toBe(prisma);
      }
    });
  });

  it('keeps answering after a migration adds a column: the named (prepared) statements name their columns', async () => {
    const subscription = await createSubscription(app.db);
    const payment = await createPayment(app.db, { subscriptionId: subscription.id, cycle: 1 });
    const read = async () => {
      // Enough requests to prepare the statements on every pooled connection.
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          get([`/api/v1/subscriptions/${subscription.id}`, '/api/v1/subscriptions?limit=5', `/api/v1/payments/${payment.id}`][i % 3]!),
        ),
      );
      return responses.map((r) => r.statusCode);
    };
    expect(await read()).toEqual(Array(12).fill(200));
    await app.db.$executeRawUnsafe('ALTER TABLE "subscriptions" ADD COLUMN "laterColumn" integer');
    await app.db.$executeRawUnsafe('ALTER TABLE "payments" ADD COLUMN "laterColumn" integer');
    try {
      expect(await read()).toEqual(Array(12).fill(200));
    } finally {
      await app.db.$executeRawUnsafe('ALTER TABLE "subscriptions" DROP COLUMN "laterColumn"');
      await app.db.$executeRawUnsafe('ALTER TABLE "payments" DROP COLUMN "laterColumn"');
    }
  });

  it('refuses a malformed cursor and an unknown filter', async () => {
    expect((await get('/api/v1/subscriptions?cursor=garbage')).json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR' });
    expect((await get('/api/v1/subscriptions?needsAttention=true&x=1')).statusCode).toBe(400);
  });
});

describe('POST /api/v1/subscriptions/:id/cancel', () => {
  it('cancels at period end: charging continues until the boundary', async () => {
    const subscription = await createSubscription(app.db);
    const response = await app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${subscription.id}/cancel`,
      headers: apiHeaders,
      payload: { atPeriodEnd: true },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true, nextChargeAt: subscription.nextChargeAt!.toISOString() });
  });

  it('cancels now: no next charge, and the billing key is revoked', async () => {
    const subscription = await createSubscription(app.db);
    const response = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: {} });
    expect(response.json()).toMatchObject({ status: 'CANCELED', nextChargeAt: null, canceledAt: expect.any(String), billingKey: { status: 'REVOKED' } });
    const again = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: {} });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('STATE_CONFLICT');
  });

  it('refuses unknown fields and unknown ids', async () => {
    const subscription = await createSubscription(app.db);
    const mass = await app.inject({ method: 'POST', url: `/api/v1/subscriptions/${subscription.id}/cancel`, headers: apiHeaders, payload: { amount: 1 } });
    expect(mass.statusCode).toBe(400);
    expect((await app.db.subscription.findUniqueOrThrow({ where: { id: subscription.id } })).amount).toBe(subscription.amount);
    const missing = await app.inject({
      method: 'POST',
      url: '/api/v1/subscriptions/00000000-0000-0000-0000-000000000000/cancel',
      headers: apiHeaders,
      payload: {},
    });
    expect(missing.statusCode).toBe(404);
  });
});
