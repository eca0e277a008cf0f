// Contract tests: the client against the sandbox over real HTTP, one test per rule the sandbox enforces,
// each asserting the outcome class and what the ledger shows (money moved or not).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../src/gateway/types.ts';
import { addInterval, formatGatewayDateTime } from '../../src/lib/calendar.ts';
import { REDACTED } from '../../src/lib/redact.ts';
import { LogCapture } from '../helpers/app.ts';
import { clientFor, SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox, type RunningSandbox } from '../helpers/sandbox.ts';

let sandbox: RunningSandbox;
let client: GatewayClient;
let orderSeq = 0;
const nextOrderId = () => `order-${Date.now()}-${++orderSeq}`;

beforeAll(async () => {
  sandbox = await startSandbox();
  client = clientFor(sandbox.url);
});
afterAll(async () => {
  client.close();
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.reset();
  await sandbox.setClock(new Date('2026-03-10T03:00:00Z'));
});

async function registerCard(options: { amount?: number; issueKeyOnly?: boolean } = {}) {
  const { transactionId } = await sandbox.authorize({ method: 'CARD', amount: options.amount ?? 9900, issueKeyOnly: options.issueKeyOnly });
  const result = await client.issueBillingKey({ method: 'CARD', transactionId: transactionId! });
  expect(result.outcome).toBe('SUCCEEDED');
  return result;
}

async function registerMobile(amount = 5500) {
  const { transactionId } = await sandbox.authorize({ method: 'MOBILE', amount, itemCode: 'ITEM01', userPhoneNumber: '01098765432' });
  const result = await client.issueBillingKey({ method: 'MOBILE', transactionId: transactionId! });
  expect(result.outcome).toBe('SUCCEEDED');
  return result;
}

function chargeCard(billingKey: string, overrides: Partial<Parameters<GatewayClient['chargeBillingKey']>[0]> = {}) {
  return client.chargeBillingKey({
    method: 'CARD',
    billingKey,
    userId: 'user-1',
    amount: 9900,
    orderName: 'Monthly plan',
    orderId: nextOrderId(),
    ...overrides,
  });
}

describe('authentication and request format', () => {
  it('sends Basic base64(secretKey + ":") and JSON; a wrong secret key is refused with 401 and nothing moves', async () => {
    const wrong = clientFor(sandbox.url, { secretKey: 'not_the_secret_key' });
    const { transactionId } = await sandbox.authorize({ method: 'CARD' });
    const result = await wrong.issueBillingKey({ method: 'CARD', transactionId: transactionId! });
    wrong.close();
    expect(result).toMatchObject({ outcome: 'DECLINED', httpStatus: 401, code: 'UNAUTHORIZED_KEY' });
    expect(await sandbox.ledger()).toEqual([]);
  });

  it('refuses a missing Authorization header and a non-JSON content type', async () => {
    const missing = await fetch(`${sandbox.url}/billing/confirm`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: 'UNAUTHORIZED_KEY' });
    const authorization = `Basic ${Buffer.from(`${SANDBOX_SECRET}:`).toString('base64')}`;
    const notJson = await fetch(`${sandbox.url}/billing/confirm`, { method: 'POST', headers: { authorization, 'content-type': 'text/plain' }, body: 'x' });
    expect(notJson.status).toBe(415);
    expect(await notJson.json()).toMatchObject({ code: 'INVALID_CONTENT_TYPE' });
    // Without the trailing colon the credential is wrong.
    const noColon = await fetch(`${sandbox.url}/billing/confirm`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(SANDBOX_SECRET).toString('base64')}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noColon.status).toBe(401);
  });

  it('the sandbox itself refuses missing fields and byte lengths over the limit, naming the field', async () => {
    const authorization = `Basic ${Buffer.from(`${SANDBOX_SECRET}:`).toString('base64')}`;
    const send = (body: object) =>
      fetch(`${sandbox.url}/billing/confirm`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const base = { method: 'CARD', billingKey: 'BKX', userId: 'u', amount: 100, orderName: 'x', merchantId: SANDBOX_MERCHANT, orderId: 'o-1' };
    const missing = await send({ ...base, orderName: undefined });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('orderName is required') });
    const tooLong = await send({ ...base, orderName: '가'.repeat(34) });
    expect(await tooLong.json()).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('orderName is 102 bytes') });
    const mobileWithoutItem = await send({ ...base, method: 'MOBILE', lastTransactionId: 'T1' });
    expect(await mobileWithoutItem.json()).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('itemCode is required') });
    expect(await sandbox.ledger()).toEqual([]);
  });

  it('refuses a merchantId other than the authenticated merchant', async () => {
    const other = clientFor(sandbox.url, { merchantId: 'SOMEONE_ELSE' });
    const { transactionId } = await sandbox.authorize({ method: 'CARD' });
    const result = await other.issueBillingKey({ method: 'CARD', transactionId: transactionId! });
    other.close();
    expect(result).toMatchObject({ outcome: 'DECLINED', code: 'INVALID_MERCHANT' });
    expect(await sandbox.ledger()).toEqual([]);
  });
});

