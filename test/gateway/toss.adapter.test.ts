// The Toss adapter (src/gateway/toss.adapter.ts) over real HTTP against the Toss sandbox, as the app registers it
// (app.gateways.TOSS, calling the sandbox on the app's private listener): key issuance, charges and their outcome
// classes (a decline that may recover, a dead card, maybe paid, in flight, our configuration, and every transport
// fault), the Idempotency-Key replay of a lost answer, partial then full refunds, lookups by orderId and settlements by
// date. Faults come from the sandbox's own injection (docs/sandbox.md "The Toss sandbox"); only "connection refused"
// is a closed port, which no sandbox can be.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { TOSS_SANDBOX_CLIENT_KEY, TOSS_SANDBOX_SECRET_KEY } from '../../src/dev-secrets.ts';
import type { GatewayAdapter, GatewayResult } from '../../src/gateway/gateway.ts';
import { createTossAdapter } from '../../src/gateway/toss.adapter.ts';
import { createRedactor } from '../../src/lib/redact.ts';
import { buildTestApp, startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { waitFor } from '../helpers/service.ts';
import { freePort } from '../setup/global-setup.ts';

let database: TestDatabase;
let app: App;
let base: string;
let toss: GatewayAdapter;

const kst = (local: string) => new Date(`${local}+09:00`);

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = await startTestApp(database.url, { env: { CLOCK: 'simulated' } }));
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/sandbox/toss`;
  toss = app.gateways.TOSS!;
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});
beforeEach(async () => {
  await control('POST', '/_control/reset', {});
  await setClock(kst('2027-03-10T10:00:00'));
});

// biome-ignore lint/suspicious/noExplicitAny: the sandbox's JSON answers, read by the assertions
type Json = any;

async function control(method: string, path: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`control ${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

const setClock = (instant: Date) => control('PUT', '/_control/clock', { now: instant.toISOString() });
const advance = (ms: number) => setClock(new Date(app.clock.now().getTime() + ms));
const ledger = async (): Promise<Json[]> => (await control('GET', '/_control/ledger')).entries;
const fault = (spec: Record<string, unknown>): Promise<{ id: number }> => control('POST', '/_control/faults', spec);

/** Another adapter on the same sandbox (its public mount), e.g. with another secret key or a short timeout. */
function adapterWith(options: { secretKey?: string; timeoutMs?: number; baseUrl?: string; keyDeletion?: { method: 'DELETE' | 'POST'; path: string } }) {
  const secretKey = options.secretKey ?? TOSS_SANDBOX_SECRET_KEY;
  return createTossAdapter({
    baseUrl: options.baseUrl ?? base,
    secretKey,
    timeoutMs: options.timeoutMs ?? 30_000,
    keyDeletion: options.keyDeletion,
    log: app.log,
    redactor: createRedactor([secretKey]),
  });
}

async function authKeyFor(customerKey: string): Promise<string> {
  const result = await control('POST', '/window/authorize', {
    clientKey: TOSS_SANDBOX_CLIENT_KEY,
    customerKey,
    successUrl: 'http://shop.test/toss/success',
    failUrl: 'http://shop.test/toss/fail',
    decision: 'approve',
  });
  return result.authKey;
}

async function issue(customerKey: string): Promise<string> {
  const result = await toss.issueBillingKey({ method: 'CARD', transactionId: await authKeyFor(customerKey), customerKey });
  expect(result, JSON.stringify(result)).toMatchObject({ outcome: 'SUCCEEDED', operation: 'ISSUE_KEY' });
  return result.fields.billingKey!;
}

const charge = (billingKey: string, orderId: string, amount = 9_900, customerKey = 'cust-toss-1', adapter = toss) =>
  adapter.chargeBillingKey({ method: 'CARD', billingKey, customerKey, userId: 'user-1', amount, orderId, orderName: '월간 플랜' });

const refund = (paymentKey: string, amount: number, whole: boolean, idempotencyKey: string) =>
  toss.refundPayment({ method: 'CARD', transactionId: paymentKey, amount, whole, reason: '고객 요청', idempotencyKey });

/** Nothing stored from an answer holds the billing key, the secret key or a card number. */
function expectClean(result: GatewayResult, billingKey?: string) {
  const raw = JSON.stringify(result.raw ?? null);
  if (billingKey) expect(raw).not.toContain(billingKey);
  expect(raw).not.toContain(TOSS_SANDBOX_SECRET_KEY);
  expect(raw).not.toMatch(/\d{4}\*{4}/);
}

describe('key issuance', () => {
  it('exchanges the window’s authKey for a billing key bound to its customerKey, once', async () => {
    const authKey = await authKeyFor('cust-toss-1');
    const issued = await toss.issueBillingKey({ method: 'CARD', transactionId: authKey, customerKey: 'cust-toss-1' });
    expect(issued).toMatchObject({ outcome: 'SUCCEEDED', reason: 'APPROVED', httpStatus: 200, fields: { extra: { customerKey: 'cust-toss-1' } } });
    expect(issued.fields.billingKey).toMatch(/=$/);
    expect(issued.fields.cardInfo).toMatchObject({ cardCode: expect.any(String), cardName: expect.any(String) });
    expectClean(issued, issued.fields.billingKey);

    // The authKey is single-use: sent again it is refused, a decline that charged nothing.
    const again = await toss.issueBillingKey({ method: 'CARD', transactionId: authKey, customerKey: 'cust-toss-1' });
    expect(again).toMatchObject({ outcome: 'DECLINED', decline: 'MAY_RECOVER', code: 'INVALID_REQUEST', httpStatus: 400 });
  });

  it('another customerKey than the window’s is a dead instrument; MOBILE or no customerKey is refused before sending', async () => {
    const authKey = await authKeyFor('cust-toss-1');
    const other = await toss.issueBillingKey({ method: 'CARD', transactionId: authKey, customerKey: 'cust-toss-2' });
    expect(other).toMatchObject({ outcome: 'DECLINED', decline: 'INSTRUMENT_DEAD', code: 'NOT_MATCHES_CUSTOMER_KEY' });
    expect(await toss.issueBillingKey({ method: 'MOBILE', transactionId: authKey, customerKey: 'cust-toss-1' })).toMatchObject({
      outcome: 'NOT_SENT',
      reason: 'INVALID_REQUEST',
    });
    expect(await toss.issueBillingKey({ method: 'CARD', transactionId: authKey })).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' });
  });
});

describe('charges and their outcome classes', () => {
  it('an approval: SUCCEEDED with the paymentKey as transactionId, the amount, the approval time; one charge booked', async () => {
    const key = await issue('cust-toss-1');
    const result = await charge(key, 'toss-order-0001');
    expect(result).toMatchObject({ outcome: 'SUCCEEDED', reason: 'APPROVED', operation: 'BILLING_CONFIRM', httpStatus: 200 });
    expect(result.fields).toMatchObject({ orderId: 'toss-order-0001', amount: 9_900, extra: { paymentStatus: 'DONE', balanceAmount: 9_900 } });
    expect(result.fields.transactionId).toMatch(/^tbill/);
    expect(result.fields.transactionDateTime).toEqual(kst('2027-03-10T10:00:00'));
    expect(result.fields.cardInfo?.approvalNumber).toMatch(/^\d{8}$/);
    expectClean(result, key);
    expect(await ledger()).toMatchObject([{ type: 'CHARGE', orderId: 'toss-order-0001', amount: 9_900, paymentKey: result.fields.transactionId }]);
  });

  it.each(['REJECT_CARD_PAYMENT', 'REJECT_CARD_COMPANY', 'PROVIDER_ERROR', 'A_CODE_NOBODY_KNOWS'])(
    'a decline that may recover (%s): DECLINED MAY_RECOVER, nothing booked, the next attempt’s orderId approved',
    async (code) => {
      const key = await issue('cust-toss-1');
      await fault({ operation: 'CHARGE', kind: 'decline', code });
      const declined = await charge(key, 'toss-order-0002');
      expect(declined).toMatchObject({ outcome: 'DECLINED', reason: 'DECLINED', decline: 'MAY_RECOVER', code });
      expect(await ledger()).toEqual([]);
      expect(await charge(key, 'toss-order-0003')).toMatchObject({ outcome: 'SUCCEEDED' });
    },
  );

  it.each(['INVALID_CARD_EXPIRATION', 'INVALID_STOPPED_CARD', 'INVALID_BILL_KEY_REQUEST', 'NOT_MATCHES_CUSTOMER_KEY'])(
    'a dead instrument (%s, injected): DECLINED INSTRUMENT_DEAD, nothing booked',
    async (code) => {
      const key = await issue('cust-toss-1');
      await fault({ operation: 'CHARGE', kind: 'decline', code });
      expect(await charge(key, 'toss-order-0004')).toMatchObject({ outcome: 'DECLINED', decline: 'INSTRUMENT_DEAD', code, httpStatus: 400 });
      expect(await ledger()).toEqual([]);
    },
  );

  it('a dead instrument by the sandbox’s own rules: a key Toss never issued, a key of another customer', async () => {
    const key = await issue('cust-toss-1');
    expect(await charge('bm90LWEta2V5LXRvc3MtZXZlci1pc3N1ZWQtdGhpcy1pcz0=', 'toss-order-0005')).toMatchObject({
      outcome: 'DECLINED',
      decline: 'INSTRUMENT_DEAD',
      code: 'INVALID_BILL_KEY_REQUEST',
    });
    expect(await charge(key, 'toss-order-0006', 9_900, 'cust-toss-2')).toMatchObject({
      outcome: 'DECLINED',
      decline: 'INSTRUMENT_DEAD',
      code: 'NOT_MATCHES_CUSTOMER_KEY',
    });
    expect(await ledger()).toEqual([]);
  });

  it('maybe paid: an orderId already approved, by another key (DUPLICATED_ORDER_ID) or by the same charge after its Idempotency-Key expired (ALREADY_PROCESSED_PAYMENT): UNKNOWN', async () => {
    const key = await issue('cust-toss-1');
    const otherKey = await issue('cust-toss-2');
    expect(await charge(key, 'toss-order-0007')).toMatchObject({ outcome: 'SUCCEEDED' });
    // Another billing key is another path: no replay, and Toss refuses the orderId.
    const duplicated = await charge(otherKey, 'toss-order-0007', 9_900, 'cust-toss-2');
    expect(duplicated).toMatchObject({ outcome: 'UNKNOWN', reason: 'MAY_HAVE_CHARGED', code: 'DUPLICATED_ORDER_ID', httpStatus: 400 });
    // Sixteen days on, the key's first answer is no longer kept: the same charge reaches Toss's orderId rule.
    await advance(16 * 86_400_000);
    const processed = await charge(key, 'toss-order-0007');
    expect(processed).toMatchObject({ outcome: 'UNKNOWN', reason: 'MAY_HAVE_CHARGED', code: 'ALREADY_PROCESSED_PAYMENT' });
    expect((await ledger()).filter((entry) => entry.orderId === 'toss-order-0007')).toHaveLength(1);
  });

  it('in flight: the same orderId while its first call runs is 409 IDEMPOTENT_REQUEST_PROCESSING, UNKNOWN; the first then succeeds, once', async () => {
    const key = await issue('cust-toss-1');
    const held = await fault({ operation: 'CHARGE', kind: 'latency', until: 'released' });
    const first = charge(key, 'toss-order-0008');
    await waitFor('the first charge held by the sandbox', async () => (await control('GET', '/_control/held')).held.length === 1);
    const second = await charge(key, 'toss-order-0008');
    expect(second).toMatchObject({ outcome: 'UNKNOWN', reason: 'MAY_HAVE_CHARGED', code: 'IDEMPOTENT_REQUEST_PROCESSING', httpStatus: 409 });
    await control('POST', '/_control/release', { faultId: held.id });
    expect(await first).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(await ledger()).toHaveLength(1);
  });

  it.each(['UNAUTHORIZED_KEY', 'INVALID_API_KEY', 'INCORRECT_BASIC_AUTH_FORMAT', 'NOT_SUPPORTED_METHOD'])(
    'our configuration (%s, injected): NOT_SENT, REFUSED_UNPROCESSED, nothing declined or booked',
    async (code) => {
      const key = await issue('cust-toss-1');
      await fault({ operation: 'CHARGE', kind: 'decline', code });
      const result = await charge(key, 'toss-order-0009');
      expect(result).toMatchObject({ outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED', code });
      expect(result.decline).toBeUndefined();
      expect(await ledger()).toEqual([]);
    },
  );

  it('a wrong secret key: Toss refuses it (401 UNAUTHORIZED_KEY) before reading the call: NOT_SENT; the secret is nowhere in the answer', async () => {
    const key = await issue('cust-toss-1');
    const wrong = adapterWith({ secretKey: 'test_sk_not_this_merchants_key_0001' });
    try {
      const result = await charge(key, 'toss-order-0010', 9_900, 'cust-toss-1', wrong);
      expect(result).toMatchObject({ outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED', code: 'UNAUTHORIZED_KEY', httpStatus: 401 });
      expect(JSON.stringify(result)).not.toContain('test_sk_not_this_merchants_key_0001');
      expect(await wrong.inquire!({ orderId: 'toss-order-0010' })).toMatchObject({ outcome: 'NOT_SENT', code: 'UNAUTHORIZED_KEY' });
      expect(await ledger()).toEqual([]);
      // Sent again with the right key, the same orderId is approved: nothing was kept for it.
      expect(await charge(key, 'toss-order-0010')).toMatchObject({ outcome: 'SUCCEEDED' });
    } finally {
      wrong.close();
    }
  });

  it('refused before sending: a bad orderId, MOBILE, no customerKey (NOT_SENT INVALID_REQUEST, no call made)', async () => {
    const key = await issue('cust-toss-1');
    expect(await charge(key, 'short')).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST', detail: expect.stringContaining('orderId') });
    const mobile = await toss.chargeBillingKey({
      method: 'MOBILE',
      billingKey: key,
      customerKey: 'cust-toss-1',
      userId: 'u',
      amount: 100,
      orderId: 'toss-order-0011',
      orderName: 'x',
    });
    expect(mobile).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' });
    const noCustomer = await toss.chargeBillingKey({ method: 'CARD', billingKey: key, userId: 'u', amount: 100, orderId: 'toss-order-0012', orderName: 'x' });
    expect(noCustomer).toMatchObject({ outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' });
    expect(await ledger()).toEqual([]);
  });

  it('connection refused: NOT_SENT CONNECT_FAILED (a closed port: no sandbox can be one)', async () => {
    const closed = adapterWith({ baseUrl: `http://127.0.0.1:${await freePort()}/sandbox/toss` });
    try {
      expect(await charge('any-key', 'toss-order-0013', 9_900, 'cust-toss-1', closed)).toMatchObject({ outcome: 'NOT_SENT', reason: 'CONNECT_FAILED' });
    } finally {
      closed.close();
    }
  });

  it.each([
    [{ kind: 'http_500' }, 'HTTP_5XX', 0],
    [{ kind: 'http_500', booked: true }, 'HTTP_5XX', 1],
    [{ kind: 'reset' }, 'CONNECTION_RESET', 0],
    [{ kind: 'malformed' }, 'MALFORMED_BODY', 1],
    [{ kind: 'truncated' }, 'TRUNCATED_BODY', 1],
    [{ kind: 'mismatch', field: 'amount' }, 'AMOUNT_MISMATCH', 1],
    [{ kind: 'mismatch', field: 'orderId' }, 'ORDER_ID_MISMATCH', 1],
    [{ kind: 'decline', code: 'FAILED_INTERNAL_SYSTEM_PROCESSING' }, 'HTTP_5XX', 0],
  ])('a fault %o: UNKNOWN %s (charges booked: %i)', async (spec, reason, booked) => {
    const key = await issue('cust-toss-1');
    await fault({ operation: 'CHARGE', ...spec });
    const result = await charge(key, 'toss-order-0014');
    expect(result).toMatchObject({ outcome: 'UNKNOWN', reason });
    expectClean(result, key);
    expect(await ledger()).toHaveLength(booked);
  });

  it('a timeout after the charge was booked: UNKNOWN TIMEOUT; the same orderId sent again replays the first answer (approved), booked once', async () => {
    const key = await issue('cust-toss-1');
    const impatient = adapterWith({ timeoutMs: 1_000 });
    try {
      await fault({ operation: 'CHARGE', kind: 'timeout' });
      const lost = await charge(key, 'toss-order-0015', 9_900, 'cust-toss-1', impatient);
      expect(lost).toMatchObject({ outcome: 'UNKNOWN', reason: 'TIMEOUT' });
      const booked = await ledger();
      expect(booked).toHaveLength(1);
      // The answer Toss kept for the Idempotency-Key (the orderId) is the approval that was lost.
      const replayed = await charge(key, 'toss-order-0015');
      expect(replayed).toMatchObject({ outcome: 'SUCCEEDED', fields: { transactionId: booked[0].paymentKey } });
      expect(await ledger()).toHaveLength(1);
    } finally {
      impatient.close();
    }
  });

  it('a decline is replayed too: the same orderId sent again answers the first decline, never a charge', async () => {
    const key = await issue('cust-toss-1');
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'REJECT_CARD_COMPANY' });
    expect(await charge(key, 'toss-order-0016')).toMatchObject({ outcome: 'DECLINED', code: 'REJECT_CARD_COMPANY' });
    expect(await charge(key, 'toss-order-0016')).toMatchObject({ outcome: 'DECLINED', code: 'REJECT_CARD_COMPANY' });
    expect(await ledger()).toEqual([]);
  });
});

describe('refunds', () => {
  it('a partial then a full refund: each SUCCEEDED with what it cancelled; a refund sent again replays; more than the balance is declined', async () => {
    const key = await issue('cust-toss-1');
    const paid = await charge(key, 'toss-order-0020', 10_000);
    const paymentKey = paid.fields.transactionId!;

    const partial = await refund(paymentKey, 3_000, false, 'refund-attempt-1');
    expect(partial).toMatchObject({
      outcome: 'SUCCEEDED',
      operation: 'CANCEL',
      fields: { cancelAmount: 3_000, extra: { paymentStatus: 'PARTIAL_CANCELED', balanceAmount: 7_000 } },
    });
    // The same refund attempt again (its answer lost, say) is the first answer, not a second cancel.
    expect(await refund(paymentKey, 3_000, false, 'refund-attempt-1')).toMatchObject({ outcome: 'SUCCEEDED', fields: { cancelAmount: 3_000 } });

    await advance(2_000); // Toss takes one cancel request per payment per second.
    expect(await refund(paymentKey, 8_000, false, 'refund-attempt-2')).toMatchObject({ outcome: 'DECLINED', code: 'NOT_CANCELABLE_AMOUNT' });
    await advance(2_000);
    const full = await refund(paymentKey, 7_000, true, 'refund-attempt-3');
    expect(full).toMatchObject({ outcome: 'SUCCEEDED', fields: { cancelAmount: 7_000, extra: { paymentStatus: 'CANCELED', balanceAmount: 0 } } });
    expect((await ledger()).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([3_000, 7_000]);
  });

  it('a whole refund whose answer cancelled another amount than meant is UNKNOWN, flagged', async () => {
    const key = await issue('cust-toss-1');
    const paymentKey = (await charge(key, 'toss-order-0021', 10_000)).fields.transactionId!;
    // We believe 6,000 remains; Toss cancels its whole balance, 10,000.
    expect(await refund(paymentKey, 6_000, true, 'refund-attempt-4')).toMatchObject({ outcome: 'UNKNOWN', reason: 'AMOUNT_MISMATCH' });
  });

  it('a second cancel within a second is refused by Toss: a decline, nothing cancelled twice', async () => {
    const key = await issue('cust-toss-1');
    const paymentKey = (await charge(key, 'toss-order-0022', 10_000)).fields.transactionId!;
    expect(await refund(paymentKey, 1_000, false, 'refund-attempt-5')).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(await refund(paymentKey, 1_000, false, 'refund-attempt-6')).toMatchObject({ outcome: 'DECLINED', code: 'FORBIDDEN_CONSECUTIVE_REQUEST' });
    expect((await ledger()).filter((e) => e.type === 'CANCEL')).toHaveLength(1);
  });
});

describe('faults on the other calls', () => {
  it('a refund whose answer was lost after Toss cancelled: UNKNOWN; the same refund attempt again replays the cancel, made once', async () => {
    const key = await issue('cust-toss-1');
    const paymentKey = (await charge(key, 'toss-order-0025', 10_000)).fields.transactionId!;
    await fault({ operation: 'CANCEL', kind: 'malformed' });
    expect(await refund(paymentKey, 2_500, false, 'refund-attempt-20')).toMatchObject({ outcome: 'UNKNOWN', reason: 'MALFORMED_BODY' });
    expect(await refund(paymentKey, 2_500, false, 'refund-attempt-20')).toMatchObject({ outcome: 'SUCCEEDED', fields: { cancelAmount: 2_500 } });
    expect((await ledger()).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([2_500]);
  });

  it('a refund: a 5xx before anything was cancelled UNKNOWN; our configuration NOT_SENT; neither cancels', async () => {
    const key = await issue('cust-toss-1');
    const paymentKey = (await charge(key, 'toss-order-0026', 10_000)).fields.transactionId!;
    await fault({ operation: 'CANCEL', kind: 'http_500' });
    expect(await refund(paymentKey, 1_000, false, 'refund-attempt-21')).toMatchObject({ outcome: 'UNKNOWN', reason: 'HTTP_5XX' });
    await fault({ operation: 'CANCEL', kind: 'decline', code: 'INVALID_API_KEY' });
    expect(await refund(paymentKey, 1_000, false, 'refund-attempt-22')).toMatchObject({ outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED' });
    expect((await ledger()).filter((e) => e.type === 'CANCEL')).toEqual([]);
  });

  it('key issuance: a 5xx or a reset UNKNOWN, our configuration NOT_SENT', async () => {
    for (const [spec, outcome] of [
      [{ kind: 'http_500' }, 'UNKNOWN'],
      [{ kind: 'reset' }, 'UNKNOWN'],
      [{ kind: 'decline', code: 'UNAUTHORIZED_KEY' }, 'NOT_SENT'],
    ] as const) {
      await fault({ operation: 'ISSUE_BILLING_KEY', ...spec });
      const result = await toss.issueBillingKey({ method: 'CARD', transactionId: await authKeyFor('cust-toss-9'), customerKey: 'cust-toss-9' });
      expect(result, JSON.stringify(spec)).toMatchObject({ outcome });
    }
  });

  it('a lookup: a reset, a broken body or a timeout is UNKNOWN (ask again later)', async () => {
    const key = await issue('cust-toss-1');
    await charge(key, 'toss-order-0027');
    await fault({ operation: 'LOOKUP', kind: 'reset' });
    expect(await toss.inquire!({ orderId: 'toss-order-0027' })).toMatchObject({ outcome: 'UNKNOWN', reason: 'CONNECTION_RESET' });
    await fault({ operation: 'LOOKUP', kind: 'malformed' });
    expect(await toss.inquire!({ orderId: 'toss-order-0027' })).toMatchObject({ outcome: 'UNKNOWN', reason: 'MALFORMED_BODY' });
    const impatient = adapterWith({ timeoutMs: 1_000 });
    try {
      await fault({ operation: 'LOOKUP', kind: 'timeout' });
      expect(await impatient.inquire!({ orderId: 'toss-order-0027' })).toMatchObject({ outcome: 'UNKNOWN', reason: 'TIMEOUT' });
    } finally {
      impatient.close();
    }
    expect(await toss.inquire!({ orderId: 'toss-order-0027' })).toMatchObject({ outcome: 'SUCCEEDED' });
  });
});

describe('inquiry by orderId', () => {
  it('a booked orderId: SUCCEEDED with its paymentKey and amount; one Toss never saw: DECLINED NOT_FOUND_PAYMENT', async () => {
    const key = await issue('cust-toss-1');
    const paid = await charge(key, 'toss-order-0030', 12_000);
    const found = await toss.inquire!({ orderId: 'toss-order-0030' });
    expect(found).toMatchObject({ outcome: 'SUCCEEDED', operation: 'INQUIRY', fields: { transactionId: paid.fields.transactionId, amount: 12_000 } });
    expectClean(found, key);
    expect(await toss.inquire!({ orderId: 'toss-order-never' })).toMatchObject({ outcome: 'DECLINED', code: 'NOT_FOUND_PAYMENT', httpStatus: 404 });
  });

  it('a refused charge: DECLINED with its failure code (a dead card says so); a booked charge whose answer was lost is found', async () => {
    const key = await issue('cust-toss-1');
    await fault({ operation: 'CHARGE', kind: 'decline', code: 'INVALID_STOPPED_CARD' });
    await charge(key, 'toss-order-0031');
    expect(await toss.inquire!({ orderId: 'toss-order-0031' })).toMatchObject({
      outcome: 'DECLINED',
      decline: 'INSTRUMENT_DEAD',
      code: 'INVALID_STOPPED_CARD',
      detail: 'payment ABORTED',
    });

    await fault({ operation: 'CHARGE', kind: 'http_500', booked: true });
    expect(await charge(key, 'toss-order-0032')).toMatchObject({ outcome: 'UNKNOWN' });
    expect(await toss.inquire!({ orderId: 'toss-order-0032' })).toMatchObject({ outcome: 'SUCCEEDED', fields: { amount: 9_900 } });
  });

  it('a cancelled payment, a 5xx or another error answer is UNKNOWN: ask again later', async () => {
    const key = await issue('cust-toss-1');
    const paymentKey = (await charge(key, 'toss-order-0033')).fields.transactionId!;
    await refund(paymentKey, 9_900, true, 'refund-attempt-7');
    expect(await toss.inquire!({ orderId: 'toss-order-0033' })).toMatchObject({ outcome: 'UNKNOWN', detail: 'payment status CANCELED' });
    await fault({ operation: 'LOOKUP', kind: 'http_500' });
    expect(await toss.inquire!({ orderId: 'toss-order-0033' })).toMatchObject({ outcome: 'UNKNOWN', reason: 'HTTP_5XX' });
    await fault({ operation: 'LOOKUP', kind: 'decline', code: 'FORBIDDEN_REQUEST' });
    expect(await toss.inquire!({ orderId: 'toss-order-0033' })).toMatchObject({ outcome: 'UNKNOWN', code: 'FORBIDDEN_REQUEST' });
  });
});

describe('settlements', () => {
  it('reads the lines of Korea dates from..to: approvals and cancels with their fees and payout dates', async () => {
    const key = await issue('cust-toss-1');
    await setClock(kst('2027-03-10T23:30:00'));
    const first = await charge(key, 'toss-order-0040', 10_000);
    await setClock(kst('2027-03-11T00:30:00'));
    await charge(key, 'toss-order-0041', 20_000);
    await refund(first.fields.transactionId!, 4_000, false, 'refund-attempt-8');

    const tenth = await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-10' });
    expect(tenth.result).toMatchObject({ outcome: 'SUCCEEDED', operation: 'SETTLEMENTS', raw: { lines: 1 } });
    expect(tenth.nextPage).toBeUndefined();
    expect(tenth.lines).toEqual([
      {
        transactionId: first.fields.transactionId,
        orderId: 'toss-order-0040',
        type: 'APPROVAL',
        amount: 10_000,
        tradedAt: kst('2027-03-10T23:30:00'),
        method: 'CARD',
        fee: 250,
        settlementDate: '2027-03-12',
      },
    ]);
    const both = await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-11' });
    expect(both.lines.map((line) => [line.orderId, line.type, line.amount, line.fee])).toEqual([
      ['toss-order-0040', 'APPROVAL', 10_000, 250],
      ['toss-order-0041', 'APPROVAL', 20_000, 500],
      ['toss-order-0040', 'CANCEL', 4_000, -100],
    ]);
    expect(both.lines[2]!.tradedAt).toEqual(kst('2027-03-11T00:30:00'));
  });

  it('pages: a full page says there is a next one; the last page does not', async () => {
    const minted = await control('POST', '/_control/billing-keys', { customerKeys: ['cust-toss-pages'] });
    const key = minted.keys[0].billingKey as string;
    for (let n = 0; n < 101; n += 1)
      expect(await charge(key, `toss-page-${String(n).padStart(4, '0')}`, 1_000, 'cust-toss-pages')).toMatchObject({ outcome: 'SUCCEEDED' });
    const first = await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-10' });
    expect(first.lines).toHaveLength(100);
    expect(first.nextPage).toBe('2');
    const second = await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-10', page: first.nextPage });
    expect(second.lines.map((line) => line.orderId)).toEqual(['toss-page-0100']);
    expect(second.nextPage).toBeUndefined();
  });

  it('a malformed date or page is refused before sending', async () => {
    expect(await toss.fetchSettlements!({ from: '2027-3-10', to: '2027-03-10' })).toMatchObject({
      lines: [],
      result: { outcome: 'NOT_SENT', reason: 'INVALID_REQUEST' },
    });
    expect(await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-10', page: 'next' })).toMatchObject({ lines: [], result: { outcome: 'NOT_SENT' } });
  });

  it('a fault on the feed: no lines, the result says why', async () => {
    await fault({ operation: 'SETTLEMENTS', kind: 'malformed' });
    const read = await toss.fetchSettlements!({ from: '2027-03-10', to: '2027-03-10' });
    expect(read).toMatchObject({ lines: [], result: { outcome: 'UNKNOWN', reason: 'MALFORMED_BODY' } });
  });
});

describe('key deletion', () => {
  it('configured, deletes the key at Toss (the sandbox’s assumed call): the key is then dead; an unknown key is declined; a 5xx UNKNOWN', async () => {
    const deleting = adapterWith({ keyDeletion: { method: 'DELETE', path: '/v1/billing/{billingKey}' } });
    try {
      const key = await issue('cust-toss-1');
      const deleted = await deleting.deleteBillingKey!({ billingKey: key, customerKey: 'cust-toss-1' });
      expect(deleted).toMatchObject({ outcome: 'SUCCEEDED', operation: 'DELETE_KEY', httpStatus: 200 });
      expectClean(deleted, key);
      expect(await charge(key, 'toss-order-0050')).toMatchObject({ outcome: 'DECLINED', decline: 'INSTRUMENT_DEAD', code: 'INVALID_BILL_KEY_REQUEST' });
      expect(await deleting.deleteBillingKey!({ billingKey: key })).toMatchObject({ outcome: 'DECLINED', code: 'INVALID_BILL_KEY_REQUEST' });
      const other = await issue('cust-toss-2');
      await fault({ operation: 'DELETE_BILLING_KEY', kind: 'http_500' });
      expect(await deleting.deleteBillingKey!({ billingKey: other })).toMatchObject({ outcome: 'UNKNOWN', reason: 'HTTP_5XX' });
    } finally {
      deleting.close();
    }
  });

  it('is off unless its call is configured; configured, it is present and its capability says so', () => {
    expect(toss.capabilities.keyDeletion).toBe(false);
    expect(toss.deleteBillingKey).toBeUndefined();
    const deleting = adapterWith({ keyDeletion: { method: 'DELETE', path: '/v1/billing/{billingKey}' } });
    try {
      expect(deleting.capabilities.keyDeletion).toBe(true);
      expect(deleting.deleteBillingKey).toBeTypeOf('function');
    } finally {
      deleting.close();
    }
  });
});

describe('Toss at a configured address (TOSS_API_BASE_URL)', () => {
  it('the app calls it with the configured keys and mounts no Toss sandbox of its own', async () => {
    const other = await createTestDatabase();
    const configured = await buildTestApp(other.url, {
      env: { TOSS_API_BASE_URL: base, TOSS_SECRET_KEY: TOSS_SANDBOX_SECRET_KEY, TOSS_CLIENT_KEY: TOSS_SANDBOX_CLIENT_KEY },
    });
    try {
      expect(configured.config.toss.mode).toBe('API');
      expect((await configured.inject({ method: 'GET', url: '/sandbox/toss/_control/ledger' })).statusCode).toBe(404);
      const key = await issue('cust-toss-1');
      expect(await charge(key, 'toss-order-0060', 9_900, 'cust-toss-1', configured.gateways.TOSS!)).toMatchObject({ outcome: 'SUCCEEDED' });
      expect(await ledger()).toMatchObject([{ orderId: 'toss-order-0060' }]);
    } finally {
      await configured.close();
      await other.drop();
    }
  });
});
