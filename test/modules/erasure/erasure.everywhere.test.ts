// After an erasure, no row of any table holds the customer (docs/operating.md "A customer asks to be forgotten"): a
// customer with a CARD and a MOBILE subscription, a one-time order, a consent and an external refund with references
// naming them, an operator's action (audit before/after), merchant API calls kept for idempotency, a portal session
// and a settlement file with a buyer column; then one erasure, and a scan of every row of every table (its text: every
// column, JSON included) for the userId, the name, the phone number as given, as digits and as shown masked, and the
// masked card number. Another customer's rows are untouched. Reports give the same figures before and after.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { adminHeaders, paymentsOf, setClock, subscribe } from '../../helpers/billing.ts';
import { decideWindow, follow } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { kst } from '../portal/portal-helpers.ts';
import { erase, personalTrace } from './erasure-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2030-03-02T10:00:00')));

const USER = 'everywhere-customer-91c4';
const NAME = '박영희';
const PHONE = '010-3456-7890';
const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = apiHeaders) =>
  running.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, payload });

async function customerWithHistory(userId: string, name: string, phone: string) {
  const { app } = running;
  const card = await subscribe(app, { userId, amount: 9900, userName: name, userPhoneNumber: phone, returnUrl: `https://shop.example/back?user=${userId}` });
  const mobile = await subscribe(app, { userId, method: 'MOBILE', amount: 5500, itemCode: 'ITEM01', userName: name, userPhoneNumber: phone });
  expect(
    (await post(`/api/v1/subscriptions/${card}/consents`, { kind: 'PRICE_INCREASE', channel: 'call', reference: `call with ${name} ${phone}` })).statusCode,
  ).toBe(201);
  expect((await post(`/admin/subscriptions/${card}/pause`, { reason: 'asked by phone' }, adminHeaders)).statusCode).toBe(200);
  expect((await post(`/admin/subscriptions/${card}/resume`, { reason: 'asked again' }, adminHeaders)).statusCode).toBe(200);
  const order = await post('/api/v1/orders', { userId, method: 'CARD', amount: 3000, orderName: 'Once', returnUrl: `https://shop.example/o?user=${userId}` });
  expect(order.statusCode, order.body).toBe(201);
  await follow(app, (await decideWindow(app, order.json().window)).redirectUrl, { json: true });
  const [initial] = await paymentsOf(app, card);
  const external = await post(
    `/admin/payments/${initial!.id}/refunds/external`,
    { amount: 1000, reason: 'transfer', reference: `${name} ${phone}` },
    adminHeaders,
  );
  expect(external.statusCode, external.body).toBe(201);
  expect((await post('/api/v1/portal-sessions', { userId })).statusCode).toBe(201);
  return { card, mobile };
}

/** The figures the reports give (revenue, MRR, recovery), as the admin routes answer them. */
async function figures() {
  const get = async (url: string) => (await running.app.inject({ method: 'GET', url, headers: adminHeaders })).body;
  return {
    revenue: await get('/admin/reports/revenue?from=2030-03-01&to=2030-03-31'),
    recovery: await get('/admin/reports/recovery?from=2030-03&to=2030-03'),
    mrr: await get('/admin/reports/mrr?from=2030-03&to=2030-03'),
  };
}

/** The transactionIds of the customer's payments (subscriptions and one-time orders). */
async function transactionIdsOf(userId: string): Promise<string[]> {
  const rows = await running.app.db.$queryRawUnsafe<Array<{ t: string }>>(
    `SELECT p."transactionId" AS t FROM "payments" p LEFT JOIN "subscriptions" s ON s."id" = p."subscriptionId"
       LEFT JOIN "orders" o ON o."id" = p."oneTimeOrderId" WHERE coalesce(s."userId", o."userId") = $1 AND p."transactionId" IS NOT NULL`,
    userId,
  );
  return rows.map((r) => r.t);
}

describe('after an erasure', () => {
  it('no row of any table holds the customer’s userId, name, phone number (as given, digits, masked) or masked card number', async () => {
    const { app } = running;
    const { card, mobile } = await customerWithHistory(USER, NAME, PHONE);
    await customerWithHistory('someone-else-7a', '이민수', '010-9876-5432');
    // The gateway's settlement file, with the buyer's name and phone number on each line (as some gateways add them).
    const mine = await transactionIdsOf(USER);
    const buyer = (line: string) => (mine.some((t) => line.includes(t)) ? `${NAME},${PHONE}` : '이민수,010-9876-5432');
    const csv = (await sandboxSettlementFile(app)).toString('utf8').trimEnd().split(/\r?\n/);
    const imported = await importCsv(app, [`${csv[0]},buyerName,buyerPhone`, ...csv.slice(1).map((line) => `${line},${buyer(line)}`)].join('\n'));
    expect(imported.statusCode, imported.body).toBe(201);
    const cardNumbers = (await app.db.billingKey.findMany({ where: { userId: USER, cardNumber: { not: null } } })).map((k) => k.cardNumber!);
    expect(cardNumbers.length).toBeGreaterThan(0);
    const forms = [USER, NAME, PHONE, PHONE.replace(/-/g, ''), '010-****-7890', ...new Set(cardNumbers)];
    expect((await personalTrace(app.db, forms)).length).toBeGreaterThan(8);
    const others = await personalTrace(app.db, ['someone-else-7a', '이민수', '010-9876-5432']);
    // Canceled by the merchant first, so the erasure itself changes no figure (its cancelOpenSubscriptions would churn).
    for (const id of [card, mobile]) expect((await post(`/api/v1/subscriptions/${id}/cancel`, {})).statusCode).toBe(200);
    const before = await figures();
    expect(before.revenue).toContain('"count":6,"amount":36800');

    const response = await erase(app, USER, { reason: 'privacy request' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().counts).toMatchObject({ subscriptions: 2, registrations: 2, orders: 1, billingKeys: 2 });

    expect(await personalTrace(app.db, forms)).toEqual([]);
    // The other customer keeps every trace they had.
    expect(await personalTrace(app.db, ['someone-else-7a', '이민수', '010-9876-5432'])).toEqual(others);
    expect(await figures()).toEqual(before);
  });
});