describe('validation before sending (NOT_SENT)', () => {
  it('refuses a 34-syllable Hangul orderName (102 bytes) without sending, and sends 33 syllables (99 bytes)', async () => {
    const { fields } = await registerCard();
    const before = (await sandbox.ledger()).length;
    const tooLong = await chargeCard(fields.billingKey!, { orderName: '가'.repeat(34) });
    expect(tooLong).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' });
    expect(tooLong.detail).toContain('orderName is 102 bytes; at most 100');
    expect(await sandbox.ledger()).toHaveLength(before);

    const fits = await chargeCard(fields.billingKey!, { orderName: '가'.repeat(33) });
    expect(fits.outcome).toBe('SUCCEEDED');
    expect(await sandbox.ledger()).toHaveLength(before + 1);
  });

  it('requires lastTransactionId and itemCode for MOBILE, naming each', async () => {
    const result = await client.chargeBillingKey({ method: 'MOBILE', billingKey: 'BK1', userId: 'u', amount: 5500, orderName: 'x', orderId: nextOrderId() });
    expect(result.outcome).toBe('NOT_SENT');
    expect(result.detail).toContain('lastTransactionId is required');
    expect(result.detail).toContain('itemCode is required');
  });

  it.each([
    ['userId', { userId: 'u'.repeat(61) }, 'userId is 61 bytes'],
    ['orderId', { orderId: '주'.repeat(17) }, 'orderId is 51 bytes'],
    ['amount', { amount: 0 }, 'amount must be a positive whole number'],
    ['amount', { amount: 10.5 }, 'amount must be a positive whole number'],
  ])('refuses %s out of bounds', async (_name, overrides, message) => {
    const result = await chargeCard('BK1', overrides);
    expect(result.outcome).toBe('NOT_SENT');
    expect(result.detail).toContain(message);
  });
});

