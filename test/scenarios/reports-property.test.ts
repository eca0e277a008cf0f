// Issue #23, as a property: over random sequences of subscription changes at random Korea-time instants (creations,
// trials and their consents, cancels now or at period end, pauses, resumes, price changes up and down, declines and
// recoveries by the charging pass), driven through the public routes with the simulated clock, the MRR report keeps
// for every month ending = starting + new + expansion + reactivation − contraction − churn, each month starts where
// the one before ended, and the MRR and subscriptions at the current instant are what the test computes itself from
// the subscriptions counting then (their public shape and subscriptionMrr).
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { adminHeaders, getSubscription, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { sandboxFault } from '../helpers/checkout.ts';
import { truncateAll, useRunningApp } from '../helpers/database.ts';
import { subscriptionMrr, type IntervalUnit } from '../../src/modules/reports/mrr.ts';
import type { MrrMonth } from '../../src/modules/reports/mrr-report.ts';

const running = useRunningApp({ CLOCK: 'simulated' });

const HOUR = 3_600_000;
const START = new Date('2030-01-31T15:00:00Z'); // 00:00 KST, February 1

type Op =
  | { kind: 'create'; amount: number; unit: IntervalUnit; count: number; trialDays?: number }
  | { kind: 'cancel'; target: number; atPeriodEnd: boolean }
  | { kind: 'pause' | 'resume' | 'consentTrial'; target: number }
  | { kind: 'price'; target: number; amount: number; consent: boolean }
  | { kind: 'decline'; target: number };

const target = fc.nat({ max: 5 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      amount: fc.integer({ min: 100, max: 99_999 }),
      unit: fc.constantFrom<IntervalUnit>('day', 'week', 'month', 'year'),
      count: fc.integer({ min: 1, max: 3 }),
      trialDays: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
    }),
  },
  fc.record({ kind: fc.constant('cancel' as const), target, atPeriodEnd: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const, 'consentTrial' as const), target }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('price' as const), target, amount: fc.integer({ min: 100, max: 99_999 }), consent: fc.boolean() }) },
  fc.record({ kind: fc.constant('decline' as const), target }),
);
/** A step: the clock moves on (hours, or to a month's first 00:00 KST), the charging pass runs, then the change. */
const step = fc.record({ hours: fc.integer({ min: 1, max: 24 * 25 }), toMonthStart: fc.boolean(), op });

/**
 * fast-check's parameters: 20 runs from a fresh seed, or a failure replayed (FC_SEED and FC_PATH, as fast-check
 * prints them), or FC_RUNS runs from FC_SEED to look for more counterexamples.
 */
function replay(numRuns: number): fc.Parameters<[unknown]> {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
  const runs = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : numRuns;
  return { numRuns: runs, ...(seed === undefined ? {} : { seed }), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) };
}

const monthOf = (instant: Date) => new Date(instant.getTime() + 9 * HOUR).toISOString().slice(0, 7);

async function apply(o: Op, ids: string[]): Promise<void> {
  const post = (url: string, payload: object, headers = apiHeaders) =>
    running.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, payload });
  if (o.kind === 'create') {
    const terms = { amount: o.amount, interval: { unit: o.unit, count: o.count }, ...(o.trialDays ? { trialDays: o.trialDays } : {}) };
    ids.push(await subscribe(running.app, terms));
    return;
  }
  const id = ids[o.target % Math.max(ids.length, 1)];
  if (!id) return;
  // Refusals (a pause of a cancelled subscription, an increase above a limit…) are part of the random walk.
  if (o.kind === 'cancel') await post(`/admin/subscriptions/${id}/cancel`, { reason: 'property', atPeriodEnd: o.atPeriodEnd }, adminHeaders);
  else if (o.kind === 'pause' || o.kind === 'resume') await post(`/admin/subscriptions/${id}/${o.kind}`, { reason: 'property' }, adminHeaders);
  else if (o.kind === 'consentTrial') await post(`/api/v1/subscriptions/${id}/consents`, { kind: 'TRIAL_CONVERSION' });
  else if (o.kind === 'price') {
    await post(`/api/v1/subscriptions/${id}/price-change`, { amount: o.amount });
    if (o.consent) await post(`/api/v1/subscriptions/${id}/consents`, { kind: 'PRICE_INCREASE' });
  } else {
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: 1 });
    // The next charge is declined: an operator's charge now when this one is due or past due, else the next renewal
    // or retry of any subscription; later passes retry it (and recover it, or cancel it when the retries run out).
    await post(`/admin/subscriptions/${id}/charge`, { reason: 'property' }, adminHeaders);
  }
}

