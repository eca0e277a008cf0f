// Whole billing months through the public routes and the simulated clock (docs/architecture.md "House style"): the mounted sandbox
// shares the clock and enforces the interface's rules (MOBILE chain, amount, ±5 days), and its ledger is the
// record of money moved.
import { describe, expect, it } from 'vitest';
import { cycleDueAt } from '../../src/lib/calendar.ts';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../helpers/checkout.ts';
import { getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';

const SEOUL = 'Asia/Seoul';
const kst = (local: string) => new Date(`${local}+09:00`);
const DAY = 86_400_000;

const running = useRunningApp({ CLOCK: 'simulated', RETRY_DELAYS: '1d,3d,5d' });

const charges = async () => (await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE' && e.operation === 'BILLING_CONFIRM');

describe('CARD: 13 monthly cycles from a Jan 31 anchor in a leap year', () => {
  it('charges on each month’s last day when shorter, back on the 31st after, without drift, exactly once per cycle', async () => {
    const anchor = kst('2028-01-31T10:00:00');
    await setClock(running.app, anchor);
    const id = await subscribe(running.app, { amount: 12_000 });
    const expected = [
      '2028-02-29',
      '2028-03-31',
      '2028-04-30',
      '2028-05-31',
      '2028-06-30',
      '2028-07-31',
      '2028-08-31',
      '2028-09-30',
      '2028-10-31',
      '2028-11-30',
      '2028-12-31',
      '2029-01-31',
      '2029-02-28',
    ];
    for (const [index, date] of expected.entries()) {
      const due = kst(`${date}T10:00:00`);
      expect(cycleDueAt(anchor, { unit: 'month', count: 1 }, index + 1, SEOUL)).toEqual(due);
      expect((await getSubscription(running.app, id)).nextChargeAt).toBe(due.toISOString());
      await setClock(running.app, new Date(due.getTime() - 1000));
      expect(await runPass(running.app)).toMatchObject({ claimed: 0, succeeded: 0 });
      await setClock(running.app, due);
      expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 1, declined: 0, unknown: 0, skipped: 0 });
      // A second pass at the same instant finds nothing to do.
      expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    }
    const ledger = await charges();
    expect(ledger).toHaveLength(13);
    expect(ledger.map((e) => e.at.slice(0, 10))).toEqual(expected.map((d) => new Date(`${d}T10:00:00+09:00`).toISOString().slice(0, 10)));
    expect(new Set(ledger.map((e) => e.orderId)).size).toBe(13);
    expect(ledger.every((e) => e.amount === 12_000)).toBe(true);

    const payments = await paymentsOf(running.app, id);
    expect(payments.map((p) => [p.kind, p.cycle, p.status])).toEqual([
      ['INITIAL', 0, 'SUCCEEDED'],
      ...expected.map((_, i) => ['RECURRING', i + 1, 'SUCCEEDED']),
    ]);
    // Our record agrees with the ledger, charge by charge.
    expect(payments.slice(1).map((p) => p.transactionId)).toEqual(ledger.map((e) => e.transactionId));
    const sub = await getSubscription(running.app, id);
    expect(sub).toMatchObject({
      status: 'ACTIVE',
      currentPeriodStart: kst('2029-02-28T10:00:00').toISOString(),
      currentPeriodEnd: kst('2029-03-31T10:00:00').toISOString(),
      nextChargeAt: kst('2029-03-31T10:00:00').toISOString(),
    });
  });
});

