// A book on both gateways (docs/api.md "Gateways"), through the public routes and both sandboxes over HTTP: a Danal
// MOBILE, a Danal CARD and a Toss CARD subscription charged for two months, one refund through each gateway. What
// people read the money from then agrees with the payments made: the revenue report's totals, byMethod and byGateway
// (docs/reconciliation.md "Revenue reports"), the admin lists' gateway filter, the console's CSV exports (each payment
// and subscription once, with its gateway) and its Payment and Subscription pages.
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { adminHeaders, getSubscription, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxLedger } from '../helpers/checkout.ts';
import { consoleCookie, textOf } from '../helpers/console.ts';
import { useRunningApp } from '../helpers/database.ts';
import { subscribeThroughToss, tossLedger } from '../helpers/gateways.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
const kst = (local: string) => new Date(`${local}+09:00`);

type Gateway = 'DANAL' | 'TOSS';
type Method = 'CARD' | 'MOBILE';
interface Money {
  count: number;
  amount: number;
}
interface Figures {
  payments: Money;
  refunds: Money;
  net: number;
}
interface RevenueItem extends Figures {
  period: string;
  byMethod: Record<Method, Figures>;
  byGateway: Record<Gateway, Figures>;
}
interface AdminPayment {
  id: string;
  subscriptionId?: string;
  method: Method;
  gateway: Gateway;
  amount: number;
  status: string;
  approvedAt?: string;
  refunds?: Array<{ amount: number; status: string; requestedAt: string }>;
}

async function adminGet<T>(url: string): Promise<T> {
  const response = await running.app.inject({ method: 'GET', url, headers: adminHeaders });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as T;
}

const refund = async (paymentId: string, body: Record<string, unknown>, key: string) => {
  const response = await running.app.inject({
    method: 'POST',
    url: `/admin/payments/${paymentId}/cancel`,
    headers: { ...adminHeaders, 'idempotency-key': key },
    payload: body,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as AdminPayment;
};

/** RFC 4180 records of a CSV text (quoted fields with doubled quotes), its BOM and trailing line break dropped. */
function csvRecords(text: string): string[][] {
  expect(text.charCodeAt(0)).toBe(0xfeff);
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  const body = text.slice(1);
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (quoted) {
      if (char === '"' && body[i + 1] === '"') field += body[++i];
      else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && body[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += char;
  }
  expect(field === '' && record.length === 0, 'the CSV ends with a line break').toBe(true);
  return records;
}

/** An export's rows as objects keyed by its header's names. */
async function exported(cookie: string, url: string): Promise<Array<Record<string, string>>> {
  const response = await running.app.inject({ method: 'GET', url, headers: { cookie } });
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
  const [header, ...rows] = csvRecords(response.body);
  return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i] ?? ''])));
}

/** The figures of some payments and refunds, as the report adds them. */
function figuresOf(paid: number[], refunded: number[]): Figures {
  const sum = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);
  return { payments: { count: paid.length, amount: sum(paid) }, refunds: { count: refunded.length, amount: sum(refunded) }, net: sum(paid) - sum(refunded) };
}

const plus = (a: Figures, b: Figures): Figures => ({
  payments: { count: a.payments.count + b.payments.count, amount: a.payments.amount + b.payments.amount },
  refunds: { count: a.refunds.count + b.refunds.count, amount: a.refunds.amount + b.refunds.amount },
  net: a.net + b.net,
});
const koreaMonth = (iso: string) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul', year: 'numeric', month: '2-digit' }).format(new Date(iso));