/** What the test itself computes: the MRR and count of the subscriptions counting now, from their public shape. */
async function expectedNow(ids: string[]): Promise<{ mrr: number; subscriptions: number }> {
  let mrr = 0;
  let subscriptions = 0;
  for (const id of ids) {
    const s = (await getSubscription(running.app, id)) as unknown as { status: string; amount: number; interval: { unit: IntervalUnit; count: number } };
    const value = subscriptionMrr({ status: s.status, amount: s.amount, intervalUnit: s.interval.unit, intervalCount: s.interval.count });
    if (s.status === 'ACTIVE' || s.status === 'PAST_DUE') subscriptions += 1;
    mrr += value;
  }
  return { mrr, subscriptions };
}

async function checkReport(now: Date, ids: string[]): Promise<void> {
  const url = `/admin/reports/mrr?from=${monthOf(START)}&to=${monthOf(now)}`;
  const response = await running.app.inject({ method: 'GET', url, headers: adminHeaders });
  expect(response.statusCode, response.body).toBe(200);
  const months = (response.json() as { months: MrrMonth[] }).months;
  months.forEach((m, i) => {
    expect(m.endingMrr, m.month).toBe(m.startingMrr + m.new + m.expansion + m.reactivation - m.contraction - m.churn);
    if (i > 0) {
      expect(m.startingMrr, m.month).toBe(months[i - 1]!.endingMrr);
      expect(m.startingSubscriptions, m.month).toBe(months[i - 1]!.endingSubscriptions);
    }
  });
  const last = months.at(-1)!;
  const expected = await expectedNow(ids);
  expect({ mrr: last.endingMrr, subscriptions: last.endingSubscriptions }, `at ${now.toISOString()}`).toEqual(expected);
}

describe('MRR report: a property over random histories', () => {
  it('every month adds up and chains on, and the MRR now is the sum over the subscriptions counting now', async () => {
    // Twenty random histories of up to twelve steps through the public routes: 10–25 s on a quiet 2-core machine, over
    // 30 s on a loaded one; only the suite's safety net bounds it.
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 12 }), async (steps) => {
        await truncateAll(running.app.db);
        await running.app.inject({ method: 'POST', url: '/sandbox/_control/reset' });
        const ids: string[] = [];
        let now = START;
        await setClock(running.app, now);
        const seen = new Set<string>();
        for (const s of steps) {
          const previous = now;
          now = new Date(now.getTime() + s.hours * HOUR);
          if (s.toMonthStart) {
            const local = new Date(now.getTime() + 9 * HOUR);
            now = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth() + 1, 1) - 9 * HOUR);
          }
          await setClock(running.app, now);
          await runPass(running.app);
          await apply(s.op, ids);
          await checkReport(now, ids);
          // Each movement of this step is dated by the service's clock within it (now; a cancel at period end at the
          // period's end, which this step's pass reached): a writer that left changedAt stale would date it earlier.
          const movements = (await running.app.db.mrrMovement.findMany()).filter((m) => !seen.has(m.id));
          for (const m of movements) {
            seen.add(m.id);
            expect(m.at.getTime(), `${m.kind} ${m.statusBefore}→${m.statusAfter}`).toBeGreaterThan(previous.getTime());
            expect(m.at.getTime(), `${m.kind} ${m.statusBefore}→${m.statusAfter}`).toBeLessThanOrEqual(now.getTime());
          }
        }
      }),
      replay(20),
    );
  });
});