describe('MOBILE: the chain, the same amount and the ±5-day window, enforced by the sandbox', () => {
  it('charges 12 times in a row, each anchored on the last success, each carrying the previous transactionId', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', userPhoneNumber: '01012345678', orderName: 'Phone plan' });
    // Some charges land days after their due date (downtime, slow ticks): the next one is anchored on that day.
    const lateness = [0, 2, 0, 5, 1, 0, 3, 0, 0, 4, 0, 1];
    for (const days of lateness) {
      const before = await getSubscription(running.app, id);
      const due = new Date(before.nextChargeAt!);
      await setClock(running.app, new Date(due.getTime() + days * DAY));
      expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 1, declined: 0, unknown: 0, skipped: 0 });
      const after = await getSubscription(running.app, id);
      expect(after.status).toBe('ACTIVE');
      expect(after.currentPeriodStart).toBe(new Date(due.getTime() + days * DAY).toISOString().replace(/\.\d{3}Z$/, '.000Z'));
    }
    const payments = await paymentsOf(running.app, id);
    expect(payments).toHaveLength(13);
    expect(payments.every((p) => p.status === 'SUCCEEDED' && p.amount === 5_500)).toBe(true);
    const ledger = (await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE');
    expect(ledger).toHaveLength(13);
    expect(payments.map((p) => p.transactionId)).toEqual(ledger.map((e) => e.transactionId));
  });

  it('does not call the gateway once the window has closed: PAST_DUE, needs attention, says why', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', orderName: 'Phone plan' });
    await setClock(running.app, kst('2027-04-16T09:00:00')); // due Apr 10; Apr 16 is day +6
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, skipped: 1, succeeded: 0 });
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'PAST_DUE',
      needsAttention: true,
      attentionReason: 'MOBILE_WINDOW_CLOSED',
      nextChargeAt: null,
    });
    expect(await charges()).toHaveLength(0);
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
  });

  it('retries a declined MOBILE charge only inside the window', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01', orderName: 'Phone plan' });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 3, code: 'INSUFFICIENT_BALANCE' });
    const due = kst('2027-04-10T09:00:00');
    await setClock(running.app, due);
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    expect((await getSubscription(running.app, id)).nextChargeAt).toBe(new Date(due.getTime() + DAY).toISOString());
    await setClock(running.app, new Date(due.getTime() + DAY));
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    await setClock(running.app, new Date(due.getTime() + 3 * DAY));
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    await setClock(running.app, new Date(due.getTime() + 5 * DAY)); // day +5: still inside
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'ACTIVE',
      needsAttention: false,
      nextChargeAt: kst('2027-05-15T09:00:00').toISOString(),
    });
  });
});

describe('CARD declines', () => {
  it('are retried after 1, 3 and 5 days with a new orderId each, then the subscription is CANCELED (RETRIES_EXHAUSTED)', async () => {
    await setClock(running.app, kst('2027-06-01T12:00:00'));
    const id = await subscribe(running.app, {});
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 4, code: 'CARD_EXPIRED', message: 'expired card' });
    const due = kst('2027-07-01T12:00:00');
    const schedule = [0, 1, 3, 5];
    for (const [i, days] of schedule.entries()) {
      await setClock(running.app, new Date(due.getTime() + days * DAY - 1000));
      expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
      await setClock(running.app, new Date(due.getTime() + days * DAY));
      expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 0, declined: 1, unknown: 0, skipped: 0 });
      const sub = await getSubscription(running.app, id);
      if (i < 3) {
        expect(sub).toMatchObject({ status: 'PAST_DUE', nextChargeAt: new Date(due.getTime() + schedule[i + 1]! * DAY).toISOString() });
      } else {
        expect(sub).toMatchObject({ status: 'CANCELED', nextChargeAt: null, billingKey: { status: 'REVOKED' } });
      }
    }
    const [, payment] = await paymentsOf(running.app, id);
    expect(payment).toMatchObject({ kind: 'RECURRING', cycle: 1, status: 'FAILED', failureCode: 'CARD_EXPIRED' });
    expect(payment!.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'DECLINED', 'DECLINED', 'DECLINED']);
    expect(new Set(payment!.attempts!.map((a) => a.orderId)).size).toBe(4);
    expect(await charges()).toHaveLength(0);
    const sub = await running.app.db.subscription.findUniqueOrThrow({ where: { id } });
    expect(sub.cancelReason).toBe('RETRIES_EXHAUSTED');
    await setClock(running.app, kst('2027-09-01T12:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
  });

  it('a retry that succeeds makes the subscription ACTIVE again, and the next cycle stays on the anchor', async () => {
    await setClock(running.app, kst('2027-06-01T12:00:00'));
    const id = await subscribe(running.app, {});
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 1 });
    await setClock(running.app, kst('2027-07-01T12:00:00'));
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    await setClock(running.app, kst('2027-07-02T12:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'ACTIVE', nextChargeAt: kst('2027-08-01T12:00:00').toISOString() });
    const [, payment] = await paymentsOf(running.app, id);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', cycle: 1 });
    expect(payment!.attempts!.map((a) => a.outcome)).toEqual(['DECLINED', 'SUCCEEDED']);
    expect(payment!.orderId).toBe(payment!.attempts![1]!.orderId);
  });
});

