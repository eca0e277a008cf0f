// Every admin action route: success, tokens (wrong, of the other kind), unknown id, Idempotency-Key replay and
// conflict, refused rules with their codes, mass assignment, and the audit trail written with each change.
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { waitFor } from '../../helpers/service.ts';
import { subscribeThroughToss } from '../../helpers/gateways.ts';

const kst = (local: string) => new Date(`${local}+09:00`);

const running = useRunningApp({ CLOCK: 'simulated', ADMIN_TOKENS: 'alice:test_admin_token_0123456789abcdef' });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

const admin = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: Record<string, unknown>, key?: string) =>
  running.app.inject({ method, url, headers: { ...adminHeaders, ...(key ? { 'idempotency-key': key } : {}) }, ...(payload === undefined ? {} : { payload }) });

const auditOf = (entityId: string) => running.app.db.auditEvent.findMany({ where: { entityId }, orderBy: { createdAt: 'asc' } });

interface RouteCase {
  name: string;
  method: 'POST' | 'PATCH';
  path: (id: string) => string;
  body: Record<string, unknown>;
  entity: 'subscription' | 'payment';
}

const SUBSCRIPTION_ROUTES: RouteCase[] = [
  { name: 'pause', method: 'POST', path: (id) => `/admin/subscriptions/${id}/pause`, body: { reason: 'customer asked' }, entity: 'subscription' },
  { name: 'cancel', method: 'POST', path: (id) => `/admin/subscriptions/${id}/cancel`, body: { reason: 'fraud' }, entity: 'subscription' },
  { name: 'patch', method: 'PATCH', path: (id) => `/admin/subscriptions/${id}`, body: { reason: 'price change', amount: 12_000 }, entity: 'subscription' },
];

describe('tokens and unknown ids, on every admin route', () => {
  const all = [
    ['GET', '/admin/subscriptions'],
    ['GET', `/admin/subscriptions/${randomUUID()}`],
    ['GET', '/admin/payments'],
    ['GET', `/admin/payments/${randomUUID()}`],
    ['POST', `/admin/subscriptions/${randomUUID()}/charge`],
    ['POST', `/admin/subscriptions/${randomUUID()}/pause`],
    ['POST', `/admin/subscriptions/${randomUUID()}/resume`],
    ['POST', `/admin/subscriptions/${randomUUID()}/cancel`],
    ['PATCH', `/admin/subscriptions/${randomUUID()}`],
    ['POST', `/admin/payments/${randomUUID()}/resolve`],
    ['POST', `/admin/payments/${randomUUID()}/cancel`],
    ['POST', '/admin/scheduler/run'],
    ['GET', '/admin/clock'],
  ] as const;

  it.each(all)('%s %s: 401 with a wrong token and with an API key', async (method, url) => {
    for (const headers of [{ authorization: 'Bearer wrong_wrong_wrong_wrong_wrong' }, apiHeaders, {}]) {
      const response = await running.app.inject({ method, url, headers, payload: method === 'GET' ? undefined : { reason: 'x' } });
      expect(response.statusCode).toBe(401);
      expect(response.json().code).toBe('UNAUTHORIZED');
    }
  });

  it.each([
    ['POST', 'charge', { reason: 'r' }],
    ['POST', 'pause', { reason: 'r' }],
    ['POST', 'resume', { reason: 'r' }],
    ['POST', 'cancel', { reason: 'r' }],
  ] as const)('%s /admin/subscriptions/:id/%s on an unknown id is 404', async (method, action, body) => {
    const response = await admin(method, `/admin/subscriptions/${randomUUID()}/${action}`, body, randomUUID());
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('NOT_FOUND');
  });

  it('PATCH, resolve and refund on unknown ids are 404', async () => {
    expect((await admin('PATCH', `/admin/subscriptions/${randomUUID()}`, { reason: 'r', amount: 1000 })).statusCode).toBe(404);
    expect((await admin('POST', `/admin/payments/${randomUUID()}/resolve`, { reason: 'r', outcome: 'FAILED' })).statusCode).toBe(404);
    expect((await admin('POST', `/admin/payments/${randomUUID()}/cancel`, { reason: 'r' }, randomUUID())).statusCode).toBe(404);
  });

  it('every action needs a reason', async () => {
    const id = await subscribe(running.app, {});
    const response = await admin('POST', `/admin/subscriptions/${id}/pause`, {});
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('VALIDATION_ERROR');
  });
});