describe('card billing keys', () => {
  it('issueKeyOnly=false charges the amount at registration and returns cardInfo', async () => {
    const result = await registerCard({ amount: 12000 });
    expect(result.fields).toMatchObject({ amount: 12000, issueKeyOnly: false, cardInfo: { approvalNumber: expect.any(String) } });
    expect(Buffer.byteLength(result.fields.billingKey!)).toBeLessThanOrEqual(20);
    expect(Buffer.byteLength(result.fields.transactionId!)).toBeLessThanOrEqual(18);
    expect(result.fields.transactionDateTime).toEqual(new Date('2026-03-10T03:00:00Z'));
    expect(await sandbox.ledger()).toMatchObject([{ type: 'CHARGE', operation: 'ISSUE_KEY', amount: 12000, transactionId: result.fields.transactionId }]);
  });

  it('issueKeyOnly=true charges 100 and cancels it at once: nothing stays charged', async () => {
    const result = await registerCard({ issueKeyOnly: true });
    expect(result.fields.issueKeyOnly).toBe(true);
    expect(result.fields.cardInfo).toBeUndefined();
    const ledger = await sandbox.ledger();
    expect(ledger).toMatchObject([
      { type: 'CHARGE', amount: 100, verification: true },
      { type: 'CANCEL', amount: 100, verification: true },
    ]);
  });

  it('a window transaction issues one key only', async () => {
    const { transactionId } = await sandbox.authorize({ method: 'CARD' });
    expect((await client.issueBillingKey({ method: 'CARD', transactionId: transactionId! })).outcome).toBe('SUCCEEDED');
    const again = await client.issueBillingKey({ method: 'CARD', transactionId: transactionId! });
    expect(again).toMatchObject({ outcome: 'DECLINED', code: 'ALREADY_PROCESSED_TRANSACTION' });
    expect(await sandbox.ledger()).toHaveLength(1);
  });

  it('charges a billing key, and refuses an orderId used before', async () => {
    const { fields } = await registerCard();
    const orderId = nextOrderId();
    const first = await chargeCard(fields.billingKey!, { orderId });
    expect(first).toMatchObject({ outcome: 'SUCCEEDED', fields: { orderId, amount: 9900 } });
    const duplicate = await chargeCard(fields.billingKey!, { orderId });
    expect(duplicate).toMatchObject({ outcome: 'DECLINED', code: 'DUPLICATED_ORDER_ID' });
    expect((await sandbox.ledger()).filter((e) => e.orderId === orderId)).toHaveLength(1);
  });

  it('refuses an unknown billing key and a key used with the wrong method', async () => {
    expect(await chargeCard('BKUNKNOWN')).toMatchObject({ outcome: 'DECLINED', code: 'INVALID_BILLING_KEY' });
    const { fields } = await registerCard();
    const wrongMethod = await client.chargeBillingKey({
      method: 'MOBILE',
      billingKey: fields.billingKey!,
      userId: 'u',
      amount: 9900,
      orderName: 'x',
      orderId: nextOrderId(),
      lastTransactionId: 'T',
      itemCode: 'I',
    });
    expect(wrongMethod).toMatchObject({ outcome: 'DECLINED', code: 'METHOD_MISMATCH' });
    expect(await sandbox.ledger()).toHaveLength(1);
  });

  it('keeps the billing key out of the stored raw response and out of the logs', async () => {
    const logs = new LogCapture();
    const logged = clientFor(sandbox.url, { logs });
    const { transactionId } = await sandbox.authorize({ method: 'CARD', userName: '김철수', userPhoneNumber: '01011112222' });
    const result = await logged.issueBillingKey({ method: 'CARD', transactionId: transactionId! });
    logged.close();
    expect(result.outcome).toBe('SUCCEEDED');
    expect((result.raw as Record<string, unknown>).billingKey).toBe(REDACTED);
    expect((result.raw as Record<string, unknown>).userPhoneNumber).toBe(REDACTED);
    expect(JSON.stringify(result.raw)).not.toContain(result.fields.billingKey!);
    expect(logs.raw).not.toContain(result.fields.billingKey!);
    expect(logs.raw).not.toContain(SANDBOX_SECRET);
    expect(logs.raw).not.toContain('01011112222');
    expect(logs.lines.some((line) => (line.gateway as Record<string, unknown>)?.outcome === 'SUCCEEDED')).toBe(true);
  });
});

