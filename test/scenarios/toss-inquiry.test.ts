// Unknown Toss outcomes finish themselves (docs/architecture.md "Unknown outcomes a gateway can be asked about"):
// through the public routes against the Toss sandbox, a charge whose outcome was lost becomes UNKNOWN, and the
// inquiry pass (POST /admin/inquiries/run, as the scheduler's tick runs it) looks its orderId up on the delays of
// TOSS_INQUIRY_DELAYS: a charge Toss booked is finished SUCCEEDED once, through the late-outcome path (one
// payment.succeeded event, the subscription advanced); a charge Toss never saw is finished FAILED as a decline once
// the call's lease has long passed, and its retry is a new attempt with a new orderId; an operator's resolve racing
// the pass wins or loses safely, one outcome recorded; Danal's unknowns are never looked up.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createInquiryPass, INQUIRY_SETTLE_MARGIN_MS } from '../../src/modules/payments/inquire-unknowns.ts';
import { createPaymentActions } from '../../src/modules/payments/payment-actions.service.ts';
import { buildTestApp } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { createTestDatabase, truncateAll, type TestDatabase } from '../helpers/database.ts';
import { waitFor } from '../helpers/service.ts';
import { GATEWAY_TIMEOUT_MS } from '../setup/safety-nets.ts';
import { subscribeThroughToss, tossLedger as tossLedgerOf } from '../helpers/gateways.ts';

let database: TestDatabase;
let app: App;
const MINUTE = 60_000;

beforeAll(async () => {
  database = await createTestDatabase();
  // The client gives up on a held call after the suite's gateway timeout, as on the real gateway.
  app = await buildTestApp(database.url, { env: { CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS), RETRY_DELAYS: '1d,3d,5d' } });
});
afterAll(async () => {
  await app.close();
  await database.drop();
});
beforeEach(async () => {
  await truncateAll(app.db);
  // A test's faults not all consumed (one asks Toss fewer times than it queued 5xx answers) are not the next test's.
  await app.inject({ method: 'DELETE', url: '/sandbox/toss/_control/faults' });
  await setClock(app, '2027-05-10T01:00:00.000Z');
});

interface InquiryReport {
  asked: number;
  succeeded: number;
  failed: number;
  alreadyFinished: number;
  leftForOperator: number;
}

async function runInquiries(): Promise<InquiryReport> {
  const response = await app.inject({ method: 'POST', url: '/admin/inquiries/run', headers: adminHeaders });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as InquiryReport;
}

const later = (ms: number) => setClock(app, new Date(app.clock.now().getTime() + ms));

/** A Toss subscription through the public flow: a key-only registration, due at once. */
async function tossSubscription(): Promise<string> {
  return (await subscribeThroughToss(app, { userId: `toss-${randomUUID()}`, amount: 15000, orderName: 'Toss plan' })).subscriptionId;
}

async function tossFault(spec: Record<string, unknown>): Promise<number> {
  const response = await app.inject({ method: 'POST', url: '/sandbox/toss/_control/faults', payload: spec });
  expect(response.statusCode, response.body).toBeLessThan(300);
  return (response.json() as { id: number }).id;
}

const tossLedger = () => tossLedgerOf(app);

/** A Toss subscription whose first charge ends UNKNOWN by `fault`: its payment and the attempt's orderId. */
async function unknownTossCharge(fault: Record<string, unknown>) {
  const subscriptionId = await tossSubscription();
  await tossFault({ operation: 'CHARGE', ...fault });
  expect(await runPass(app)).toMatchObject({ claimed: 1, unknown: 1 });
  const [payment] = await paymentsOf(app, subscriptionId);
  expect(payment).toMatchObject({ status: 'UNKNOWN', gateway: 'TOSS' });
  expect((await getSubscription(app, subscriptionId)).needsAttention).toBe(true);
  return { subscriptionId, payment: payment!, orderId: payment!.attempts!.at(-1)!.orderId };
}

const eventsOf = (type: string, paymentId: string) => app.db.event.count({ where: { type, objectId: paymentId } });

const resolve = (paymentId: string, body: Record<string, unknown>) =>
  app.inject({
    method: 'POST',
    url: `/admin/payments/${paymentId}/resolve`,
    headers: { ...adminHeaders, 'idempotency-key': randomUUID() },
    payload: { reason: 'checked in the Toss merchant console', ...body },
  });