describe('Idempotency-Key', () => {
  it.each(SUBSCRIPTION_ROUTES)('$name: same key and body replays the stored answer without acting again; another body is 409', async (route) => {
    const id = await subscribe(running.app, {});
    const first = await admin(route.method, route.path(id), route.body, 'key-1');
    expect(first.statusCode, first.body).toBe(200);
    const replay = await admin(route.method, route.path(id), route.body, 'key-1');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(await auditOf(id)).toHaveLength(1);
    const conflicting = await admin(route.method, route.path(id), { ...route.body, reason: 'something else' }, 'key-1');
    expect(conflicting.statusCode).toBe(409);
    expect(conflicting.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    // The same key on another path is another request.
    const other = await subscribe(running.app, { userId: 'user-2' });
    expect((await admin(route.method, route.path(other), route.body, 'key-1')).statusCode).toBe(200);
  });

  it('charge, refund, resume and resolve: replays answer the stored outcome (errors too), other bodies are 409', async () => {
    const id = await subscribe(running.app, { amount: 10_000 });
    // A refused charge is an outcome like any other: replayed as stored.
    const refused = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'r' }, 'k-charge');
    expect(refused.statusCode).toBe(409);
    const refusedAgain = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'r' }, 'k-charge');
    expect(refusedAgain.statusCode).toBe(409);
    expect(refusedAgain.headers['idempotent-replayed']).toBe('true');
    expect((await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'other' }, 'k-charge')).json().code).toBe('IDEMPOTENCY_KEY_REUSED');

    const [initial] = await paymentsOf(running.app, id);
    expect((await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 1_000, reason: 'r' }, 'k-refund')).statusCode).toBe(200);
    expect((await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 1_000, reason: 'r' }, 'k-refund')).json().canceledAmount).toBe(1_000);
    expect((await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 2_000, reason: 'r' }, 'k-refund')).json().code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL')).toHaveLength(1);

    await admin('POST', `/admin/subscriptions/${id}/pause`, { reason: 'r' });
    expect((await admin('POST', `/admin/subscriptions/${id}/resume`, { reason: 'r' }, 'k-resume')).statusCode).toBe(200);
    const resumedAgain = await admin('POST', `/admin/subscriptions/${id}/resume`, { reason: 'r' }, 'k-resume');
    expect(resumedAgain.statusCode).toBe(200); // without the key this would be a 409: it is not acted on again
    expect(resumedAgain.headers['idempotent-replayed']).toBe('true');

    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    await runPass(running.app);
    const unknown = (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN')!;
    expect((await admin('POST', `/admin/payments/${unknown.id}/resolve`, { outcome: 'FAILED', reason: 'r' }, 'k-resolve')).statusCode).toBe(200);
    expect((await admin('POST', `/admin/payments/${unknown.id}/resolve`, { outcome: 'FAILED', reason: 'r' }, 'k-resolve')).headers['idempotent-replayed']).toBe(
      'true',
    );
    expect(
      (await admin('POST', `/admin/payments/${unknown.id}/resolve`, { outcome: 'SUCCEEDED', transactionId: 'T1', reason: 'r' }, 'k-resolve')).json().code,
    ).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await auditOf(unknown.id)).map((a) => a.action)).toEqual(['payment.resolve_failed']);
  });

  it('is required on the routes that move money', async () => {
    const id = await subscribe(running.app, {});
    const charge = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'r' });
    expect(charge.statusCode).toBe(400);
    expect(charge.json().code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const [payment] = await paymentsOf(running.app, id);
    const refund = await admin('POST', `/admin/payments/${payment!.id}/cancel`, { reason: 'r' });
    expect(refund.json().code).toBe('IDEMPOTENCY_KEY_REQUIRED');
  });

  it('while the first request is still running, the same key is 409 IDEMPOTENCY_IN_PROGRESS and nothing is charged twice', async () => {
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    // The first request's charge is held at the sandbox until the second request has been answered.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'latency', until: 'released' });
    const first = admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'now' }, 'slow');
    // The first request holds the key (its record is IN_PROGRESS) while its charge is held by the gateway.
    await waitFor(
      'the first request to hold the key',
      async () => (await running.app.db.idempotencyRecord.count({ where: { key: 'slow', status: 'IN_PROGRESS' } })) === 1,
    );
    const second = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'now' }, 'slow');
    expect(second.statusCode).toBe(409);
    expect(second.json().code).toBe('IDEMPOTENCY_IN_PROGRESS');
    await sandboxHeld(running.app);
    await sandboxRelease(running.app);
    expect((await first).statusCode).toBe(201);
    expect((await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'now' }, 'slow')).statusCode).toBe(201);
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(1);
  });

  it('keeps records for at least 24 hours', async () => {
    const id = await subscribe(running.app, {});
    await admin('POST', `/admin/subscriptions/${id}/pause`, { reason: 'r' }, 'kept');
    const record = await running.app.db.idempotencyRecord.findFirstOrThrow({ where: { key: 'kept' } });
    expect(record.expiresAt.getTime() - record.createdAt.getTime()).toBeGreaterThanOrEqual(24 * 3600_000 - 60_000);
  });
});

