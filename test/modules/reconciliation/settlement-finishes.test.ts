// What a settlement file finishes (docs/architecture.md, invariant 14: a late outcome takes the live path): an UNKNOWN charge the gateway's
// export shows approved with the same amount is resolved SUCCEEDED through the operators' own resolve (events,
// schedule, audit naming the import); a refund of unknown outcome the export shows cancelled is settled; another
// amount resolves nothing; a charge we hold as FAILED that the export shows approved is raised for an operator and
// blocks its subscription until resolved. The files are the sandbox gateway's own exports.
import { beforeEach, describe, expect, it } from 'vitest';
import { createPaymentActions } from '../../../src/modules/payments/payment-actions.service.ts';
import { apiHeaders } from '../../helpers/app.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { adminGet, importCsv, sandboxSettlementFile } from '../../helpers/settlement.ts';
import { waitFor } from '../../helpers/service.ts';
import { GATEWAY_TIMEOUT_MS } from '../../setup/safety-nets.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated', PAYMENT_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS) });
beforeEach(() => setClock(running.app, kst('2027-03-10T09:00:00')));

const admin = (url: string, payload: Record<string, unknown>, key?: string) =>
  running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, ...(key ? { 'idempotency-key': key } : {}) }, payload });
const payment = async (id: string) => (await running.app.inject({ method: 'GET', url: `/admin/payments/${id}`, headers: adminHeaders })).json();
const secondsOf = (iso: string) => new Date(Math.floor(Date.parse(iso) / 1000) * 1000).toISOString();

/** A subscription whose renewal's outcome is unknown although the gateway booked it. */
async function unknownRenewal() {
  const id = await subscribe(running.app, {});
  await setClock(running.app, kst('2027-04-10T09:00:00'));
  await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true });
  expect(await runPass(running.app)).toMatchObject({ unknown: 1 });
  const renewal = (await paymentsOf(running.app, id)).find((p) => p.status === 'UNKNOWN')!;
  const booked = (await sandboxLedger(running.app)).find((e) => e.operation === 'BILLING_CONFIRM')!;
  return { id, renewal, booked };
}

