// Issue #14: trials and price increases under docs/architecture.md, invariant 13 (consent before more money), told through the public
// routes with the simulated clock and the mounted sandbox's ledger as the record of money moved.
import { describe, expect, it } from 'vitest';
import { apiHeaders } from '../helpers/app.ts';
import { useRunningApp } from '../helpers/database.ts';
import { sandboxLedger } from '../helpers/checkout.ts';
import { getSubscription, runPass, setClock, subscribe } from '../helpers/billing.ts';
import { waitFor } from '../helpers/service.ts';
import type { PublicEvent } from '../../src/modules/events/events.render.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const DAY = 86_400_000;

const running = useRunningApp({ CLOCK: 'simulated' });

/** Recurring charges only (the registration's own payment is the window's). */
const charges = async () => (await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE' && e.operation === 'BILLING_CONFIRM').map((e) => e.amount);
const post = (url: string, payload: object) => running.app.inject({ method: 'POST', url, headers: apiHeaders, payload });
const consent = (id: string, kind: 'TRIAL_CONVERSION' | 'PRICE_INCREASE', obtainedAt?: Date) =>
  post(`/api/v1/subscriptions/${id}/consents`, {
    kind,
    ...(obtainedAt ? { obtainedAt: obtainedAt.toISOString() } : {}),
    channel: 'email',
    reference: 'ticket-1',
  });

async function eventsOf(id: string): Promise<PublicEvent[]> {
  await waitFor('events numbered', async () => {
    await running.app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: apiHeaders });
    return (await running.app.db.event.count({ where: { sequence: null } })) === 0;
  });
  const response = await running.app.inject({ method: 'GET', url: '/api/v1/events?limit=100', headers: apiHeaders });
  return (response.json() as { items: PublicEvent[] }).items.filter((e) => e.data.object.id === id);
}