/** A timeout that holds the call past the client's timeout; `booked`: Toss books the charge first. */
const lostAnswer = (booked: boolean) => ({ kind: 'timeout', booked, holdMs: 2 * GATEWAY_TIMEOUT_MS });

describe('the inquiry pass', () => {
  it('finishes a charge Toss booked whose answer was lost: SUCCEEDED once, the subscription advanced, Toss charged once', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge(lostAnswer(true));
    const before = await getSubscription(app, subscriptionId);

    // Not yet due (the first delay is a minute): nothing asked.
    expect(await runInquiries()).toEqual({ asked: 0, succeeded: 0, failed: 0, alreadyFinished: 0, leftForOperator: 0 });
    await later(2 * MINUTE);
    expect(await runInquiries()).toEqual({ asked: 1, succeeded: 1, failed: 0, alreadyFinished: 0, leftForOperator: 0 });
    // Finished: never asked again.
    await later(3 * 60 * MINUTE);
    expect(await runInquiries()).toMatchObject({ asked: 0 });

    const [after] = await paymentsOf(app, subscriptionId);
    const booked = (await tossLedger()).filter((e) => e.orderId === orderId);
    expect(booked).toEqual([expect.objectContaining({ type: 'CHARGE', amount: 15000 })]);
    expect(after).toMatchObject({ id: payment.id, status: 'SUCCEEDED', transactionId: booked[0]!.paymentKey });
    expect(after!.attempts!.map((a) => [a.orderId, a.outcome])).toEqual([[orderId, 'SUCCEEDED']]);
    expect(await eventsOf('payment.succeeded', payment.id)).toBe(1);
    const sub = await getSubscription(app, subscriptionId);
    expect(sub).toMatchObject({ status: 'ACTIVE', needsAttention: false });
    expect(new Date(sub.nextChargeAt!).getTime()).toBeGreaterThan(new Date(before.nextChargeAt ?? 0).getTime() + 27 * 24 * 60 * MINUTE);
    // The audit trail names the lookup as the actor of the late outcome.
    const entries = await app.db.auditEvent.findMany({ where: { entityType: 'payment', entityId: payment.id } });
    expect(entries.map((e) => [e.actor, e.action])).toEqual([['gateway-inquiry:TOSS', 'payment.resolve_succeeded']]);
  });

  it('fails a charge Toss never saw once the lease has long passed, and the retry is a new attempt with a new orderId', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge(lostAnswer(false));

    // NOT_FOUND_PAYMENT a minute on: too soon to believe (the call's lease plus the margin), asked again later.
    await later(2 * MINUTE);
    expect(await runInquiries()).toEqual({ asked: 1, succeeded: 0, failed: 0, alreadyFinished: 0, leftForOperator: 0 });
    expect((await paymentsOf(app, subscriptionId))[0]).toMatchObject({ status: 'UNKNOWN' });
    const asked = await app.db.paymentAttempt.findFirstOrThrow({ where: { orderId } });
    expect(asked).toMatchObject({ inquiryCount: 1, inquiryLastResult: 'NOT_PAID', inquiryLeaseOwner: null });

    await later(app.config.scheduler.leaseMs + INQUIRY_SETTLE_MARGIN_MS);
    expect(await runInquiries()).toEqual({ asked: 1, succeeded: 0, failed: 1, alreadyFinished: 0, leftForOperator: 0 });
    const [failed] = await paymentsOf(app, subscriptionId);
    expect(failed).toMatchObject({ id: payment.id, status: 'FAILED', failureCode: 'NOT_FOUND_PAYMENT' });
    expect(await eventsOf('payment.failed', payment.id)).toBe(1);
    const sub = await getSubscription(app, subscriptionId);
    expect(sub).toMatchObject({ status: 'PAST_DUE', needsAttention: false });

    // The dunning retries as after any decline: a new attempt, a new orderId, approved once by Toss.
    await setClock(app, sub.nextChargeAt!);
    expect(await runPass(app)).toMatchObject({ claimed: 1, succeeded: 1 });
    const [retried] = await paymentsOf(app, subscriptionId);
    expect(retried).toMatchObject({ id: payment.id, status: 'SUCCEEDED' });
    const orderIds = retried!.attempts!.map((a) => a.orderId);
    expect(retried!.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'SUCCEEDED']);
    expect(orderIds[1]).not.toBe(orderId);
    const ledger = await tossLedger();
    expect(ledger.filter((e) => e.orderId === orderId)).toEqual([]);
    expect(ledger.filter((e) => e.orderId === orderIds[1])).toHaveLength(1);
  });

  it('finishes an IDEMPOTENT_REQUEST_PROCESSING answer (409) by lookups: Toss kept nothing, so FAILED after the margin', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge({ kind: 'decline', code: 'IDEMPOTENT_REQUEST_PROCESSING' });
    const attempt = await app.db.paymentAttempt.findFirstOrThrow({ where: { orderId } });
    expect(attempt.gatewayCode).toBe('IDEMPOTENT_REQUEST_PROCESSING');

    await later(2 * MINUTE);
    expect(await runInquiries()).toMatchObject({ asked: 1, failed: 0 });
    await later(app.config.scheduler.leaseMs + INQUIRY_SETTLE_MARGIN_MS);
    expect(await runInquiries()).toMatchObject({ asked: 1, failed: 1 });
    expect((await paymentsOf(app, subscriptionId))[0]).toMatchObject({ id: payment.id, status: 'FAILED', failureCode: 'NOT_FOUND_PAYMENT' });
    expect(await eventsOf('payment.failed', payment.id)).toBe(1);
    expect((await tossLedger()).filter((e) => e.orderId === orderId)).toEqual([]);
  });

  it('lets an operator’s resolve win while the pass waits on Toss’s answer: one outcome, events once', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge(lostAnswer(true));
    const [booked] = (await tossLedger()).filter((e) => e.orderId === orderId);
    await later(2 * MINUTE);

    // The lookup is held at Toss until released: the pass has claimed the attempt and is out on the call.
    const held = await tossFault({ operation: 'LOOKUP', kind: 'latency', until: 'released' });
    const pass = runInquiries();
    await waitFor('the lookup held by the Toss sandbox', async () => {
      const response = await app.inject({ method: 'GET', url: '/sandbox/toss/_control/held' });
      return (response.json().held as unknown[]).length >= 1;
    });
    const resolved = await resolve(payment.id, { outcome: 'SUCCEEDED', transactionId: booked!.paymentKey });
    expect(resolved.statusCode, resolved.body).toBe(200);
    await app.inject({ method: 'POST', url: '/sandbox/toss/_control/release', payload: { faultId: held } });
    expect(await pass).toEqual({ asked: 1, succeeded: 0, failed: 0, alreadyFinished: 1, leftForOperator: 0 });

    expect((await paymentsOf(app, subscriptionId))[0]).toMatchObject({ status: 'SUCCEEDED', transactionId: booked!.paymentKey });
    expect(await eventsOf('payment.succeeded', payment.id)).toBe(1);
    const entries = await app.db.auditEvent.findMany({ where: { entityType: 'payment', entityId: payment.id } });
    expect(entries.map((e) => e.action)).toEqual(['payment.resolve_succeeded']);
    expect(entries[0]!.actor).not.toBe('gateway-inquiry:TOSS');
    // The lookup is recorded and the attempt is not asked again.
    expect(await app.db.paymentAttempt.findFirstOrThrow({ where: { orderId } })).toMatchObject({ inquiryLeaseOwner: null, inquiryNextAt: null });
    await later(60 * MINUTE);
    expect(await runInquiries()).toMatchObject({ asked: 0 });
  });

  it('records one outcome when an operator and the pass finish the same unknown at once', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge(lostAnswer(true));
    const [booked] = (await tossLedger()).filter((e) => e.orderId === orderId);
    await later(2 * MINUTE);

    const [report, resolved] = await Promise.all([runInquiries(), resolve(payment.id, { outcome: 'SUCCEEDED', transactionId: booked!.paymentKey })]);
    // Exactly one of them wrote the outcome; the other found it written (the pass may also have found nothing due).
    if (resolved.statusCode === 200) expect(report).toMatchObject({ succeeded: 0, failed: 0 });
    else expect([resolved.statusCode, report.asked, report.succeeded]).toEqual([409, 1, 1]);
    expect((await paymentsOf(app, subscriptionId))[0]).toMatchObject({ status: 'SUCCEEDED', transactionId: booked!.paymentKey });
    expect(await eventsOf('payment.succeeded', payment.id)).toBe(1);
    const entries = await app.db.auditEvent.findMany({ where: { entityType: 'payment', entityId: payment.id } });
    expect(entries.map((e) => e.action)).toEqual(['payment.resolve_succeeded']);
  });

  it('asks again on every delay while Toss cannot say, then leaves the unknown for an operator', async () => {
    const { subscriptionId, payment, orderId } = await unknownTossCharge(lostAnswer(true));
    const delays = app.config.toss.inquiryDelaysMs;
    // Every lookup fails inside Toss (a 5xx): nothing is learnt.
    await tossFault({ operation: 'LOOKUP', kind: 'http_500', count: delays.length + 1 });
    const reports: InquiryReport[] = [];
    for (const delay of delays) {
      await later(delay + MINUTE);
      reports.push(await runInquiries());
    }
    expect(reports.map((r) => r.asked)).toEqual(delays.map(() => 1));
    expect(reports.map((r) => r.leftForOperator)).toEqual(delays.map((_, i) => (i === delays.length - 1 ? 1 : 0)));
    await later(30 * 24 * 60 * MINUTE);
    expect(await runInquiries()).toMatchObject({ asked: 0 });
    expect(await app.db.paymentAttempt.findFirstOrThrow({ where: { orderId } })).toMatchObject({
      status: 'UNKNOWN',
      inquiryCount: delays.length,
      inquiryNextAt: null,
      inquiryLastResult: 'UNDECIDED',
    });
    expect((await paymentsOf(app, subscriptionId))[0]).toMatchObject({ id: payment.id, status: 'UNKNOWN' });
    expect((await getSubscription(app, subscriptionId)).needsAttention).toBe(true);
  });

  it('claims and asks nothing while a charging pass runs in its process, and goes on once that pass ends', async () => {
    const { subscriptionId, payment } = await unknownTossCharge(lostAnswer(true));
    await later(2 * MINUTE);
    // The pass as app.ts builds it, its charging engine stood in for by a gate this test opens: the seam it waits on.
    let open!: () => void;
    const chargingPass = new Promise<void>((resolve) => {
      open = resolve;
    });
    let waits = 0;
    const deps = { db: app.db, gateway: app.gateway, gateways: app.gateways, clock: app.clock, config: app.config, log: app.log };
    const idle = () => {
      waits += 1;
      return chargingPass;
    };
    const pass = createInquiryPass({ ...deps, payments: createPaymentActions(deps), yieldTo: { idle } });
    const running = pass.runPass();
    await waitFor('the pass waits for the charging pass', async () => waits > 0);
    const held = await app.db.paymentAttempt.findFirstOrThrow({ where: { paymentId: payment.id, status: 'UNKNOWN' } });
    expect(held).toMatchObject({ inquiryCount: 0, inquiryLeaseOwner: null, inquiryLastAt: null });

    open();
    expect(await running).toEqual({ asked: 1, succeeded: 1, failed: 0, alreadyFinished: 0, leftForOperator: 0 });
    expect((await paymentsOf(app, subscriptionId)).map((p) => [p.id, p.status])).toEqual([[payment.id, 'SUCCEEDED']]);
  });

  it('never looks up a Danal unknown: it waits for an operator as before', async () => {
    const subscriptionId = await subscribe(app, { amount: 9900, userId: `danal-${randomUUID()}` });
    await setClock(app, (await getSubscription(app, subscriptionId)).nextChargeAt!);
    await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'timeout', holdMs: 2 * GATEWAY_TIMEOUT_MS });
    expect(await runPass(app)).toMatchObject({ claimed: 1, unknown: 1 });
    const unknown = (await paymentsOf(app, subscriptionId)).find((p) => p.status === 'UNKNOWN')!;

    for (const step of [2 * MINUTE, 60 * MINUTE, 2 * 24 * 60 * MINUTE]) {
      await later(step);
      expect(await runInquiries()).toMatchObject({ asked: 0 });
    }
    expect((await paymentsOf(app, subscriptionId)).find((p) => p.id === unknown.id)).toMatchObject({ status: 'UNKNOWN' });
    const attempt = await app.db.paymentAttempt.findFirstOrThrow({ where: { paymentId: unknown.id, status: 'UNKNOWN' } });
    expect(attempt).toMatchObject({ inquiryCount: 0, inquiryNextAt: null, inquiryLastResult: null });
    expect((await getSubscription(app, subscriptionId)).needsAttention).toBe(true);
  });
});
