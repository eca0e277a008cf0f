// The console's Subscription and Reconciliation pages through their routes (no browser; test/e2e/console-records.test.ts
// drives them in Chromium): a PAST_DUE subscription says why and when it is tried again, as the charging pass then
// does it (RETRY_DELAYS here 1d,3d,7d, so a MOBILE retry can fall outside its ±5-day window); the reconciliation
// summary counts the refunds made outside the gateway and its totals add up.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { formatKst } from '../../../src/modules/console/korea-time.ts';
import { TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault } from '../../helpers/checkout.ts';
import { consoleCookie, textOf } from '../../helpers/console.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { adminGet } from '../../helpers/settlement.ts';

const running = useRunningApp({ CLOCK: 'simulated', RETRY_DELAYS: '1d,3d,7d' });
const kst = (local: string) => new Date(`${local}+09:00`);

async function consolePage(url: string): Promise<string> {
  const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
  const response = await running.app.inject({ method: 'GET', url, headers: { cookie } });
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

/** The subscription's next charge declined by the gateway at its due time (the charging pass, as scheduled). */
async function declineNext(id: string, message = 'over the card limit'): Promise<Date> {
  const due = new Date((await getSubscription(running.app, id)).nextChargeAt!);
  await setClock(running.app, due);
  await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', code: 'LIMIT_EXCEEDED', message });
  await runPass(running.app);
  return due;
}

describe('a PAST_DUE subscription on its page', () => {
  it('says the decline’s gateway code and message and each retry’s date; the last retry says the cancellation the charging pass then makes', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { userId: 'past-due-card' });
    const url = `/console/subscriptions/${id}`;
    expect(await consolePage(url)).not.toContain('id="past-due"');

    const first = await declineNext(id);
    expect((await getSubscription(running.app, id)).status).toBe('PAST_DUE');
    let html = await consolePage(url);
    expect(textOf(html, 'past-due')).toContain(`The gateway declined the charge of cycle 1 on ${formatKst(first)}: LIMIT_EXCEEDED “over the card limit”.`);
    // Retry 1 at the due date + 1 day (RETRY_DELAYS), as the subscription's next charge says.
    const retry1 = (await getSubscription(running.app, id)).nextChargeAt!;
    expect(new Date(retry1).getTime() - first.getTime()).toBe(86_400_000);
    expect(textOf(html, 'past-due-next')).toBe(`It is tried again on ${formatKst(retry1)} (retry 1 of 3).`);

    await declineNext(id);
    html = await consolePage(url);
    const retry2 = (await getSubscription(running.app, id)).nextChargeAt!;
    expect(textOf(html, 'past-due-next')).toBe(`It is tried again on ${formatKst(retry2)} (retry 2 of 3).`);

    const third = await declineNext(id, 'still over the limit');
    html = await consolePage(url);
    expect(textOf(html, 'past-due')).toContain(`on ${formatKst(third)}: LIMIT_EXCEEDED “still over the limit”.`);
    const last = (await getSubscription(running.app, id)).nextChargeAt!;
    expect(textOf(html, 'past-due-next')).toBe(
      `It is tried again on ${formatKst(last)}, the last retry: no retry is left after it, and if it is declined the subscription is cancelled on ${formatKst(last)}.`,
    );

    // What the page said is what the charging pass does: the last retry declined cancels the subscription then.
    await declineNext(id);
    const canceled = await getSubscription(running.app, id);
    expect(canceled).toMatchObject({ status: 'CANCELED', cancelReason: 'RETRIES_EXHAUSTED' });
    expect(formatKst(canceled.canceledAt!)).toBe(formatKst(last));
    expect(await consolePage(url)).not.toContain('id="past-due"');
  });

  it('MOBILE: a retry whose decline would leave the window says so, and MOBILE_WINDOW_CLOSED says it needs a new registration', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { userId: 'past-due-phone', method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    const url = `/console/subscriptions/${id}`;

    await declineNext(id);
    let html = await consolePage(url);
    const retry1 = (await getSubscription(running.app, id)).nextChargeAt!;
    expect(textOf(html, 'past-due-next')).toBe(`It is tried again on ${formatKst(retry1)} (retry 1 of 3).`);

    // After the second decline the third retry (due + 7 days) would fall outside the ±5-day window.
    await declineNext(id);
    html = await consolePage(url);
    const retry2 = (await getSubscription(running.app, id)).nextChargeAt!;
    expect(textOf(html, 'past-due-next')).toBe(
      `It is tried again on ${formatKst(retry2)}; if that is declined, the phone payment window will have passed and the customer must register the payment method again.`,
    );

    await declineNext(id);
    const closed = await getSubscription(running.app, id);
    expect(closed).toMatchObject({ status: 'PAST_DUE', needsAttention: true, attentionReason: 'MOBILE_WINDOW_CLOSED', nextChargeAt: null });
    html = await consolePage(url);
    expect(textOf(html, 'past-due-next')).toBe(
      'It is not tried again: the phone payment window has passed (phone payments are charged at most five days either side of the monthly date). It needs a new payment-method registration by the customer.',
    );
  });
});

