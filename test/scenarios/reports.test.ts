// Issue #23: the revenue reports, told through the public routes with the simulated clock (docs/reconciliation.md "Revenue reports").
// Each definition of a movement by the month it lands in; the month boundary at 00:00 Korea time; refunds in revenue,
// never in MRR; recovery of declined cycles; the CSV rendering; the metrics' gauges.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { adminHeaders, paymentsOf, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { useRunningApp } from '../helpers/database.ts';
import type { MrrMonth } from '../../src/modules/reports/mrr-report.ts';

const kst = (local: string) => new Date(`${local}+09:00`);

const running = useRunningApp({ CLOCK: 'simulated' });

const post = (url: string, payload: object, headers: Record<string, string> = apiHeaders) =>
  running.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, payload });
const admin = (id: string, verb: 'pause' | 'resume' | 'cancel', extra: object = {}) =>
  post(`/admin/subscriptions/${id}/${verb}`, { reason: 'test', ...extra }, adminHeaders);

async function mrrReport(from: string, to: string): Promise<Record<string, MrrMonth>> {
  const response = await running.app.inject({ method: 'GET', url: `/admin/reports/mrr?from=${from}&to=${to}`, headers: adminHeaders });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json() as { timezone: string; currency: string; months: MrrMonth[] };
  expect(body).toMatchObject({ timezone: 'Asia/Seoul', currency: 'KRW' });
  // The identity, and each month starting where the one before ended.
  body.months.forEach((m, i) => {
    expect(m.endingMrr).toBe(m.startingMrr + m.new + m.expansion + m.reactivation - m.contraction - m.churn);
    if (i > 0) expect(m.startingMrr).toBe(body.months[i - 1]!.endingMrr);
    if (i > 0) expect(m.startingSubscriptions).toBe(body.months[i - 1]!.endingSubscriptions);
  });
  return Object.fromEntries(body.months.map((m) => [m.month, m]));
}

const quiet = { new: 0, expansion: 0, reactivation: 0, contraction: 0, churn: 0, newSubscriptions: 0, churnedSubscriptions: 0 };

