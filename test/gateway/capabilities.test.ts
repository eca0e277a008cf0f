// Both adapters behind the gateway interface (src/gateway/gateway.ts; docs/gateways.md "The gateway client"):
// Danal's and Toss's capability tables and outcome tables as stated, both in the app's registry, the sandbox's answers classified by that table, and the
// engine deciding refunds by the adapter's capabilities (never by the gateway's name): a refund its refund window or
// partial-refund rule refuses is refused before any attempt is written or call made; the same refund, given an
// adapter whose capabilities allow it, is sent, and Danal's sandbox itself then refuses it.
import { beforeEach, describe, expect, it } from 'vitest';
import { DANAL_CAPABILITIES, DANAL_OUTCOMES } from '../../src/gateway/danal.capabilities.ts';
import { verdictOf, type GatewayAdapter, type GatewayCapabilities } from '../../src/gateway/gateway.ts';
import { adapterProblems, createGateways, gatewayOf, unconfiguredGateway } from '../../src/gateway/registry.ts';
import { TOSS_OUTCOMES, tossCapabilities } from '../../src/gateway/toss.capabilities.ts';
import { createRefunds } from '../../src/modules/payments/refund-payment.ts';
import { offerWithdrawal } from '../../src/modules/payments/withdraw.ts';
import type { App } from '../../src/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import { adminHeaders, paymentsOf, setClock, subscribe } from '../helpers/billing.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

const who = { actor: 'test:capabilities', reason: 'customer asked' };

/** The app's Danal adapter with other capabilities, counting its refund calls (each still goes to the sandbox). */
function adapterWith(app: App, capabilities: Partial<GatewayCapabilities>): { gateway: GatewayAdapter; refundCalls: () => number } {
  let calls = 0;
  const gateway: GatewayAdapter = {
    ...app.gateway,
    capabilities: { ...app.gateway.capabilities, ...capabilities },
    refundPayment: (input) => {
      calls += 1;
      return app.gateway.refundPayment(input);
    },
  };
  return { gateway, refundCalls: () => calls };
}

const refundsWith = (app: App, gateway: GatewayAdapter) => createRefunds({ db: app.db, gateway, clock: app.clock, config: app.config, log: app.log }).refund;

async function attemptsOf(app: App, paymentId: string): Promise<string[]> {
  const response = await app.inject({ method: 'GET', url: `/admin/payments/${paymentId}`, headers: adminHeaders });
  return (response.json().attempts as Array<{ operation: string }>).map((a) => a.operation);
}