describe('cancel at period end', () => {
  it('charges nothing at the boundary and cancels then', async () => {
    await setClock(running.app, kst('2027-01-15T08:00:00'));
    const id = await subscribe(running.app, {});
    const cancel = await running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/cancel`, headers: apiHeaders, payload: { atPeriodEnd: true } });
    expect(cancel.json()).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });
    await setClock(running.app, kst('2027-02-15T07:59:59'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect((await getSubscription(running.app, id)).status).toBe('ACTIVE');
    await setClock(running.app, kst('2027-02-15T08:00:00'));
    expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 0, declined: 0, unknown: 0, skipped: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', nextChargeAt: null, billingKey: { status: 'REVOKED' } });
    expect(await charges()).toHaveLength(0);
  });
});

describe('downtime', () => {
  it('after 3 missed months charges once, for the period containing now, and resumes on the anchor', async () => {
    await setClock(running.app, kst('2027-01-15T08:00:00'));
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-05-20T08:00:00')); // Feb 15, Mar 15, Apr 15 and May 15 were all due
    expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 1, declined: 0, unknown: 0, skipped: 0 });
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect(await charges()).toHaveLength(1);
    const sub = await getSubscription(running.app, id);
    expect(sub).toMatchObject({
      currentPeriodStart: kst('2027-05-15T08:00:00').toISOString(),
      nextChargeAt: kst('2027-06-15T08:00:00').toISOString(),
    });
    const payments = await paymentsOf(running.app, id);
    expect(payments.map((p) => [p.kind, p.cycle])).toEqual([
      ['INITIAL', 0],
      ['RECURRING', 4],
    ]);
  });
});

describe('an issueKeyOnly CARD registration', () => {
  it('is charged at the next pass, then on its anchor', async () => {
    await setClock(running.app, kst('2027-03-31T20:00:00'));
    const id = await subscribe(running.app, { issueKeyOnly: true });
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ nextChargeAt: kst('2027-04-30T20:00:00').toISOString() });
    expect((await charges()).map((e) => e.amount)).toEqual([9900]);
  });
});

describe('UNKNOWN outcomes', () => {
  it('a charge whose answer is lost is never sent again and raises the subscription for attention', async () => {
    await setClock(running.app, kst('2027-03-01T08:00:00'));
    const id = await subscribe(running.app, {});
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'http_500', booked: true });
    await setClock(running.app, kst('2027-04-01T08:00:00'));
    expect(await runPass(running.app)).toEqual({ claimed: 1, succeeded: 0, declined: 0, unknown: 1, skipped: 0 });
    expect(await getSubscription(running.app, id)).toMatchObject({ needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' });
    await setClock(running.app, kst('2027-05-01T08:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect(await charges()).toHaveLength(1);
    const [, payment] = await paymentsOf(running.app, id);
    expect(payment).toMatchObject({ status: 'UNKNOWN' });
    expect(payment!.attempts).toHaveLength(1);
  });
});