describe('a settlement file finishes', () => {
  it('an UNKNOWN charge it shows approved: SUCCEEDED with its transactionId and time, as resolve would', async () => {
    const { id, renewal, booked } = await unknownRenewal();
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' });

    const response = await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }));
    expect(response.statusCode, response.body).toBe(201);
    const imported = response.json();
    expect(imported).toMatchObject({ rows: 2, summary: { matched: 2, mismatched: 0, unmatched: 0, missing: 0 }, resolved: { payments: 1, refunds: 0 } });

    expect(await payment(renewal.id)).toMatchObject({
      status: 'SUCCEEDED',
      transactionId: booked.transactionId,
      approvedAt: secondsOf(booked.at),
      needsAttention: false,
    });
    const subscription = await getSubscription(running.app, id);
    expect(subscription).toMatchObject({ status: 'ACTIVE', needsAttention: false, nextChargeAt: kst('2027-05-10T09:00:00').toISOString() });

    const audit = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, `/admin/audit?actor=settlement-import:${imported.id}`);
    expect(audit.items).toEqual([expect.objectContaining({ action: 'payment.resolve_succeeded', entityType: 'payment', entityId: renewal.id })]);
    // The feed holds an event back while a transaction that could precede it is in flight anywhere in the cluster (other
    // test files' too): it is there once nothing older runs.
    await waitFor('the resolved payment’s payment.succeeded in the event feed', async () => {
      const events = (await running.app.inject({ method: 'GET', url: '/api/v1/events?type=payment.succeeded&limit=100', headers: apiHeaders })).json();
      return events.items.some((e: { data: { object: { id: string } } }) => e.data.object.id === renewal.id);
    });

    // The same file again changes nothing; the next cycle charges normally.
    expect((await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }))).statusCode).toBe(200);
    await setClock(running.app, kst('2027-05-10T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
  });

  it('nothing when the amount differs: the line is MISMATCHED (AMOUNT), the payment stays UNKNOWN', async () => {
    const { renewal, booked } = await unknownRenewal();
    // The gateway's statement of that charge, for another amount.
    const file = (await sandboxSettlementFile(running.app)).toString('utf8');
    const altered = file.replace(new RegExp(`(${booked.transactionId},,[^,]*,)"9,900"`), '$1"9,000"');
    expect(altered).not.toBe(file);
    const response = await importCsv(running.app, altered);
    expect(response.json()).toMatchObject({ summary: { matched: 1, mismatched: 1 }, resolved: { payments: 0, refunds: 0 } });
    expect(await payment(renewal.id)).toMatchObject({ status: 'UNKNOWN', needsAttention: true });
    const items = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?status=MISMATCHED');
    expect(items.items).toEqual([
      expect.objectContaining({ transactionId: booked.transactionId, reasons: ['AMOUNT'], amount: 9000, ourAmount: 9900, ourStatus: 'UNKNOWN' }),
    ]);
  });

  it('a refund of unknown outcome it shows cancelled with the same amount, as cancel/resolve would', async () => {
    const id = await subscribe(running.app, {});
    const [initial] = await paymentsOf(running.app, id);
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'http_500', booked: true });
    const lost = await admin(`/admin/payments/${initial!.id}/cancel`, { amount: 4000, reason: 'partial' }, 'refund-1');
    expect(lost.statusCode).toBe(502);
    expect(await payment(initial!.id)).toMatchObject({ refundOutcomeUnknown: true, canceledAmount: 0 });

    const response = await importCsv(running.app, await sandboxSettlementFile(running.app, { encoding: 'cp949' }));
    expect(response.json()).toMatchObject({ rows: 2, summary: { matched: 2 }, resolved: { payments: 0, refunds: 1 } });
    expect(await payment(initial!.id)).toMatchObject({ status: 'SUCCEEDED', canceledAmount: 4000, refundOutcomeUnknown: false, needsAttention: false });
    const audit = await adminGet<{ items: Array<{ action: string; actor: string }> }>(running.app, `/admin/audit?entityType=payment&entityId=${initial!.id}`);
    expect(audit.items.map((a) => [a.action, a.actor])).toEqual([
      ['payment.refund_resolve_succeeded', `settlement-import:${response.json().id}`],
      ['payment.refund', expect.stringContaining('admin:')],
    ]);
  });
});