describe('pause and resume', () => {
  it('pause stops charging; resume recomputes the next charge from the anchor without back-charging', async () => {
    const id = await subscribe(running.app, {}); // anchor Mar 10 09:00 KST
    const paused = await admin('POST', `/admin/subscriptions/${id}/pause`, { reason: 'holiday' });
    expect(paused.json()).toMatchObject({ status: 'PAUSED', nextChargeAt: null });
    await setClock(running.app, kst('2027-05-20T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    const resumed = await admin('POST', `/admin/subscriptions/${id}/resume`, { reason: 'back' });
    expect(resumed.json()).toMatchObject({ status: 'ACTIVE', nextChargeAt: kst('2027-06-10T09:00:00').toISOString() });
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(0);
    const audit = await auditOf(id);
    expect(audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
      ['subscription.pause', 'admin:alice', 'holiday'],
      ['subscription.resume', 'admin:alice', 'back'],
    ]);
    expect(audit[0]!.before).toMatchObject({ status: 'ACTIVE' });
    expect(audit[0]!.after).toMatchObject({ status: 'PAUSED' });
  });

  it('refuses moves the state table does not allow', async () => {
    const id = await subscribe(running.app, {});
    const resume = await admin('POST', `/admin/subscriptions/${id}/resume`, { reason: 'r' });
    expect(resume.statusCode).toBe(409);
    expect(resume.json().code).toBe('STATE_CONFLICT');
    expect(await auditOf(id)).toHaveLength(0);
  });
});

describe('cancel', () => {
  it('now: CANCELED and the key revoked; at period end: flagged and still ACTIVE', async () => {
    const now = await subscribe(running.app, {});
    expect((await admin('POST', `/admin/subscriptions/${now}/cancel`, { reason: 'chargeback' })).json()).toMatchObject({
      status: 'CANCELED',
      billingKey: { status: 'REVOKED' },
    });
    const later = await subscribe(running.app, { userId: 'u2' });
    expect((await admin('POST', `/admin/subscriptions/${later}/cancel`, { reason: 'asked', atPeriodEnd: true })).json()).toMatchObject({
      status: 'ACTIVE',
      cancelAtPeriodEnd: true,
    });
    expect((await admin('POST', `/admin/subscriptions/${now}/cancel`, { reason: 'again' })).statusCode).toBe(409);
  });
});

describe('PATCH /admin/subscriptions/:id', () => {
  it('changes the CARD orderName and a lower amount from the next cycle; a higher amount waits for the customer’s consent (docs/architecture.md, invariant 13)', async () => {
    const id = await subscribe(running.app, {});
    const lower = await admin('PATCH', `/admin/subscriptions/${id}`, { reason: 'discount', amount: 8_000, orderName: 'Plan v2' });
    expect(lower.json()).toMatchObject({ amount: 8_000, orderName: 'Plan v2' });
    expect(lower.json()).not.toHaveProperty('pendingAmount');
    const higher = await admin('PATCH', `/admin/subscriptions/${id}`, { reason: 'new price', amount: 11_000 });
    expect(higher.json()).toMatchObject({ amount: 8_000, pendingAmount: 11_000, pendingAmountReason: 'CONSENT_REQUIRED' });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM').map((e) => e.amount)).toEqual([8_000]);
  });

  it('refuses a MOBILE amount change with MOBILE_AMOUNT_MISMATCH, and a too-long orderName', async () => {
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    const refused = await admin('PATCH', `/admin/subscriptions/${id}`, { reason: 'r', amount: 6_000 });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('MOBILE_AMOUNT_MISMATCH');
    const long = await admin('PATCH', `/admin/subscriptions/${id}`, { reason: 'r', orderName: '가'.repeat(34) });
    expect(long.statusCode).toBe(400);
    expect((await getSubscription(running.app, id)).amount).toBe(5_500);
  });

  it('mass assignment: fields other than amount and orderName are refused and nothing changes', async () => {
    const id = await subscribe(running.app, {});
    const before = await getSubscription(running.app, id);
    for (const extra of [
      { status: 'CANCELED' },
      { needsAttention: true },
      { nextChargeAt: '2020-01-01T00:00:00Z' },
      { cycle: 9 },
      { billingKeyId: randomUUID() },
    ]) {
      const response = await admin('PATCH', `/admin/subscriptions/${id}`, { reason: 'r', amount: 1_000, ...extra });
      expect(response.statusCode, JSON.stringify(extra)).toBe(400);
      const refusedPause = await admin('POST', `/admin/subscriptions/${id}/pause`, { reason: 'r', ...extra });
      expect(refusedPause.statusCode).toBe(400);
    }
    const after = await getSubscription(running.app, id);
    expect(after).toEqual(before);
    expect(await auditOf(id)).toHaveLength(0);
  });
});

describe('POST /admin/subscriptions/:id/charge', () => {
  it('dryRun says which rules pass and fail, and charges nothing', async () => {
    const id = await subscribe(running.app, {});
    // Dry runs take an Idempotency-Key like the charge itself (docs/api.md "Idempotency").
    expect((await admin('POST', `/admin/subscriptions/${id}/charge?dryRun=true`, { reason: 'check' })).json().code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const dry = await admin('POST', `/admin/subscriptions/${id}/charge?dryRun=true`, { reason: 'check' }, 'dry-1');
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({ dryRun: true, allowed: false, refusal: { code: 'NOT_DUE' } });
    expect(dry.json().rules).toContainEqual(expect.objectContaining({ rule: 'due or past due', passed: false, code: 'NOT_DUE' }));
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    const due = (await admin('POST', `/admin/subscriptions/${id}/charge?dryRun=true`, { reason: 'check' }, 'dry-2')).json();
    expect(due).toMatchObject({ allowed: true, cycle: 1, amount: 9900 });
    expect(due.rules.every((r: { passed: boolean }) => r.passed)).toBe(true);
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(0);
  });

  it('409 NOT_DUE before the due date; 201 with the payment when due; replay does not charge again', async () => {
    const id = await subscribe(running.app, {});
    const early = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'early' }, 'c-early');
    expect(early.statusCode).toBe(409);
    expect(early.json().code).toBe('NOT_DUE');
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    const charged = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'customer asked to pay now' }, 'c-1');
    expect(charged.statusCode, charged.body).toBe(201);
    expect(charged.json()).toMatchObject({ kind: 'MANUAL', status: 'SUCCEEDED', cycle: 1, amount: 9900 });
    const replay = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'customer asked to pay now' }, 'c-1');
    expect(replay.statusCode).toBe(201);
    expect(replay.json().id).toBe(charged.json().id);
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(1);
    // Charged for this cycle: the next one is not due.
    const again = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'again' }, 'c-2');
    expect(again.json().code).toBe('NOT_DUE');
    expect((await auditOf(id)).map((a) => a.action)).toEqual(['subscription.charge']);
  });

  it('402 GATEWAY_DECLINED with the paymentId; a PAST_DUE subscription may be charged before its retry time', async () => {
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'CARD_DECLINED' });
    const declined = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'try' }, 'd-1');
    expect(declined.statusCode).toBe(402);
    expect(declined.json()).toMatchObject({ code: 'GATEWAY_DECLINED', details: { gatewayCode: 'CARD_DECLINED' } });
    expect(declined.json().details.paymentId).toBeTruthy();
    expect((await getSubscription(running.app, id)).status).toBe('PAST_DUE');
    const retried = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'customer fixed the card' }, 'd-2');
    expect(retried.statusCode).toBe(201);
    expect(retried.json().id).toBe(declined.json().details.paymentId);
    expect((await getSubscription(running.app, id)).status).toBe('ACTIVE');
  });

  it('422 MOBILE_WINDOW_CLOSED outside the window, nothing sent', async () => {
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    await setClock(running.app, kst('2027-04-17T09:00:00'));
    const refused = await admin('POST', `/admin/subscriptions/${id}/charge`, { reason: 'late' }, 'm-1');
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('MOBILE_WINDOW_CLOSED');
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(0);
  });
});