describe('one-time payment confirmation', () => {
  it('refuses an amount other than the authenticated one, then confirms the right amount once', async () => {
    const { transactionId } = await sandbox.authorize({ method: 'CARD', amount: 30000 });
    const tampered = await client.confirmPayment({ method: 'CARD', transactionId: transactionId!, amount: 100 });
    expect(tampered).toMatchObject({ outcome: 'DECLINED', code: 'AMOUNT_MISMATCH' });
    expect(await sandbox.ledger()).toEqual([]);
    const confirmed = await client.confirmPayment({ method: 'CARD', transactionId: transactionId!, amount: 30000 });
    expect(confirmed).toMatchObject({ outcome: 'SUCCEEDED', fields: { amount: 30000 } });
    const replay = await client.confirmPayment({ method: 'CARD', transactionId: transactionId!, amount: 30000 });
    expect(replay).toMatchObject({ outcome: 'DECLINED', code: 'ALREADY_PROCESSED_TRANSACTION' });
    expect(await sandbox.ledger()).toHaveLength(1);
  });
});

describe('MOBILE chain, amount and ±5-day window', () => {
  async function chargeMobile(billingKey: string, lastTransactionId: string, amount = 5500) {
    return client.chargeBillingKey({
      method: 'MOBILE',
      billingKey,
      userId: 'user-1',
      amount,
      orderName: 'Phone plan',
      orderId: nextOrderId(),
      lastTransactionId,
      itemCode: 'ITEM01',
    });
  }
  const start = new Date('2026-03-10T03:00:00Z');
  const oneMonthLater = (days: number) => new Date(addInterval(start, 'month', 1, 'Asia/Seoul').getTime() + days * 86_400_000);

  it('registration charges the first payment and returns carrier and phone number', async () => {
    const result = await registerMobile();
    expect(result.fields).toMatchObject({ carrier: expect.stringMatching(/^(SKT|KTF|LGT)$/), phoneNumber: '01098765432', amount: 5500 });
    expect(await sandbox.ledger()).toMatchObject([{ type: 'CHARGE', method: 'MOBILE', amount: 5500 }]);
  });

  it('accepts a charge 5 days inside the window and carries the chain forward', async () => {
    const registration = await registerMobile();
    await sandbox.setClock(oneMonthLater(5));
    const second = await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!);
    expect(second).toMatchObject({ outcome: 'SUCCEEDED', fields: { carrier: expect.any(String), phoneNumber: '01098765432' } });
    // The next cycle must quote the new transaction, not the old one.
    await sandbox.setClock(addInterval(oneMonthLater(5), 'month', 1, 'Asia/Seoul'));
    const stale = await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!);
    expect(stale).toMatchObject({ outcome: 'DECLINED', code: 'MOBILE_LAST_TRANSACTION_MISMATCH' });
    const third = await chargeMobile(registration.fields.billingKey!, second.fields.transactionId!);
    expect(third.outcome).toBe('SUCCEEDED');
    expect((await sandbox.ledger()).filter((e) => e.type === 'CHARGE')).toHaveLength(3);
  });

  it('accepts 5 days before the date as well', async () => {
    const registration = await registerMobile();
    await sandbox.setClock(oneMonthLater(-5));
    expect((await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!)).outcome).toBe('SUCCEEDED');
  });

  it.each([6, -6])('refuses a charge %i days from the date (outside the window)', async (days) => {
    const registration = await registerMobile();
    await sandbox.setClock(oneMonthLater(days));
    const result = await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!);
    expect(result).toMatchObject({ outcome: 'DECLINED', code: 'MOBILE_DATE_OUT_OF_RANGE' });
    expect(await sandbox.ledger()).toHaveLength(1);
  });

  it('refuses the wrong lastTransactionId and a different amount', async () => {
    const registration = await registerMobile();
    await sandbox.setClock(oneMonthLater(0));
    expect(await chargeMobile(registration.fields.billingKey!, 'TNOTTHELASTONE')).toMatchObject({
      outcome: 'DECLINED',
      code: 'MOBILE_LAST_TRANSACTION_MISMATCH',
    });
    expect(await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!, 5600)).toMatchObject({
      outcome: 'DECLINED',
      code: 'MOBILE_AMOUNT_MISMATCH',
    });
    expect(await sandbox.ledger()).toHaveLength(1);
  });

  it('counts the window in Korea time: 23:30 KST on the last allowed day is inside, 00:30 KST next day is not', async () => {
    // Registered 2026-03-10 12:00 KST; one month later is 2026-04-10; +5 days is 2026-04-15 (KST).
    const registration = await registerMobile();
    await sandbox.setClock(new Date('2026-04-15T14:30:00Z')); // 23:30 KST on 04-15
    expect((await chargeMobile(registration.fields.billingKey!, registration.fields.transactionId!)).outcome).toBe('SUCCEEDED');

    await sandbox.reset();
    await sandbox.setClock(start);
    const other = await registerMobile();
    await sandbox.setClock(new Date('2026-04-15T15:30:00Z')); // 00:30 KST on 04-16
    expect(await chargeMobile(other.fields.billingKey!, other.fields.transactionId!)).toMatchObject({ code: 'MOBILE_DATE_OUT_OF_RANGE' });
  });
});