describe('a charge we hold as FAILED that the file shows approved (STATUS)', () => {
  /** An UNKNOWN renewal that an operator wrongly resolved FAILED, then the gateway's export. */
  async function wronglyFailed() {
    const { id, renewal, booked } = await unknownRenewal();
    const failed = await admin(`/admin/payments/${renewal.id}/resolve`, { outcome: 'FAILED', reason: 'looked declined' });
    expect(failed.json()).toMatchObject({ status: 'FAILED' });
    const file = await sandboxSettlementFile(running.app, { encoding: 'cp949' });
    const response = await importCsv(running.app, file);
    expect(response.json()).toMatchObject({ summary: { matched: 1, mismatched: 1 }, resolved: { payments: 0 } });
    return { id, renewal, booked, file };
  }

  it('is raised for an operator and blocks its subscription; resolved SUCCEEDED, the cycle is paid and the line matches', async () => {
    const { id, renewal, booked } = await wronglyFailed();
    expect(await payment(renewal.id)).toMatchObject({ status: 'FAILED', needsAttention: true, attentionReason: 'SETTLEMENT_MISMATCH' });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'PAST_DUE', needsAttention: true, attentionReason: 'SETTLEMENT_MISMATCH' });
    const listed = await adminGet<{ items: Array<{ id: string }> }>(running.app, '/admin/payments?needsAttention=true');
    expect(listed.items.map((p) => p.id)).toEqual([renewal.id]);
    const mismatched = await adminGet<{ items: Array<Record<string, unknown>> }>(running.app, '/admin/reconciliation?status=MISMATCHED');
    expect(mismatched.items).toEqual([
      expect.objectContaining({ transactionId: booked.transactionId, reasons: ['STATUS'], ourStatus: 'FAILED', paymentId: renewal.id }),
    ]);

    // The retry's time comes and goes: nothing is charged while an operator is needed.
    await setClock(running.app, kst('2027-04-12T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0, succeeded: 0 });
    const charge = await running.app.inject({
      method: 'POST',
      url: `/admin/subscriptions/${id}/charge`,
      headers: { ...adminHeaders, 'idempotency-key': 'c1' },
      payload: { reason: 'try' },
    });
    expect(charge.statusCode).toBe(409);
    expect((await sandboxLedger(running.app)).filter((e) => e.operation === 'BILLING_CONFIRM')).toHaveLength(1);

    const resolved = await admin(`/admin/payments/${renewal.id}/resolve`, {
      outcome: 'SUCCEEDED',
      transactionId: booked.transactionId,
      reason: 'the statement shows it',
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'SUCCEEDED', transactionId: booked.transactionId, needsAttention: false });
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'ACTIVE',
      needsAttention: false,
      nextChargeAt: kst('2027-05-10T09:00:00').toISOString(),
    });
    expect((await adminGet<{ counts: Record<string, number> }>(running.app, '/admin/reconciliation/summary')).counts).toMatchObject({ mismatched: 0 });
  });

  it('resolved FAILED: our record stands, and the retry already due runs at the next pass', async () => {
    const { id, renewal, file } = await wronglyFailed();
    await setClock(running.app, kst('2027-04-12T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    const resolved = await admin(`/admin/payments/${renewal.id}/resolve`, { outcome: 'FAILED', reason: 'refunded by phone; our record stands' });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'FAILED', needsAttention: false });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'PAST_DUE', needsAttention: false });
    // Resolved once: a second resolve is a stale state, and the same file again raises nothing.
    expect((await admin(`/admin/payments/${renewal.id}/resolve`, { outcome: 'FAILED', reason: 'again' })).statusCode).toBe(409);
    expect((await importCsv(running.app, file)).statusCode).toBe(200);
    expect(await payment(renewal.id)).toMatchObject({ status: 'FAILED', needsAttention: false });
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: false });
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
  });
});

describe('a line finishes only the attempt it matched', () => {
  // The finisher reads its rows, then applies them one by one: by the time a row is applied, the attempt waiting for an
  // outcome can be another one (an operator resolved, a later attempt went out). resolve takes what the line matched
  // and settles nothing when the waiting attempt differs (the same fence for a refund's amount).
  it('resolve with an expected attempt of another amount or orderId answers 409 and changes nothing', async () => {
    const { renewal, booked } = await unknownRenewal();
    const { db, gateway, clock, config, log } = running.app;
    const actions = createPaymentActions({ db, gateway, clock, config, log });
    const who = { actor: 'settlement-import:test', reason: 'a line of another attempt' };
    const input = { outcome: 'SUCCEEDED' as const, transactionId: booked.transactionId!, approvedAt: booked.at };
    await expect(actions.resolve(renewal.id, { ...input, expect: { amount: renewal.amount + 1 } }, who)).rejects.toMatchObject({ code: 'STATE_CONFLICT' });
    await expect(actions.resolve(renewal.id, { ...input, expect: { amount: renewal.amount, orderId: 'another-order' } }, who)).rejects.toMatchObject({
      code: 'STATE_CONFLICT',
    });
    expect(await payment(renewal.id)).toMatchObject({ status: 'UNKNOWN', needsAttention: true });
    await actions.resolve(renewal.id, { ...input, expect: { amount: renewal.amount, orderId: renewal.orderId } }, who);
    expect(await payment(renewal.id)).toMatchObject({ status: 'SUCCEEDED', transactionId: booked.transactionId });
  });
});
