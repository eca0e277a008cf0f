// Pause then resume while a charge that will be declined is in flight: the resumed schedule stands and the late
// decline schedules nothing (it once left the subscription due forever, claimed and skipped on every pass).
// (Regression test for issue #12 defect 12.)
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxHeld, sandboxRelease } from '../../helpers/checkout.ts';
import { adminHeaders, getSubscription, runPass, setClock, subscribe } from '../../helpers/billing.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated' });

describe('pause and resume while a charge is in flight', () => {
  it('a decline that lands after the resume leaves the resumed schedule alone', async () => {
    await setClock(running.app, kst('2027-01-10T09:00:00'));
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-02-10T09:00:00'));
    // The call is held at the sandbox until the pause and the resume are done: the decline lands after both.
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline', until: 'released' });
    const pass = runPass(running.app);
    await sandboxHeld(running.app);
    for (const action of ['pause', 'resume']) {
      const response = await running.app.inject({
        method: 'POST',
        url: `/admin/subscriptions/${id}/${action}`,
        headers: adminHeaders,
        payload: { reason: 'customer asked' },
      });
      expect(response.statusCode, response.body).toBe(200);
    }
    await sandboxRelease(running.app);
    expect(await pass).toMatchObject({ declined: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'ACTIVE', nextChargeAt: kst('2027-03-10T09:00:00').toISOString() });

    // Nothing is claimed until the resumed schedule's date, then it is charged.
    await setClock(running.app, kst('2027-02-11T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0 });
    await setClock(running.app, kst('2027-03-10T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 1 });
  });
});