describe('resolving an UNKNOWN payment', () => {
  it('MOBILE: resolved SUCCEEDED with the gateway’s transactionId, which the next cycle carries as lastTransactionId', async () => {
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    // Booked, then the connection is dropped without an answer: UNKNOWN.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'timeout', holdMs: 100 });
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const unknownPayment = (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN');
    expect(unknownPayment).toBeDefined();
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: true });
    // The ledger shows what really happened: the operator reads the transactionId there (or from the gateway).
    const booked = (await sandboxLedger(running.app)).find((e) => e.orderId === unknownPayment!.orderId)!;
    const resolved = await admin(
      'POST',
      `/admin/payments/${unknownPayment!.id}/resolve`,
      { outcome: 'SUCCEEDED', transactionId: booked.transactionId, reason: 'confirmed with the gateway' },
      'r-1',
    );
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'SUCCEEDED', transactionId: booked.transactionId });
    const sub = await getSubscription(running.app, id);
    expect(sub).toMatchObject({ needsAttention: false, status: 'ACTIVE' });
    // Next cycle: the sandbox accepts only the resolved transaction as the chain head.
    await setClock(running.app, new Date(sub.nextChargeAt!));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const replayed = await admin('POST', `/admin/payments/${unknownPayment!.id}/resolve`, { outcome: 'FAILED', reason: 'oops' });
    expect(replayed.statusCode).toBe(409);
    expect((await auditOf(unknownPayment!.id)).map((a) => a.action)).toEqual(['payment.resolve_succeeded']);
  });

  it('CARD: resolved FAILED is handled like a decline (retry scheduled), and the retry charges normally', async () => {
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500' });
    expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
    const payment = (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN')!;
    const missing = await admin('POST', `/admin/payments/${payment.id}/resolve`, { outcome: 'SUCCEEDED', reason: 'r' });
    expect(missing.statusCode).toBe(400);
    const resolved = await admin('POST', `/admin/payments/${payment.id}/resolve`, { outcome: 'FAILED', reason: 'gateway says nothing was charged' });
    expect(resolved.json()).toMatchObject({ status: 'FAILED' });
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'PAST_DUE',
      needsAttention: false,
      nextChargeAt: kst('2027-04-11T09:00:00').toISOString(),
    });
    await setClock(running.app, kst('2027-04-11T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await paymentsOf(running.app, id)).at(-1)!.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'SUCCEEDED']);
  });

  it('mass assignment on resolve is refused', async () => {
    const response = await admin('POST', `/admin/payments/${randomUUID()}/resolve`, { outcome: 'FAILED', reason: 'r', amount: 1 });
    expect(response.statusCode).toBe(400);
  });
});