describe('a book on both gateways', () => {
  it('Danal MOBILE, Danal CARD and Toss CARD charged twice, a refund through each gateway: reports, lists, exports and pages agree', async () => {
    // May: each subscribes; Danal charges at once, Toss (key-only in this version) at the next pass.
    await setClock(running.app, kst('2030-05-10T10:00:00'));
    const mobile = await subscribe(running.app, { userId: 'book-mobile', method: 'MOBILE', amount: 5_500, itemCode: 'ITEM01' });
    const card = await subscribe(running.app, { userId: 'book-card', amount: 9_900 });
    const { subscriptionId: toss, customerKey } = await subscribeThroughToss(running.app, { userId: 'book-toss', amount: 12_000 });
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 1 });

    // June: the three renewals in one pass, each through its own gateway.
    await setClock(running.app, kst('2030-06-10T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 3, succeeded: 3, declined: 0, unknown: 0 });
    const [mobileJune, cardJune, tossJune] = await Promise.all([mobile, card, toss].map(async (id) => (await paymentsOf(running.app, id))[1]!));

    // One refund through each gateway: Danal's of the phone payment (MOBILE: in full, within its month), Toss's in part.
    await setClock(running.app, kst('2030-06-12T10:00:00'));
    expect(await refund(mobileJune!.id, { reason: 'customer asked' }, 'book-refund-danal')).toMatchObject({ gateway: 'DANAL', status: 'CANCELED' });
    expect(await refund(tossJune!.id, { amount: 3_000, reason: 'goodwill' }, 'book-refund-toss')).toMatchObject({ gateway: 'TOSS', canceledAmount: 3_000 });

    // Each gateway's own ledger holds its charges and its refund, and nothing of the other's.
    const payments = (await adminGet<{ items: AdminPayment[] }>('/admin/payments?limit=100')).items;
    expect(payments).toHaveLength(6);
    const tossOrders = (await tossLedger(running.app)).filter((e) => e.customerKey === customerKey);
    expect(tossOrders.filter((e) => e.type === 'CHARGE').map((e) => e.amount)).toEqual([12_000, 12_000]);
    expect(tossOrders.filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([3_000]);
    const danal = await sandboxLedger(running.app);
    expect(danal.filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([5_500]);
    const byGateway = (gateway: Gateway) => payments.filter((p) => p.gateway === gateway);
    expect(byGateway('TOSS').map((p) => p.subscriptionId)).toEqual([toss, toss]);
    expect(new Set(byGateway('DANAL').map((p) => p.subscriptionId))).toEqual(new Set([mobile, card]));

    // The revenue report by month: the figures the payments make, split by method and by gateway.
    const report = await adminGet<{ items: RevenueItem[] }>('/admin/reports/revenue?from=2030-05-01&to=2030-06-30&granularity=month');
    const may = figuresOf([5_500, 9_900, 12_000], []);
    expect(report.items).toEqual([
      {
        period: '2030-05',
        ...may,
        byMethod: { CARD: figuresOf([9_900, 12_000], []), MOBILE: figuresOf([5_500], []) },
        byGateway: { DANAL: figuresOf([5_500, 9_900], []), TOSS: figuresOf([12_000], []) },
      },
      {
        period: '2030-06',
        ...figuresOf([5_500, 9_900, 12_000], [5_500, 3_000]),
        byMethod: { CARD: figuresOf([9_900, 12_000], [3_000]), MOBILE: figuresOf([5_500], [5_500]) },
        byGateway: { DANAL: figuresOf([5_500, 9_900], [5_500]), TOSS: figuresOf([12_000], [3_000]) },
      },
    ]);
    // Each split adds up to its period's figures, and every figure to what the payments say of themselves.
    for (const item of report.items) {
      const { period: _period, byMethod, byGateway: gateways, ...total } = item;
      expect(plus(byMethod.CARD, byMethod.MOBILE)).toEqual(total);
      expect(plus(gateways.DANAL, gateways.TOSS)).toEqual(total);
      for (const gateway of ['DANAL', 'TOSS'] as const) {
        const mine = byGateway(gateway);
        const paid = mine.filter((p) => p.approvedAt && koreaMonth(p.approvedAt) === item.period).map((p) => p.amount);
        const refunded = mine.flatMap((p) => p.refunds ?? []).filter((r) => r.status === 'SUCCEEDED' && koreaMonth(r.requestedAt) === item.period);
        expect(gateways[gateway], `${item.period} ${gateway}`).toEqual(
          figuresOf(
            paid,
            refunded.map((r) => r.amount),
          ),
        );
      }
    }
    // The same by day: June 10 and June 12 hold June's, every other day zeros on both gateways.
    const days = await adminGet<{ items: RevenueItem[] }>('/admin/reports/revenue?from=2030-06-09&to=2030-06-13');
    expect(days.items.map((d) => [d.period, d.byGateway.DANAL.net, d.byGateway.TOSS.net])).toEqual([
      ['2030-06-09', 0, 0],
      ['2030-06-10', 15_400, 12_000],
      ['2030-06-11', 0, 0],
      ['2030-06-12', -5_500, -3_000],
      ['2030-06-13', 0, 0],
    ]);

    // The admin lists by gateway.
    const ids = async (url: string) => (await adminGet<{ items: Array<{ id: string }> }>(url)).items.map((item) => item.id).sort();
    expect(await ids('/admin/payments?gateway=TOSS&limit=100')).toEqual(
      byGateway('TOSS')
        .map((p) => p.id)
        .sort(),
    );
    expect(await ids('/admin/payments?gateway=DANAL&method=CARD&limit=100')).toEqual(
      payments
        .filter((p) => p.gateway === 'DANAL' && p.method === 'CARD')
        .map((p) => p.id)
        .sort(),
    );
    expect(await ids('/admin/subscriptions?gateway=TOSS')).toEqual([toss]);
    expect(await ids('/admin/subscriptions?gateway=DANAL')).toEqual([mobile, card].sort());

    // The console's exports: every payment once, with its gateway (the filter too); every subscription once, with its key's.
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const paymentRows = await exported(cookie, '/console/payments/export');
    expect(paymentRows.map((row) => row.id).sort()).toEqual(payments.map((p) => p.id).sort());
    for (const payment of payments) {
      expect(paymentRows.find((row) => row.id === payment.id)).toMatchObject({
        gateway: payment.gateway,
        method: payment.method,
        amount: String(payment.amount),
      });
    }
    expect((await exported(cookie, '/console/payments/export?gateway=TOSS')).map((row) => [row.id, row.gateway]).sort()).toEqual(
      byGateway('TOSS')
        .map((p) => [p.id, 'TOSS'])
        .sort(),
    );
    const subscriptionRows = await exported(cookie, '/console/subscriptions/export');
    expect(subscriptionRows.map((row) => [row.id, row.method, row['billingKey.gateway']]).sort()).toEqual(
      [
        [mobile, 'MOBILE', 'DANAL'],
        [card, 'CARD', 'DANAL'],
        [toss, 'CARD', 'TOSS'],
      ].sort(),
    );

    // The console's pages and lists say the gateway.
    const page = async (url: string) => {
      const response = await running.app.inject({ method: 'GET', url, headers: { cookie } });
      expect(response.statusCode, response.body).toBe(200);
      return response.body;
    };
    expect(textOf(await page(`/console/payments/${tossJune!.id}`), 'payment-gateway')).toBe('TOSS');
    expect(textOf(await page(`/console/payments/${cardJune!.id}`), 'payment-gateway')).toBe('DANAL');
    expect(textOf(await page(`/console/subscriptions/${toss}`), 'subscription-gateway')).toBe('TOSS');
    expect((await getSubscription(running.app, toss)).billingKey).toMatchObject({ method: 'CARD' });
    const tossList = await page('/console/payments?gateway=TOSS');
    for (const p of byGateway('TOSS')) expect(tossList).toContain(`/console/payments/${p.id}"`);
    for (const p of byGateway('DANAL')) expect(tossList).not.toContain(`/console/payments/${p.id}"`);
    expect(tossList).toMatch(/<option value="TOSS" selected>/);
    const reports = await page('/console/reports?from=2030-05&to=2030-06');
    expect(reports).toContain('Toss Payments net');
  });
});