describe('the reconciliation summary', () => {
  it('counts the refunds made outside the gateway, and our ledger after every refund adds up to the revenue report’s net', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const a = await subscribe(running.app, { userId: 'summary-a', amount: 9_900 });
    const b = await subscribe(running.app, { userId: 'summary-b', amount: 30_000 });
    const [paidA] = await paymentsOf(running.app, a);
    const [paidB] = await paymentsOf(running.app, b);
    const post = (url: string, payload: object, key: string) =>
      running.app.inject({ method: 'POST', url, headers: { ...adminHeaders, 'idempotency-key': key }, payload });
    // Through the gateway: 4,000 of A. Outside it (a bank transfer): 5,000 and 2,500 of B.
    expect((await post(`/admin/payments/${paidA!.id}/cancel`, { amount: 4_000, reason: 'part back' }, 'r-1')).statusCode).toBe(200);
    expect((await post(`/admin/payments/${paidB!.id}/refunds/external`, { amount: 5_000, reason: 'bank transfer' }, 'x-1')).statusCode).toBe(201);
    expect((await post(`/admin/payments/${paidB!.id}/refunds/external`, { amount: 2_500, reason: 'bank transfer' }, 'x-2')).statusCode).toBe(201);

    const html = await consolePage('/console/reconciliation?from=2027-03-10&to=2027-03-10');
    const row = (name: string) => {
      const start = html.indexOf(`data-row="${name}"`);
      expect(start, name).toBeGreaterThan(-1);
      const tr = html.slice(start, html.indexOf('</tr>', start));
      return [...tr.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]);
    };
    // Columns: approvals, approved amount, cancels / refunds, their amount, net.
    expect(row('ledger')).toEqual(['2', '39,900 KRW', '1', '4,000 KRW', '35,900 KRW']);
    expect(row('external-refunds')).toEqual(['', '', '2', '7,500 KRW', '-7,500 KRW']);
    expect(row('ledger-all-refunds')).toEqual(['2', '39,900 KRW', '3', '11,500 KRW', '28,400 KRW']);
    // The same figures as the admin route's summary, and the revenue report's net for the day.
    const summary = await adminGet<{ ledger: { net: number; externalRefunds: { count: number; amount: number } } }>(
      running.app,
      '/admin/reconciliation/summary?from=2027-03-10&to=2027-03-10',
    );
    expect(summary.ledger).toMatchObject({ net: 35_900, externalRefunds: { count: 2, amount: 7_500 } });
    const revenue = await adminGet<{ items: Array<{ net: number }> }>(running.app, '/admin/reports/revenue?from=2027-03-10&to=2027-03-10');
    expect(revenue.items.map((p) => p.net)).toEqual([28_400]);
  });
});

describe('the Audit page', () => {
  it('links a customer actor to their subscriptions and an import actor to its reconciliation page, and says an unknown action as its code', async () => {
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    const id = await subscribe(running.app, { userId: 'audit-customer' });
    const importId = '7d1f4c2e-0b7a-4c55-9a51-3f0e2b9c8a11';
    // Entries as the portal (actor customer:<userId>) and a settlement import (settlement-import:<id>) write them.
    await running.app.db.auditEvent.createMany({
      data: [
        { actor: 'customer:audit-customer', action: 'subscription.cancel_at_period_end', entityType: 'subscription', entityId: id, reason: 'moving abroad' },
        { actor: `settlement-import:${importId}`, action: 'payment.future_action', entityType: 'payment', entityId: randomUUID(), reason: 'settlement file' },
      ],
    });
    const html = await consolePage('/console/audit?actor=customer:audit-customer');
    expect(html).toContain('<a href="/console/subscriptions?userId=audit-customer" aria-label="customer:audit-customer"');
    expect(textOf(html, 'audit')).toContain('Set to cancel at the end of the period subscription.cancel_at_period_end');
    expect(html).toContain(`href="/console/subscriptions/${id}"`);
    const byImport = await consolePage(`/console/audit?actor=settlement-import:${importId}`);
    expect(byImport).toContain(`<a href="/console/reconciliation?import=${importId}" aria-label="settlement-import:${importId}"`);
    // An action the catalog has no words for yet shows its code alone, never an error.
    expect(textOf(byImport, 'audit')).toContain('payment.future_action');
  });
});