describe('refunds', () => {
  it('CARD: partial refunds up to what remains, then full; over the remainder is 422', async () => {
    const id = await subscribe(running.app, { amount: 10_000 });
    const [initial] = await paymentsOf(running.app, id);
    const part = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 3_000, reason: 'partial' }, 'p-1');
    expect(part.statusCode, part.body).toBe(200);
    expect(part.json()).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 3_000 });
    const replay = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 3_000, reason: 'partial' }, 'p-1');
    expect(replay.json()).toMatchObject({ canceledAmount: 3_000 });
    const over = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 8_000, reason: 'too much' }, 'p-2');
    expect(over.statusCode).toBe(422);
    expect(over.json().code).toBe('AMOUNT_EXCEEDS_REMAINING');
    const rest = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { reason: 'rest' }, 'p-3');
    expect(rest.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 10_000 });
    const cancels = (await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL');
    expect(cancels.map((e) => e.amount)).toEqual([3_000, 7_000]);
  });

  it('MOBILE: full only, and only within the payment’s month in Korea time; refused before calling', async () => {
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    const [initial] = await paymentsOf(running.app, id);
    const partial = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { amount: 1_000, reason: 'r' }, 'm-1');
    expect(partial.statusCode).toBe(422);
    expect(partial.json().code).toBe('MOBILE_PARTIAL_CANCEL');
    await setClock(running.app, kst('2027-04-01T00:00:00'));
    const late = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { reason: 'r' }, 'm-2');
    expect(late.json().code).toBe('MOBILE_CANCEL_MONTH_CLOSED');
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL')).toHaveLength(0);
    await setClock(running.app, kst('2027-03-31T23:59:00'));
    const full = await admin('POST', `/admin/payments/${initial!.id}/cancel`, { reason: 'r' }, 'm-3');
    expect(full.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 5_500 });
  });
});

