// The portal's cancel and keep (docs/api.md "Subscription lifecycle"), through createPortalActions on the running app
// and the sandbox over HTTP, on the simulated clock: what a cancel does by status, that no charge or retry is sent
// after it, that cancelling twice acts once, the undo, whose subscription it is (404), and the audit's actor.
import { beforeEach, describe, expect, it } from 'vitest';
import { apiHeaders } from '../../helpers/app.ts';
import { getSubscription, paymentsOf, runPass, setClock, subscribe } from '../../helpers/billing.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { auditOf, customer, DAY, eventsOf, kst, portalOf } from './portal-helpers.ts';

const running = useRunningApp({ CLOCK: 'simulated' });
const START = kst('2030-03-01T10:00:00');
beforeEach(() => setClock(running.app, START));

const charges = async () =>
  (await sandboxLedger(running.app)).filter((entry) => entry.type === 'CHARGE' && !(entry as { verification?: boolean }).verification);

describe('cancel in the portal', () => {
  it('ACTIVE: runs to the end of its period, then the charging pass ends it and charges nothing more; twice acts once', async () => {
    const id = await subscribe(running.app, { userId: 'ana', amount: 9900 });
    const portal = portalOf(running.app);
    expect(await charges()).toHaveLength(1);

    const canceled = await portal.cancel(customer('ana'), id, { reason: '너무 비싸요' });
    expect(canceled).toMatchObject({ id, status: 'ACTIVE', cancelAtPeriodEnd: true, cancelReason: 'CANCELED_BY_CUSTOMER' });
    // The events by id: their public sequence is numbered by the dispatcher in the background, whenever it runs.
    const eventIds = async () => (await eventsOf(running.app, id)).map((event) => event.id);
    const eventsAfterFirst = await eventIds();
    const again = await portal.cancel(customer('ana'), id, {});
    expect(again).toEqual(canceled);
    expect(await eventIds()).toEqual(eventsAfterFirst);
    const audit = (await auditOf(running.app, 'subscription', id)).filter((entry) => entry.action === 'subscription.cancel_by_customer');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'customer:ana',
      reason: '너무 비싸요',
      after: expect.objectContaining({ portalSessionId: 'portal-session-of-ana' }),
    });

    await setClock(running.app, new Date(new Date(canceled.currentPeriodEnd).getTime() + 3600_000));
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 0 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'CANCELED_BY_CUSTOMER', nextChargeAt: null });
    expect((await eventsOf(running.app, id)).at(-1)).toMatchObject({ type: 'subscription.canceled' });
    await setClock(running.app, new Date(new Date(canceled.currentPeriodEnd).getTime() + 40 * DAY));
    await runPass(running.app);
    expect(await charges()).toHaveLength(1);
  });

  it('TRIALING: ends at trialEnd and is never charged, even with a conversion consent', async () => {
    const id = await subscribe(running.app, { userId: 'ben', amount: 9900, trialDays: 14 });
    const portal = portalOf(running.app);
    await portal.consent(customer('ben'), id, 'TRIAL_CONVERSION');
    const canceled = await portal.cancel(customer('ben'), id, {});
    expect(canceled).toMatchObject({ status: 'TRIALING', cancelAtPeriodEnd: true });
    expect(canceled.currentPeriodEnd).toBe(canceled.trialEnd);

    await setClock(running.app, new Date(canceled.trialEnd!));
    await runPass(running.app);
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'CANCELED', cancelReason: 'CANCELED_BY_CUSTOMER' });
    await setClock(running.app, new Date(new Date(canceled.trialEnd!).getTime() + 40 * DAY));
    await runPass(running.app);
    // A trial's registration only verifies the card; nothing is ever charged.
    expect(await charges()).toEqual([]);
  });

  it('PAST_DUE: canceled now, and no retry is sent after', async () => {
    const id = await subscribe(running.app, { userId: 'cho', amount: 9900 });
    await setClock(running.app, kst('2030-04-01T10:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline' });
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    const pastDue = await getSubscription(running.app, id);
    expect(pastDue).toMatchObject({ status: 'PAST_DUE' });
    expect(pastDue.nextChargeAt).not.toBeNull();

    const canceled = await portalOf(running.app).cancel(customer('cho'), id, {});
    expect(canceled).toMatchObject({
      status: 'CANCELED',
      cancelReason: 'CANCELED_BY_CUSTOMER',
      nextChargeAt: null,
      canceledAt: kst('2030-04-01T10:00:00').toISOString(),
    });
    expect(canceled.billingKey.status).toBe('REVOKED');
    const sent = (await sandboxLedger(running.app)).length;
    await setClock(running.app, kst('2030-04-10T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    expect(await sandboxLedger(running.app)).toHaveLength(sent);
    expect((await paymentsOf(running.app, id)).filter((p) => p.status === 'SUCCEEDED')).toHaveLength(1);
  });

  it('PAUSED: canceled now', async () => {
    const id = await subscribe(running.app, { userId: 'dan', amount: 9900 });
    const paused = await running.app.inject({
      method: 'POST',
      url: `/admin/subscriptions/${id}/pause`,
      headers: { authorization: `Bearer ${running.app.config.adminTokens[0]}` },
      payload: { reason: 'customer asked by phone' },
    });
    expect(paused.statusCode, paused.body).toBe(200);
    expect(await portalOf(running.app).cancel(customer('dan'), id, {})).toMatchObject({ status: 'CANCELED', cancelReason: 'CANCELED_BY_CUSTOMER' });
  });
});