describe('cancellation', () => {
  function cancel(method: 'CARD' | 'MOBILE', transactionId: string, amount: number, cancelType: 'C' | 'P') {
    return client.cancelPayment({ method, transactionId, amount, cancelType, cancelReason: 'customer request', cancelRequester: 'operator' });
  }

  it('cancels a card payment in parts up to what remains, then refuses more', async () => {
    const { fields } = await registerCard({ amount: 10000 });
    expect(await cancel('CARD', fields.transactionId!, 3000, 'P')).toMatchObject({ outcome: 'SUCCEEDED', fields: { cancelAmount: 3000 } });
    expect(await cancel('CARD', fields.transactionId!, 8000, 'P')).toMatchObject({ outcome: 'DECLINED', code: 'CANCEL_AMOUNT_EXCEEDED' });
    expect(await cancel('CARD', fields.transactionId!, 7000, 'C')).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(await cancel('CARD', fields.transactionId!, 1, 'P')).toMatchObject({ outcome: 'DECLINED', code: 'ALREADY_CANCELED' });
    const cancels = (await sandbox.ledger()).filter((e) => e.type === 'CANCEL');
    expect(cancels.map((e) => e.amount)).toEqual([3000, 7000]);
    expect(cancels.every((e) => e.originalTransactionId === fields.transactionId)).toBe(true);
  });

  it('cancels a MOBILE payment only in full', async () => {
    const { fields } = await registerMobile(5500);
    expect(await cancel('MOBILE', fields.transactionId!, 1000, 'P')).toMatchObject({ outcome: 'DECLINED', code: 'MOBILE_PARTIAL_CANCEL_NOT_ALLOWED' });
    expect(await cancel('MOBILE', fields.transactionId!, 5500, 'C')).toMatchObject({ outcome: 'SUCCEEDED' });
  });

  it('cancels a MOBILE payment only within its calendar month (Korea time)', async () => {
    await sandbox.setClock(new Date('2026-03-31T14:00:00Z')); // 23:00 KST on 03-31
    const { fields } = await registerMobile(5500);
    await sandbox.setClock(new Date('2026-03-31T15:30:00Z')); // 00:30 KST on 04-01
    expect(await cancel('MOBILE', fields.transactionId!, 5500, 'C')).toMatchObject({ outcome: 'DECLINED', code: 'MOBILE_CANCEL_PERIOD_EXPIRED' });
    expect((await sandbox.ledger()).filter((e) => e.type === 'CANCEL')).toEqual([]);
  });
});

describe('response parsing', () => {
  it('reads transactionDateTime as Korea time', async () => {
    await sandbox.setClock(new Date('2026-12-31T15:00:00Z'));
    const result = await registerCard();
    expect(formatGatewayDateTime(result.fields.transactionDateTime!)).toBe('20270101000000');
    expect(result.fields.transactionDateTime!.toISOString()).toBe('2026-12-31T15:00:00.000Z');
  });
});