describe('trials (CARD)', () => {
  it('a 14-day trial with a consent recorded in time converts at its end, then renews on its anchor', async () => {
    const start = kst('2030-03-01T10:00:00');
    await setClock(running.app, start);
    const id = await subscribe(running.app, { amount: 9900, trialDays: 14 });
    const trialEnd = kst('2030-03-15T10:00:00');
    const trial = await getSubscription(running.app, id);
    expect(trial).toMatchObject({ status: 'TRIALING', trialEnd: trialEnd.toISOString(), nextChargeAt: trialEnd.toISOString(), consents: [] });
    expect(await charges()).toEqual([]); // the window only verified the card
    // Shorter than 30 days: the merchant is told at once.
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.trial_will_end']);

    await setClock(running.app, new Date(trialEnd.getTime() - 3 * DAY));
    const recorded = await consent(id, 'TRIAL_CONVERSION');
    expect(recorded.statusCode).toBe(201);
    expect(recorded.json()).toMatchObject({ kind: 'TRIAL_CONVERSION', channel: 'email', obtainedAt: new Date(trialEnd.getTime() - 3 * DAY).toISOString() });
    expect((await getSubscription(running.app, id)).consents).toHaveLength(1);
    // Not charged before its end.
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });

    await setClock(running.app, trialEnd);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    const converted = await getSubscription(running.app, id);
    expect(converted).toMatchObject({ status: 'ACTIVE', currentPeriodStart: trialEnd.toISOString(), nextChargeAt: kst('2030-04-15T10:00:00').toISOString() });
    await setClock(running.app, kst('2030-04-15T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await charges()).toEqual([9900, 9900]);
    // The trial's notice was emitted once only.
    expect((await eventsOf(id)).filter((e) => e.type === 'subscription.trial_will_end')).toHaveLength(1);
  });

  it('a 14-day trial without a consent is cancelled at its end (CONSENT_MISSING), never charged', async () => {
    await setClock(running.app, kst('2030-03-01T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900, trialDays: 14 });
    await setClock(running.app, kst('2030-03-15T10:00:00'));
    // Operators see the trial's end in the due backlog.
    expect((await running.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^billing_due_subscriptions 1$/m);
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 0, skipped: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'CANCELED',
      cancelReason: 'CONSENT_MISSING',
      nextChargeAt: null,
      billingKey: { status: 'REVOKED' },
    });
    expect(await charges()).toEqual([]);
    const canceled = (await eventsOf(id)).filter((e) => e.type === 'subscription.canceled');
    expect(canceled).toHaveLength(1);
    expect(canceled[0]!.data.previousAttributes).toMatchObject({ status: 'TRIALING' });
  });

  it('a 60-day trial: told when the 30-day window opens; a consent recorded before it does not count', async () => {
    const start = kst('2030-03-01T10:00:00');
    await setClock(running.app, start);
    const id = await subscribe(running.app, { amount: 9900, trialDays: 60 });
    const trialEnd = kst('2030-04-30T10:00:00');
    expect((await getSubscription(running.app, id)).trialEnd).toBe(trialEnd.toISOString());
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['subscription.created']);
    // The customer says yes on day 10: 50 days before the trial's end, too early to count.
    await setClock(running.app, new Date(start.getTime() + 10 * DAY));
    expect((await consent(id, 'TRIAL_CONVERSION')).statusCode).toBe(201);
    // A consent is recorded, so no notice is due when the window opens.
    await setClock(running.app, new Date(trialEnd.getTime() - 30 * DAY));
    await runPass(running.app);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['subscription.created']);
    await setClock(running.app, trialEnd);
    expect(await runPass(running.app)).toMatchObject({ succeeded: 0 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'CONSENT_MISSING' });
    expect(await charges()).toEqual([]);
  });

  it('a 60-day trial without a consent gets its notice when the window opens, once', async () => {
    const start = kst('2030-03-01T10:00:00');
    await setClock(running.app, start);
    const id = await subscribe(running.app, { amount: 9900, trialDays: 60 });
    await setClock(running.app, new Date(kst('2030-04-30T10:00:00').getTime() - 30 * DAY - 1000));
    await runPass(running.app);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['subscription.created']);
    await setClock(running.app, new Date(kst('2030-04-30T10:00:00').getTime() - 30 * DAY));
    await runPass(running.app);
    await runPass(running.app);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.trial_will_end']);
  });

  it('refuses trials for MOBILE and with issueKeyOnly false, and out-of-range lengths', async () => {
    for (const body of [
      { method: 'MOBILE', itemCode: 'ITEM01', trialDays: 7 },
      { method: 'CARD', trialDays: 7, issueKeyOnly: false },
      { method: 'CARD', trialDays: 0 },
      { method: 'CARD', trialDays: 366 },
    ]) {
      const response = await post('/api/v1/registrations', { userId: 'u', amount: 9900, orderName: 'Plan', ...body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('price changes', () => {
  it('an increase waits for a PRICE_INCREASE consent recorded after it was asked for, then applies', async () => {
    await setClock(running.app, kst('2030-03-01T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    // A consent obtained before the change was asked for does not count for it.
    await setClock(running.app, kst('2030-03-05T10:00:00'));
    expect((await consent(id, 'PRICE_INCREASE')).statusCode).toBe(201);
    await setClock(running.app, kst('2030-03-06T10:00:00'));
    const asked = await post(`/api/v1/subscriptions/${id}/price-change`, { amount: 12900 });
    expect(asked.statusCode).toBe(200);
    expect(asked.json()).toMatchObject({ amount: 9900, pendingAmount: 12900, pendingAmountReason: 'CONSENT_REQUIRED' });

    await setClock(running.app, kst('2030-04-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await charges()).toEqual([9900]);

    await setClock(running.app, kst('2030-04-20T10:00:00'));
    expect((await consent(id, 'PRICE_INCREASE')).statusCode).toBe(201);
    await setClock(running.app, kst('2030-05-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await charges()).toEqual([9900, 12900]);
    const after = await getSubscription(running.app, id);
    expect(after).toMatchObject({ amount: 12900 });
    expect(after).not.toHaveProperty('pendingAmount');
    // The next month, the same amount: no new consent is needed.
    await setClock(running.app, kst('2030-06-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await charges()).toEqual([9900, 12900, 12900]);
  });

  it('a decrease applies from the next charge; MOBILE is 422; CANCELED is 409; consents may not be in the future', async () => {
    await setClock(running.app, kst('2030-03-01T10:00:00'));
    const card = await subscribe(running.app, { amount: 9900 });
    expect((await post(`/api/v1/subscriptions/${card}/price-change`, { amount: 7900 })).json()).toMatchObject({ amount: 7900 });
    await setClock(running.app, kst('2030-04-01T10:00:00'));
    await runPass(running.app);
    expect(await charges()).toEqual([7900]);

    const future = await consent(card, 'PRICE_INCREASE', new Date(kst('2030-04-01T10:00:00').getTime() + 60_000));
    expect(future.statusCode).toBe(400);
    const mobile = await subscribe(running.app, { userId: 'm', method: 'MOBILE', amount: 5500, itemCode: 'ITEM01' });
    const refused = await post(`/api/v1/subscriptions/${mobile}/price-change`, { amount: 6600 });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().code).toBe('MOBILE_AMOUNT_MISMATCH');
    await post(`/api/v1/subscriptions/${card}/cancel`, {});
    expect((await post(`/api/v1/subscriptions/${card}/price-change`, { amount: 1000 })).statusCode).toBe(409);
    expect((await consent(card, 'PRICE_INCREASE')).statusCode).toBe(409);
  });

  it('consents are immutable: the database refuses to change or remove one', async () => {
    await setClock(running.app, kst('2030-03-01T10:00:00'));
    const id = await subscribe(running.app, { amount: 9900 });
    const recorded = (await consent(id, 'PRICE_INCREASE')).json() as { id: string };
    await expect(running.app.db.consent.update({ where: { id: recorded.id }, data: { kind: 'TRIAL_CONVERSION' } })).rejects.toThrow(/immutable/);
    await expect(running.app.db.consent.delete({ where: { id: recorded.id } })).rejects.toThrow(/immutable/);
    expect(await running.app.db.auditEvent.count({ where: { entityId: id, action: 'subscription.consent' } })).toBe(1);
  });
});