describe('MRR movements by Korea calendar month', () => {
  it('a new subscription is new in the Korea month it starts: 00:00 KST on the 1st (15:00 UTC the day before) opens the month', async () => {
    await setClock(running.app, new Date('2030-03-31T14:59:59.999Z')); // 23:59:59.999 KST, March 31
    await subscribe(running.app, { amount: 9900 });
    await setClock(running.app, new Date('2030-03-31T15:00:00.000Z')); // 00:00 KST, April 1
    await subscribe(running.app, { amount: 12000, interval: { unit: 'year', count: 1 } });
    await setClock(running.app, kst('2030-04-20T12:00:00'));
    const months = await mrrReport('2030-02', '2030-05');
    expect(Object.keys(months)).toEqual(['2030-02', '2030-03', '2030-04', '2030-05']);
    expect(months['2030-02']).toMatchObject({ ...quiet, startingMrr: 0, endingMrr: 0, logoChurnRate: null, grossMrrChurnRate: null, netMrrChurnRate: null });
    expect(months['2030-03']).toMatchObject({ new: 9900, newSubscriptions: 1, endingMrr: 9900, endingSubscriptions: 1 });
    expect(months['2030-04']).toMatchObject({ startingMrr: 9900, new: 1000, newSubscriptions: 1, endingMrr: 10900, endingSubscriptions: 2 });
    expect(months['2030-04']).toMatchObject({ logoChurnRate: 0, grossMrrChurnRate: 0, netMrrChurnRate: 0 });
    // May has not begun by the service's clock: nothing moves in it.
    expect(months['2030-05']).toMatchObject({ ...quiet, startingMrr: 10900, endingMrr: 10900 });
  });

  it('a trial counts nothing; its first paid charge is new, in the month it converts', async () => {
    await setClock(running.app, kst('2030-03-25T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900, trialDays: 14 });
    expect((await post(`/api/v1/subscriptions/${id}/consents`, { kind: 'TRIAL_CONVERSION' })).statusCode).toBe(201);
    await setClock(running.app, kst('2030-04-08T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const months = await mrrReport('2030-03', '2030-04');
    expect(months['2030-03']).toMatchObject({ ...quiet, endingMrr: 0, endingSubscriptions: 0 });
    expect(months['2030-04']).toMatchObject({ new: 9900, newSubscriptions: 1, endingMrr: 9900 });
  });

  it('a pause churns, a resume reactivates (never new)', async () => {
    await setClock(running.app, kst('2030-03-05T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    await subscribe(running.app, { amount: 5000 });
    await setClock(running.app, kst('2030-04-15T10:00:00'));
    expect((await admin(id, 'pause')).statusCode).toBe(200);
    await setClock(running.app, kst('2030-05-02T10:00:00'));
    expect((await admin(id, 'resume')).statusCode).toBe(200);
    const months = await mrrReport('2030-03', '2030-05');
    expect(months['2030-04']).toMatchObject({ startingMrr: 14900, churn: 9900, churnedSubscriptions: 1, endingMrr: 5000, endingSubscriptions: 1 });
    expect(months['2030-04']).toMatchObject({ logoChurnRate: 0.5, grossMrrChurnRate: 0.6644, netMrrChurnRate: 0.6644 });
    expect(months['2030-05']).toMatchObject({ reactivation: 9900, new: 0, newSubscriptions: 0, endingMrr: 14900, endingSubscriptions: 2 });
    expect(months['2030-05']).toMatchObject({ netMrrChurnRate: -1.98 });
  });

  it('a cancel at period end churns at the period’s end, even when the pass that ends it runs later', async () => {
    await setClock(running.app, kst('2030-03-30T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    await setClock(running.app, kst('2030-04-10T10:00:00'));
    expect((await admin(id, 'cancel', { atPeriodEnd: true })).statusCode).toBe(200);
    // The period ends on April 30, 10:00 KST; the first pass after it runs on May 2.
    await setClock(running.app, kst('2030-05-02T10:00:00'));
    await runPass(running.app);
    const months = await mrrReport('2030-03', '2030-05');
    expect(months['2030-03']).toMatchObject({ new: 9900, endingMrr: 9900 });
    expect(months['2030-04']).toMatchObject({ churn: 9900, churnedSubscriptions: 1, endingMrr: 0, endingSubscriptions: 0 });
    expect(months['2030-05']).toMatchObject({ ...quiet, startingMrr: 0 });
  });

  it('a past-due subscription cancelled at period end churns at the retry it is cancelled instead of, never in a month it counted through', async () => {
    // The property's counterexample (reports-property, seed 1969652153): a daily plan whose renewal is declined, then
    // cancelled at period end while past due; the pass that ends it runs a month later.
    await setClock(running.app, new Date('2030-01-31T16:00:00Z')); // 01:00 KST, February 1
    const id = await subscribe(running.app, { amount: 100, interval: { unit: 'day', count: 1 } });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 1 });
    // The period ended on February 2, 01:00 KST; the first pass after it runs on March 1: declined, retry a day later.
    await setClock(running.app, kst('2030-03-01T00:00:00'));
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    expect((await admin(id, 'cancel', { atPeriodEnd: true })).statusCode).toBe(200);
    await setClock(running.app, kst('2030-04-01T00:00:00'));
    await runPass(running.app);
    expect((await running.app.db.subscription.findUniqueOrThrow({ where: { id } })).status).toBe('CANCELED');
    // It counted (PAST_DUE) through February and until its retry, on March 2 00:00 KST, which was never sent.
    const churn = await running.app.db.mrrMovement.findFirstOrThrow({ where: { subscriptionId: id, kind: 'CHURN' } });
    expect(churn.at).toEqual(kst('2030-03-02T00:00:00'));
    const months = await mrrReport('2030-02', '2030-04');
    expect(months['2030-02']).toMatchObject({ new: 3042, churn: 0, churnedSubscriptions: 0, endingMrr: 3042, endingSubscriptions: 1 });
    expect(months['2030-03']).toMatchObject({ startingMrr: 3042, churn: 3042, churnedSubscriptions: 1, endingMrr: 0, endingSubscriptions: 0 });
    expect(months['2030-04']).toMatchObject({ ...quiet, startingMrr: 0 });
  });

  it('a price decrease contracts at once; an increase expands only once it applies, at the charge its consent allows', async () => {
    await setClock(running.app, kst('2030-02-10T10:00:00'));
    const down = await subscribe(running.app, { amount: 9900 });
    const up = await subscribe(running.app, { amount: 9900 });
    await setClock(running.app, kst('2030-03-05T10:00:00'));
    expect((await post(`/api/v1/subscriptions/${down}/price-change`, { amount: 7900 })).json()).toMatchObject({ amount: 7900 });
    expect((await post(`/api/v1/subscriptions/${up}/price-change`, { amount: 12900 })).json()).toMatchObject({ amount: 9900, pendingAmount: 12900 });
    expect((await post(`/api/v1/subscriptions/${up}/consents`, { kind: 'PRICE_INCREASE' })).statusCode).toBe(201);
    let months = await mrrReport('2030-02', '2030-03');
    expect(months['2030-02']).toMatchObject({ new: 19800, contraction: 0, endingMrr: 19800 });
    expect(months['2030-03']).toMatchObject({ startingMrr: 19800, contraction: 2000, expansion: 0, endingMrr: 17800 });
    await setClock(running.app, kst('2030-03-10T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 2 });
    months = await mrrReport('2030-02', '2030-04');
    expect(months['2030-03']).toMatchObject({ startingMrr: 19800, expansion: 3000, contraction: 2000, endingMrr: 20800 });
    expect(months['2030-04']).toMatchObject({ ...quiet, startingMrr: 20800 });
  });
});

describe('revenue and recovery', () => {
  it('refunds count in revenue by the Korea date they were asked for, and never move MRR', async () => {
    await setClock(running.app, new Date('2030-03-31T14:30:00Z')); // 23:30 KST, March 31
    const id = await subscribe(running.app, { amount: 9900 });
    const [initial] = await paymentsOf(running.app, id);
    await setClock(running.app, new Date('2030-03-31T15:30:00Z')); // 00:30 KST, April 1
    const refund = await post(`/admin/payments/${initial!.id}/cancel`, { amount: 4900, reason: 'goodwill' }, adminHeaders);
    expect(refund.statusCode, refund.body).toBe(200);
    const months = await mrrReport('2030-03', '2030-04');
    expect(months['2030-04']).toMatchObject({ ...quiet, startingMrr: 9900, endingMrr: 9900 });

    const daily = await running.app.inject({ method: 'GET', url: '/admin/reports/revenue?from=2030-03-31&to=2030-04-02', headers: adminHeaders });
    expect(daily.statusCode, daily.body).toBe(200);
    const none = { count: 0, amount: 0 };
    const zero = { payments: none, refunds: none, net: 0 };
    expect(daily.json()).toEqual({
      timezone: 'Asia/Seoul',
      currency: 'KRW',
      items: [
        {
          period: '2030-03-31',
          payments: { count: 1, amount: 9900 },
          refunds: none,
          net: 9900,
          byMethod: { CARD: { payments: { count: 1, amount: 9900 }, refunds: none, net: 9900 }, MOBILE: zero },
          byGateway: { DANAL: { payments: { count: 1, amount: 9900 }, refunds: none, net: 9900 }, TOSS: zero },
        },
        {
          period: '2030-04-01',
          payments: none,
          refunds: { count: 1, amount: 4900 },
          net: -4900,
          byMethod: { CARD: { payments: none, refunds: { count: 1, amount: 4900 }, net: -4900 }, MOBILE: zero },
          byGateway: { DANAL: { payments: none, refunds: { count: 1, amount: 4900 }, net: -4900 }, TOSS: zero },
        },
        { period: '2030-04-02', ...zero, byMethod: { CARD: zero, MOBILE: zero }, byGateway: { DANAL: zero, TOSS: zero } },
      ],
    });
    const monthly = await running.app.inject({
      method: 'GET',
      url: '/admin/reports/revenue?from=2030-03-01&to=2030-04-30&granularity=month',
      headers: adminHeaders,
    });
    expect(monthly.json().items.map((i: { period: string; net: number }) => [i.period, i.net])).toEqual([
      ['2030-03', 9900],
      ['2030-04', -4900],
    ]);
    // By month, the first month counts from `from` and the last up to `to` (both days included), not whole months:
    // the charge of March 31 and the refund of April 1 fall outside March 1–30 and April 2–30.
    const monthlyNet = async (from: string, to: string) => {
      const answer = await running.app.inject({ method: 'GET', url: `/admin/reports/revenue?from=${from}&to=${to}&granularity=month`, headers: adminHeaders });
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json().items.map((i: { period: string; net: number }) => [i.period, i.net]);
    };
    expect(await monthlyNet('2030-03-01', '2030-03-30')).toEqual([['2030-03', 0]]);
    expect(await monthlyNet('2030-04-02', '2030-04-30')).toEqual([['2030-04', 0]]);
    expect(await monthlyNet('2030-03-31', '2030-04-01')).toEqual([
      ['2030-03', 9900],
      ['2030-04', -4900],
    ]);
    const reversed = await running.app.inject({
      method: 'GET',
      url: '/admin/reports/revenue?from=2030-03-20&to=2030-03-10&granularity=month',
      headers: adminHeaders,
    });
    expect(reversed.statusCode, reversed.body).toBe(400);
  });

  it('a declined cycle counts in the month of its first decline: recovered by a retry, lost when its retries run out, else open', async () => {
    const at = async (day: string) => {
      await setClock(running.app, kst(`2030-${day}T10:00:00`));
      return runPass(running.app);
    };
    await setClock(running.app, kst('2030-03-10T10:00:00'));
    const recovered = await subscribe(running.app, { amount: 9900 });
    await setClock(running.app, kst('2030-03-20T10:00:00'));
    const lost = await subscribe(running.app, { amount: 5000 });
    await setClock(running.app, kst('2030-03-25T10:00:00'));
    const open = await subscribe(running.app, { amount: 7000 });
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 1 });
    expect(await at('04-10')).toMatchObject({ declined: 1 });
    expect(await at('04-11')).toMatchObject({ succeeded: 1 }); // the retry
    // The second's charge and its three retries (1, 3 and 5 days after) are declined, and the third's charge.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 5 });
    for (const day of ['04-20', '04-21', '04-23', '04-25']) await at(day);
    const states = await Promise.all([recovered, lost, open].map((id) => running.app.db.subscription.findUniqueOrThrow({ where: { id } })));
    expect(states.map((s) => s.status)).toEqual(['ACTIVE', 'CANCELED', 'PAST_DUE']);

    const response = await running.app.inject({ method: 'GET', url: '/admin/reports/recovery?from=2030-03&to=2030-04', headers: adminHeaders });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      months: [
        { month: '2030-03', failedCycles: 0, recovered: 0, lost: 0, open: 0, recoveryRate: null, recoveredAmount: 0 },
        { month: '2030-04', failedCycles: 3, recovered: 1, lost: 1, open: 1, recoveryRate: 0.3333, recoveredAmount: 9900 },
      ],
    });
  });

  it('answers CSV with Accept: text/csv: UTF-8 with BOM, the JSON names joined by dots, one row per period', async () => {
    await setClock(running.app, kst('2030-03-10T10:00:00'));
    await subscribe(running.app, { amount: 9900 });
    const get = (url: string) => running.app.inject({ method: 'GET', url, headers: { ...adminHeaders, accept: 'text/csv' } });
    const revenue = await get('/admin/reports/revenue?from=2030-03-10&to=2030-03-11');
    expect(revenue.statusCode).toBe(200);
    expect(revenue.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
    expect(revenue.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(revenue.body.slice(1).split('\r\n')).toEqual([
      'period,payments.count,payments.amount,refunds.count,refunds.amount,net,' +
        'byMethod.CARD.payments.count,byMethod.CARD.payments.amount,byMethod.CARD.refunds.count,byMethod.CARD.refunds.amount,byMethod.CARD.net,' +
        'byMethod.MOBILE.payments.count,byMethod.MOBILE.payments.amount,byMethod.MOBILE.refunds.count,byMethod.MOBILE.refunds.amount,byMethod.MOBILE.net,' +
        'byGateway.DANAL.payments.count,byGateway.DANAL.payments.amount,byGateway.DANAL.refunds.count,byGateway.DANAL.refunds.amount,byGateway.DANAL.net,' +
        'byGateway.TOSS.payments.count,byGateway.TOSS.payments.amount,byGateway.TOSS.refunds.count,byGateway.TOSS.refunds.amount,byGateway.TOSS.net',
      '2030-03-10,1,9900,0,0,9900,1,9900,0,0,9900,0,0,0,0,0,1,9900,0,0,9900,0,0,0,0,0',
      '2030-03-11,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0',
      '',
    ]);
    const mrr = await get('/admin/reports/mrr?from=2030-02&to=2030-03');
    expect(mrr.body.slice(1).split('\r\n')).toEqual([
      'month,startingMrr,new,expansion,reactivation,contraction,churn,endingMrr,startingSubscriptions,endingSubscriptions,newSubscriptions,churnedSubscriptions,logoChurnRate,grossMrrChurnRate,netMrrChurnRate',
      '2030-02,0,0,0,0,0,0,0,0,0,0,0,,,',
      '2030-03,0,9900,0,0,0,0,9900,0,1,1,0,,,',
      '',
    ]);
  });

  it('refuses a malformed or reversed range with 400', async () => {
    for (const query of ['from=2030-3&to=2030-04', 'from=2030-05&to=2030-04', 'from=2030-13&to=2030-13']) {
      const response = await running.app.inject({ method: 'GET', url: `/admin/reports/mrr?${query}`, headers: adminHeaders });
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
  });

  it('the metrics show the MRR now and the subscriptions counting in it', async () => {
    await setClock(running.app, kst('2030-03-10T10:00:00'));
    const paused = await subscribe(running.app, { amount: 9900 });
    await subscribe(running.app, { amount: 12000, interval: { unit: 'year', count: 1 } });
    expect((await admin(paused, 'pause')).statusCode).toBe(200);
    const metrics = (await running.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^billing_mrr_krw 1000$/m);
    expect(metrics).toMatch(/^billing_active_subscriptions 1$/m);
  });

  it('the README’s worked month (April 2030) comes out as the README says', async () => {
    await setClock(running.app, kst('2030-03-05T10:00:00'));
    const a = await subscribe(running.app, { amount: 9900 });
    const b = await subscribe(running.app, { amount: 120000, interval: { unit: 'year', count: 1 } });
    const c = await subscribe(running.app, { amount: 3000, interval: { unit: 'week', count: 1 } });
    const f = await subscribe(running.app, { amount: 5000 });
    expect((await admin(f, 'pause')).statusCode).toBe(200);
    await setClock(running.app, kst('2030-03-25T10:00:00'));
    const e = await subscribe(running.app, { amount: 9900, trialDays: 14 });
    expect((await post(`/api/v1/subscriptions/${e}/consents`, { kind: 'TRIAL_CONVERSION' })).statusCode).toBe(201);

    await setClock(running.app, kst('2030-04-03T10:00:00'));
    const d = await subscribe(running.app, { amount: 19900 });
    await setClock(running.app, kst('2030-04-08T10:00:00'));
    await runPass(running.app); // E converts (C renews)
    await setClock(running.app, kst('2030-04-12T10:00:00'));
    expect((await admin(a, 'pause')).statusCode).toBe(200);
    await setClock(running.app, kst('2030-04-20T10:00:00'));
    expect((await post(`/api/v1/subscriptions/${c}/price-change`, { amount: 2400 })).statusCode).toBe(200);
    await setClock(running.app, kst('2030-04-25T10:00:00'));
    expect((await admin(f, 'resume')).statusCode).toBe(200);
    expect((await post(`/api/v1/subscriptions/${b}/price-change`, { amount: 132000 })).statusCode).toBe(200);
    expect((await post(`/api/v1/subscriptions/${b}/consents`, { kind: 'PRICE_INCREASE' })).statusCode).toBe(201);
    const [initial] = await paymentsOf(running.app, d);
    expect((await post(`/admin/payments/${initial!.id}/cancel`, { amount: 5000, reason: 'goodwill' }, adminHeaders)).statusCode).toBe(200);
    await setClock(running.app, kst('2030-04-30T23:00:00'));

    const april = (await mrrReport('2030-04', '2030-04'))['2030-04'];
    expect(april).toEqual({
      month: '2030-04',
      startingMrr: 32900,
      new: 29800,
      expansion: 0,
      reactivation: 5000,
      contraction: 2600,
      churn: 9900,
      endingMrr: 55200,
      startingSubscriptions: 3,
      endingSubscriptions: 5,
      newSubscriptions: 2,
      churnedSubscriptions: 1,
      logoChurnRate: 0.3333,
      grossMrrChurnRate: 0.3799,
      netMrrChurnRate: 0.228,
    });
  });
});