describe('audit of passes and of the clock', () => {
  it('a scheduler run and a clock change are recorded with who acted', async () => {
    await running.app.db.auditEvent.deleteMany({}); // beforeEach set the clock
    await admin('POST', '/admin/scheduler/run', { reason: 'catching up after deploy' });
    const response = await running.app.inject({
      method: 'PUT',
      url: '/admin/clock',
      headers: adminHeaders,
      payload: { now: '2027-05-01T00:00:00Z', reason: 'demo' },
    });
    expect(response.statusCode).toBe(200);
    const events = await running.app.db.auditEvent.findMany({ where: { entityType: { in: ['scheduler', 'clock'] } }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => [e.action, e.actor, e.reason])).toEqual([
      ['scheduler.run', 'admin:alice', 'catching up after deploy'],
      ['clock.set', 'admin:alice', 'demo'],
    ]);
    expect(events[1]!.after).toMatchObject({ now: '2027-05-01T00:00:00.000Z' });
  });
});

describe('lists', () => {
  it('filter subscriptions by needsAttention, method, status and date range; payments by status and kind', async () => {
    const card = await subscribe(running.app, {});
    await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', userId: 'm' });
    await running.app.db.subscription.update({ where: { id: card }, data: { needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' } });
    const attention = (await admin('GET', '/admin/subscriptions?needsAttention=true')).json();
    expect(attention.items.map((s: { id: string }) => s.id)).toEqual([card]);
    expect((await admin('GET', '/admin/subscriptions?method=MOBILE')).json().items).toHaveLength(1);
    expect((await admin('GET', '/admin/subscriptions?createdFrom=2099-01-01T00:00:00Z')).json().items).toHaveLength(0);
    expect((await admin('GET', '/admin/payments?status=SUCCEEDED&kind=INITIAL')).json().items).toHaveLength(2);
    expect((await admin('GET', '/admin/payments?userId=m')).json().items).toHaveLength(1);
    expect((await admin('GET', '/admin/payments?status=WHATEVER')).statusCode).toBe(400);
  });

  it('filter subscriptions (by their key’s gateway) and payments by gateway, with the other filters; an unknown gateway is 400', async () => {
    const danal = await subscribe(running.app, {});
    const { subscriptionId: toss } = await subscribeThroughToss(running.app, { userId: 't' });
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const ids = async (url: string) => (await admin('GET', url)).json().items.map((item: { id: string }) => item.id);
    expect(await ids('/admin/subscriptions?gateway=TOSS')).toEqual([toss]);
    expect(await ids('/admin/subscriptions?gateway=DANAL&method=CARD')).toEqual([danal]);
    expect(await ids('/admin/subscriptions?gateway=TOSS&method=MOBILE')).toEqual([]);
    const [tossPayment] = await paymentsOf(running.app, toss);
    const [danalPayment] = await paymentsOf(running.app, danal);
    expect(await ids('/admin/payments?gateway=TOSS')).toEqual([tossPayment!.id]);
    expect(await ids('/admin/payments?gateway=DANAL&status=SUCCEEDED')).toEqual([danalPayment!.id]);
    expect(await ids('/admin/payments?gateway=TOSS&kind=INITIAL')).toEqual([]);
    for (const url of ['/admin/payments?gateway=KCP', '/admin/subscriptions?gateway=toss']) {
      const refused = await admin('GET', url);
      expect([refused.statusCode, refused.json().code], url).toEqual([400, 'VALIDATION_ERROR']);
    }
  });
});
