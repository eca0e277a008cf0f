// Consent in the portal (docs/api.md "Subscription lifecycle"; docs/architecture.md, invariant 13), through
// createPortalActions on the running app and the sandbox over HTTP, on the simulated clock: agreeing to a price
// increase makes the next charge the new price at the sandbox; declining keeps the old one and drops the pending
// amount (subscription.updated carries it); a decision already taken is 409 CONSENT_ALREADY_DECIDED; a trial's
// conversion consent counts at its end.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { getSubscription, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxLedger } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { auditOf, customer, DAY, eventsOf, kst, portalOf } from './portal-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
beforeEach(() => setClock(running.app, kst('2030-03-01T10:00:00')));

const charges = async () =>
  (await sandboxLedger(running.app)).filter((entry) => entry.type === 'CHARGE' && !(entry as { verification?: boolean }).verification);

/** A CARD subscription of 9,900 with an increase to 12,900 asked for on March 6th, waiting for consent. */
async function withIncrease(userId: string) {
  const id = await subscribe(running.app, { userId, amount: 9900 });
  await setClock(running.app, kst('2030-03-06T10:00:00'));
  const asked = await running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/price-change`, headers: apiHeaders, payload: { amount: 12900 } });
  expect(asked.json()).toMatchObject({ amount: 9900, pendingAmount: 12900, pendingAmountReason: 'CONSENT_REQUIRED' });
  await setClock(running.app, kst('2030-03-10T10:00:00'));
  return id;
}

describe('price increase in the portal', () => {
  it('agree: a PORTAL consent is recorded and the next charge at the sandbox is the new price; deciding again is 409', async () => {
    const id = await withIncrease('ana');
    const portal = portalOf(running.app);
    const agreed = await portal.consent(customer('ana'), id, 'PRICE_INCREASE');
    expect(agreed.consents).toEqual([
      expect.objectContaining({ kind: 'PRICE_INCREASE', channel: 'PORTAL', obtainedAt: kst('2030-03-10T10:00:00').toISOString() }),
    ]);
    const [audit] = (await auditOf(running.app, 'subscription', id)).filter((entry) => entry.action === 'subscription.consent');
    expect(audit).toMatchObject({
      actor: 'customer:ana',
      reason: 'PRICE_INCREASE',
      after: expect.objectContaining({ portalSessionId: 'portal-session-of-ana' }),
    });

    await expect(portal.consent(customer('ana'), id, 'PRICE_INCREASE')).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });
    await expect(portal.decline(customer('ana'), id)).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });

    await setClock(running.app, kst('2030-04-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await charges()).map((entry) => entry.amount)).toEqual([9900, 12900]);
    expect(await getSubscription(running.app, id)).toMatchObject({ amount: 12900 });
  });

  it('decline: the pending amount is dropped (subscription.updated carries it), the next charge is the old price; again is 409', async () => {
    const id = await withIncrease('ben');
    const portal = portalOf(running.app);
    const declined = await portal.decline(customer('ben'), id);
    expect(declined).toMatchObject({ amount: 9900 });
    expect(declined.pendingAmount).toBeUndefined();
    expect((await eventsOf(running.app, id)).at(-1)).toMatchObject({ type: 'subscription.updated', data: { previousAttributes: { pendingAmount: 12900 } } });
    const [audit] = (await auditOf(running.app, 'subscription', id)).filter((entry) => entry.action === 'subscription.decline_price_increase');
    expect(audit).toMatchObject({ actor: 'customer:ben', after: expect.objectContaining({ portalSessionId: 'portal-session-of-ben' }) });

    await expect(portal.decline(customer('ben'), id)).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });
    await expect(portal.consent(customer('ben'), id, 'PRICE_INCREASE')).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });

    await setClock(running.app, kst('2030-04-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await charges()).map((entry) => entry.amount)).toEqual([9900, 9900]);
  });
});

describe('trial conversion in the portal', () => {
  it('within 30 days of its end: agreed once (PORTAL), then charged at trialEnd; agreeing again is 409', async () => {
    const id = await subscribe(running.app, { userId: 'cho', amount: 9900, trialDays: 14 });
    const portal = portalOf(running.app);
    const agreed = await portal.consent(customer('cho'), id, 'TRIAL_CONVERSION');
    expect(agreed.consents).toEqual([expect.objectContaining({ kind: 'TRIAL_CONVERSION', channel: 'PORTAL' })]);
    await expect(portal.consent(customer('cho'), id, 'TRIAL_CONVERSION')).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });
    // Nothing to decline on a trial: no price increase is pending.
    await expect(portal.decline(customer('cho'), id)).rejects.toMatchObject({ statusCode: 409, code: 'CONSENT_ALREADY_DECIDED' });

    await setClock(running.app, new Date(agreed.trialEnd!));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await charges()).map((entry) => entry.amount)).toEqual([9900]);
  });

  it('a 60-day trial: too early to agree (409 STATE_CONFLICT, it would not count), open once 30 days remain', async () => {
    const id = await subscribe(running.app, { userId: 'dan', amount: 9900, trialDays: 60 });
    const portal = portalOf(running.app);
    await expect(portal.consent(customer('dan'), id, 'TRIAL_CONVERSION')).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    const { trialEnd } = await getSubscription(running.app, id);
    await setClock(running.app, new Date(new Date(trialEnd!).getTime() - 30 * DAY));
    expect((await portal.consent(customer('dan'), id, 'TRIAL_CONVERSION')).consents).toHaveLength(1);
  });
});

describe('what the portal offers (consentsWaiting) is what the consent actions take', () => {
  it('a trial 31 days from its end: nothing offered (the action refuses); 29 days: offered (taken); agreed: gone (refused)', async () => {
    const id = await subscribe(running.app, { userId: 'eli', amount: 9900, trialDays: 31 });
    const portal = portalOf(running.app);
    const { trialEnd } = await getSubscription(running.app, id);
    await setClock(running.app, new Date(new Date(trialEnd!).getTime() - 31 * DAY));
    expect((await portal.consentsWaiting('eli')).get(id)).toEqual({ TRIAL_CONVERSION: 'TOO_EARLY' });
    await expect(portal.consent(customer('eli'), id, 'TRIAL_CONVERSION')).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    await setClock(running.app, new Date(new Date(trialEnd!).getTime() - 29 * DAY));
    expect((await portal.consentsWaiting('eli')).get(id)).toEqual({ TRIAL_CONVERSION: 'WAITING' });
    await portal.consent(customer('eli'), id, 'TRIAL_CONVERSION');
    expect((await portal.consentsWaiting('eli')).get(id)).toBeUndefined();
    await expect(portal.consent(customer('eli'), id, 'TRIAL_CONVERSION')).rejects.toMatchObject({ code: 'CONSENT_ALREADY_DECIDED' });
  });

  it('a price increase: offered until agreed to (the increase still pending is then not offered again); a trial the customer cancelled: none', async () => {
    const id = await withIncrease('fin');
    const portal = portalOf(running.app);
    expect((await portal.consentsWaiting('fin')).get(id)).toEqual({ PRICE_INCREASE: 'WAITING' });
    const agreed = await portal.consent(customer('fin'), id, 'PRICE_INCREASE');
    expect(agreed.pendingAmount).toBe(12900);
    expect((await portal.consentsWaiting('fin')).get(id)).toBeUndefined();
    await expect(portal.decline(customer('fin'), id)).rejects.toMatchObject({ code: 'CONSENT_ALREADY_DECIDED' });

    const trial = await subscribe(running.app, { userId: 'fin', amount: 9900, trialDays: 14 });
    await portal.cancel(customer('fin'), trial, {});
    expect((await portal.consentsWaiting('fin')).get(trial)).toBeUndefined();
    await expect(portal.consent(customer('fin'), trial, 'TRIAL_CONVERSION')).rejects.toMatchObject({ code: 'CONSENT_ALREADY_DECIDED' });
  });
});

describe('a price increase whose next charge is more than 30 days away', () => {
  it('cannot be agreed to yet (the consent would not count at that charge: 409 STATE_CONFLICT), may be declined; opens 30 days before', async () => {
    // Paid on March 1st: the next charge is April 1st, 31 days later; the increase is asked for at once.
    const id = await subscribe(running.app, { userId: 'gil', amount: 9900 });
    const asked = await running.app.inject({
      method: 'POST',
      url: `/api/v1/subscriptions/${id}/price-change`,
      headers: apiHeaders,
      payload: { amount: 12900 },
    });
    const { nextChargeAt } = asked.json() as { nextChargeAt: string };
    expect(new Date(nextChargeAt).getTime() - kst('2030-03-01T10:00:00').getTime()).toBeGreaterThan(30 * DAY);
    const portal = portalOf(running.app);
    expect((await portal.consentsWaiting('gil')).get(id)).toEqual({ PRICE_INCREASE: 'TOO_EARLY' });
    await expect(portal.consent(customer('gil'), id, 'PRICE_INCREASE')).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    expect((await getSubscription(running.app, id)).consents).toEqual([]);

    await setClock(running.app, new Date(new Date(nextChargeAt).getTime() - 30 * DAY));
    expect((await portal.consentsWaiting('gil')).get(id)).toEqual({ PRICE_INCREASE: 'WAITING' });
    await portal.consent(customer('gil'), id, 'PRICE_INCREASE');
    // Charged when due, 30 × 24 hours after the consent: it counts, the new amount is charged (after the first 9,900).
    await setClock(running.app, new Date(nextChargeAt));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect((await charges()).map((entry) => entry.amount)).toEqual([9900, 12900]);
  });

  it('declined before its window opens: the old amount goes on', async () => {
    const id = await subscribe(running.app, { userId: 'hye', amount: 9900 });
    await running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/price-change`, headers: apiHeaders, payload: { amount: 12900 } });
    const declined = await portalOf(running.app).decline(customer('hye'), id);
    expect(declined.pendingAmount).toBeUndefined();
    expect(declined.amount).toBe(9900);
  });
});