describe('keep in the portal', () => {
  it('undoes a cancellation scheduled for the period end: the next period is charged; without one it is 409', async () => {
    const id = await subscribe(running.app, { userId: 'eve', amount: 9900 });
    const portal = portalOf(running.app);
    await expect(portal.keep(customer('eve'), id)).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
    await portal.cancel(customer('eve'), id, {});
    const kept = await portal.keep(customer('eve'), id);
    expect(kept).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: false });
    expect(kept.cancelReason).toBeUndefined();
    const keepAudit = (await auditOf(running.app, 'subscription', id)).find((entry) => entry.action === 'subscription.keep');
    expect(keepAudit).toMatchObject({ actor: 'customer:eve', after: expect.objectContaining({ portalSessionId: 'portal-session-of-eve' }) });

    await setClock(running.app, kst('2030-04-01T10:00:00'));
    expect(await runPass(running.app)).toMatchObject({ succeeded: 1 });
    expect(await charges()).toHaveLength(2);
    await expect(portal.keep(customer('eve'), id)).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
  });

  it('after the period ended there is nothing left to keep (409)', async () => {
    const id = await subscribe(running.app, { userId: 'fay', amount: 9900 });
    const portal = portalOf(running.app);
    await portal.cancel(customer('fay'), id, {});
    await setClock(running.app, kst('2030-04-01T10:00:00'));
    await runPass(running.app);
    await expect(portal.keep(customer('fay'), id)).rejects.toMatchObject({ statusCode: 409, code: 'STATE_CONFLICT' });
  });
});

describe('whose subscription it is', () => {
  it("user A acting on user B's subscription, or on an id that does not exist, is the same 404, and changes nothing", async () => {
    const bs = await subscribe(running.app, { userId: 'user-b', amount: 9900 });
    await subscribe(running.app, { userId: 'user-a', amount: 9900 });
    const portal = portalOf(running.app);
    const a = customer('user-a');
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const id of [bs, unknown, 'not-a-uuid']) {
      const attempts = [
        () => portal.cancel(a, id, {}),
        () => portal.keep(a, id),
        () => portal.withdrawalOffer('user-a', id),
        () => portal.withdraw(a, id),
        () => portal.consent(a, id, 'PRICE_INCREASE'),
        () => portal.decline(a, id),
      ];
      for (const attempt of attempts) await expect(attempt()).rejects.toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: 'Subscription not found' });
    }
    expect(await getSubscription(running.app, bs)).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: false });
    expect((await portal.subscriptionsOf('user-a')).map((s) => s.userId)).toEqual(['user-a']);
    expect((await portal.paymentsOf('user-a', 24)).every((p) => p.subscriptionId !== bs)).toBe(true);
  });

  it('lists current subscriptions first, then the CANCELED; and the latest payments with refunds, newest first', async () => {
    const old = await subscribe(running.app, { userId: 'gus', amount: 5000 });
    await setClock(running.app, kst('2030-03-02T10:00:00'));
    const current = await subscribe(running.app, { userId: 'gus', amount: 7000 });
    await setClock(running.app, kst('2030-03-03T10:00:00'));
    const newest = await subscribe(running.app, { userId: 'gus', amount: 9000 });
    await running.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${newest}/cancel`, headers: apiHeaders, payload: {} });
    const portal = portalOf(running.app);
    expect((await portal.subscriptionsOf('gus')).map((s) => s.id)).toEqual([current, old, newest]);
    const payments = await portal.paymentsOf('gus', 2);
    expect(payments.map((p) => p.amount)).toEqual([9000, 7000]);
    expect(payments[0]).toHaveProperty('refunds');
  });
});