async function mobilePayment(app: App, userId: string) {
  const id = await subscribe(app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', userId });
  const [first] = await paymentsOf(app, id);
  expect(first).toMatchObject({ status: 'SUCCEEDED', amount: 5_500 });
  return first!;
}

describe("Danal's capability and outcome tables", () => {
  it('states what Danal can do', () => {
    expect(DANAL_CAPABILITIES).toEqual({
      idempotencyKey: false,
      inquiry: false,
      partialRefund: { CARD: true, MOBILE: false },
      keyDeletion: false,
      settlementFeed: false,
      methods: ['CARD', 'MOBILE'],
      mobileChain: true,
      issueCharges: true,
      refundWindow: { CARD: 'ANY_TIME', MOBILE: 'CALENDAR_MONTH_KST' },
    });
  });

  it('the app runs Danal through its adapter, in the registry, with no operation its capabilities deny', () => {
    const { gateway, gateways } = running.app;
    expect(gateway).toMatchObject({ name: 'DANAL', capabilities: DANAL_CAPABILITIES, outcomes: DANAL_OUTCOMES });
    expect(gateways.DANAL).toBe(gateway);
    expect(gateway.inquire).toBeUndefined();
    expect(gateway.deleteBillingKey).toBeUndefined();
    expect(gateway.fetchSettlements).toBeUndefined();
  });

  it('an adapter whose operations disagree with its capabilities is refused at start', () => {
    const danal = running.app.gateway;
    expect(adapterProblems(danal)).toEqual([]);
    const claimsInquiry = { ...danal, capabilities: { ...danal.capabilities, inquiry: true } };
    expect(adapterProblems(claimsInquiry)).toEqual(['inquiry is true but inquire is absent']);
    expect(() => createGateways({ DANAL: claimsInquiry })).toThrow(/gateway adapter DANAL: inquiry is true but inquire is absent/);
    const noMobile = { ...danal, capabilities: { ...danal.capabilities, methods: ['CARD' as const] } };
    expect(adapterProblems(noMobile)).toEqual(['mobileChain without MOBILE in methods']);
    // The MOBILE chain starts with the registration's payment, which only an issuance that charges can make.
    const issuesOnly = { ...danal, capabilities: { ...danal.capabilities, issueCharges: false } };
    expect(adapterProblems(issuesOnly)).toEqual(['mobileChain without issueCharges']);
    expect(() => createGateways({ DANAL: danal, TOSS: danal })).toThrow(/registered as TOSS but named DANAL/);
  });

  it('SUCCESS approves; every other code is a decline a retry may recover from', () => {
    expect(verdictOf(DANAL_OUTCOMES, 'SUCCESS')).toEqual({ outcome: 'SUCCEEDED' });
    for (const code of ['INSUFFICIENT_BALANCE', 'CARD_EXPIRED', 'NEVER_SEEN_BEFORE', 'constructor', '']) {
      expect(verdictOf(DANAL_OUTCOMES, code)).toEqual({ outcome: 'DECLINED', decline: 'MAY_RECOVER' });
    }
  });

  it("the sandbox's decline comes back classified by the table, with the gateway's code and message", async () => {
    const app = running.app;
    const id = await subscribe(app, { userId: 'declined-user' });
    await sandboxFault(app, { operation: 'CANCEL', kind: 'decline', code: 'CANCEL_REFUSED', message: 'refused by the acquirer' });
    const [payment] = await paymentsOf(app, id);
    const result = await app.gateway.refundPayment({
      method: 'CARD',
      transactionId: payment!.transactionId!,
      amount: 9_900,
      whole: true,
      reason: 'test',
      idempotencyKey: 'test-refund',
    });
    expect(result).toMatchObject({ outcome: 'DECLINED', decline: 'MAY_RECOVER', code: 'CANCEL_REFUSED', message: 'refused by the acquirer' });
  });
});

describe("Toss's capability and outcome tables", () => {
  it('states what Toss can do: idempotency, inquiry, partial CARD refunds, a settlement feed; key deletion only when configured; no MOBILE; an issuance that charges nothing', () => {
    expect(tossCapabilities({ keyDeletion: false })).toEqual({
      idempotencyKey: true,
      inquiry: true,
      partialRefund: { CARD: true, MOBILE: false },
      keyDeletion: false,
      settlementFeed: true,
      methods: ['CARD'],
      mobileChain: false,
      issueCharges: false,
      refundWindow: { CARD: 'ANY_TIME', MOBILE: 'ANY_TIME' },
    });
    expect(tossCapabilities({ keyDeletion: true }).keyDeletion).toBe(true);
  });

  it('the app runs Toss beside Danal in the registry (gatewayOf), each adapter’s operations agreeing with its capabilities', () => {
    const { gateways } = running.app;
    const toss = gatewayOf(gateways, 'TOSS')!;
    expect(toss).toMatchObject({ name: 'TOSS', capabilities: tossCapabilities({ keyDeletion: false }), outcomes: TOSS_OUTCOMES });
    expect(gatewayOf(gateways, 'DANAL')).toBe(running.app.gateway);
    for (const adapter of [gateways.DANAL, toss]) expect(adapterProblems(adapter), adapter.name).toEqual([]);
    expect(toss.inquire).toBeTypeOf('function');
    expect(toss.fetchSettlements).toBeTypeOf('function');
    expect(toss.deleteBillingKey).toBeUndefined();
    const claimsDeletion = { ...toss, capabilities: { ...toss.capabilities, keyDeletion: true } };
    expect(adapterProblems(claimsDeletion)).toEqual(['keyDeletion is true but deleteBillingKey is absent']);
    expect(() => createGateways({ DANAL: gateways.DANAL, TOSS: claimsDeletion })).toThrow(/gateway adapter TOSS: keyDeletion/);
  });

  it('a gateway not configured here can do nothing, its issuance charging nothing either, and agrees with itself', () => {
    const absent = unconfiguredGateway('TOSS');
    expect(absent.capabilities).toMatchObject({ methods: [], issueCharges: false, mobileChain: false, inquiry: false, keyDeletion: false });
    expect(adapterProblems(absent)).toEqual([]);
  });

  it('the one table: declines that may recover, dead instruments, maybe paid or in flight (UNKNOWN), our configuration (NOT_SENT)', () => {
    const verdicts = (codes: string[]) => codes.map((code) => verdictOf(TOSS_OUTCOMES, code));
    expect(verdicts(['REJECT_CARD_PAYMENT', 'REJECT_CARD_COMPANY', 'NEVER_SEEN_BEFORE', 'constructor', 'BELOW_MINIMUM_AMOUNT'])).toEqual(
      Array(5).fill({ outcome: 'DECLINED', decline: 'MAY_RECOVER' }),
    );
    expect(verdicts(['INVALID_CARD_EXPIRATION', 'INVALID_STOPPED_CARD', 'INVALID_BILL_KEY_REQUEST', 'NOT_MATCHES_CUSTOMER_KEY'])).toEqual(
      Array(4).fill({ outcome: 'DECLINED', decline: 'INSTRUMENT_DEAD' }),
    );
    expect(verdicts(['ALREADY_PROCESSED_PAYMENT', 'DUPLICATED_ORDER_ID', 'IDEMPOTENT_REQUEST_PROCESSING'])).toEqual(Array(3).fill({ outcome: 'UNKNOWN' }));
    expect(verdicts(['UNAUTHORIZED_KEY', 'INVALID_API_KEY', 'INCORRECT_BASIC_AUTH_FORMAT', 'NOT_SUPPORTED_METHOD'])).toEqual(
      Array(4).fill({ outcome: 'NOT_SENT' }),
    );
    // Exactly these codes are named; every other code takes the default.
    expect(Object.keys(TOSS_OUTCOMES.codes)).toHaveLength(13);
    expect(Object.values(TOSS_OUTCOMES.codes)).not.toContainEqual({ outcome: 'SUCCEEDED' });
  });
});

describe('the engine decides refunds by the capabilities', () => {
  it('a MOBILE refund after its month is refused before any call, because refundWindow says so', async () => {
    const app = running.app;
    const payment = await mobilePayment(app, 'mobile-month');
    await setClock(app, kst('2027-04-02T11:00:00'));
    const danal = adapterWith(app, {});
    await expect(refundsWith(app, danal.gateway)(payment.id, {}, who)).rejects.toMatchObject({ code: 'MOBILE_CANCEL_MONTH_CLOSED', statusCode: 422 });
    expect(danal.refundCalls()).toBe(0);
    expect(await attemptsOf(app, payment.id)).not.toContain('CANCEL');

    // The same refund under a window that says "any time" is the gateway's to refuse: it is sent, and Danal declines it.
    const open = adapterWith(app, { refundWindow: { CARD: 'ANY_TIME', MOBILE: 'ANY_TIME' } });
    await expect(refundsWith(app, open.gateway)(payment.id, {}, who)).rejects.toMatchObject({
      code: 'GATEWAY_DECLINED',
      details: { gatewayCode: 'MOBILE_CANCEL_PERIOD_EXPIRED' },
    });
    expect(open.refundCalls()).toBe(1);
    expect(await attemptsOf(app, payment.id)).toContain('CANCEL');
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CANCEL')).toEqual([]);
  });

  it('a partial MOBILE refund is refused before any call, because partialRefund says so; a partial CARD refund is sent', async () => {
    const app = running.app;
    const mobile = await mobilePayment(app, 'mobile-partial');
    const danal = adapterWith(app, {});
    await expect(refundsWith(app, danal.gateway)(mobile.id, { amount: 1_000 }, who)).rejects.toMatchObject({ code: 'MOBILE_PARTIAL_CANCEL' });
    expect(danal.refundCalls()).toBe(0);
    expect(await attemptsOf(app, mobile.id)).not.toContain('CANCEL');

    const card = (await paymentsOf(app, await subscribe(app, { userId: 'card-partial' })))[0]!;
    const refunded = await refundsWith(app, danal.gateway)(card.id, { amount: 1_000 }, who);
    expect(refunded).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 1_000 });
    expect(danal.refundCalls()).toBe(1);
    expect((await sandboxLedger(app)).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([1_000]);

    // A gateway that refunds CARD only whole refuses the same partial refund before calling.
    const wholeOnly = adapterWith(app, { partialRefund: { CARD: false, MOBILE: false } });
    await expect(refundsWith(app, wholeOnly.gateway)(card.id, { amount: 1_000 }, who)).rejects.toMatchObject({ statusCode: 422 });
    expect(wholeOnly.refundCalls()).toBe(0);
  });

  it("a withdrawal refunds through the gateway only what the payment's refund window still allows", () => {
    const sub = { status: 'ACTIVE', usageStartedAt: null, needsAttention: false };
    const paid = [
      {
        id: 'p1',
        method: 'MOBILE' as const,
        status: 'SUCCEEDED',
        amount: 5_500,
        canceledAmount: 0,
        approvedAt: kst('2027-03-30T10:00:00'),
        createdAt: kst('2027-03-30T10:00:00'),
      },
    ];
    const now = kst('2027-04-01T10:00:00');
    const week = 7 * 24 * 3_600_000;
    const offer = (capabilities: Pick<GatewayCapabilities, 'refundWindow'>) => offerWithdrawal(capabilities, sub, paid, now, week);
    expect(offer(DANAL_CAPABILITIES)).toMatchObject({ available: true, payments: [{ id: 'p1', refundable: 'EXTERNAL' }] });
    expect(offer({ refundWindow: { CARD: 'ANY_TIME', MOBILE: 'ANY_TIME' } })).toMatchObject({
      available: true,
      payments: [{ id: 'p1', refundable: 'GATEWAY' }],
    });
  });
});
