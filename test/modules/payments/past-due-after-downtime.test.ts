// Invariant 10 (docs/architecture.md) holds for past-due subscriptions too: after a month of downtime a PAST_DUE subscription is charged once,
// and the next charge is at the boundary after now (not its old retry, then the next period in the following tick).
// (Regression test for issue #12 defect 4.)
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { getSubscription, runPass, setClock, subscribe } from '../../helpers/billing.ts';

const kst = (local: string) => new Date(`${local}+09:00`);
const running = useRunningApp({ CLOCK: 'simulated' });

describe('a past-due subscription after downtime', () => {
  it('is charged once, not for its old retry and then again for the period that contains now', async () => {
    await setClock(running.app, kst('2027-01-10T09:00:00'));
    const id = await subscribe(running.app, {});
    await setClock(running.app, kst('2027-02-10T09:00:00'));
    await sandboxFault(running.app, { operation: 'BILLING_CONFIRM', kind: 'decline' });
    expect(await runPass(running.app)).toMatchObject({ declined: 1 });
    expect(await getSubscription(running.app, id)).toMatchObject({ status: 'PAST_DUE', nextChargeAt: kst('2027-02-11T09:00:00').toISOString() });

    // The service is down from Feb 10 to Mar 15: the retry of Feb 11 and the Mar 10 period were both missed.
    await setClock(running.app, kst('2027-03-15T12:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 1 });
    await setClock(running.app, kst('2027-03-15T12:01:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 0, succeeded: 0 });

    const charges = (await sandboxLedger(running.app)).filter((e) => e.type === 'CHARGE');
    expect(charges).toHaveLength(2); // the registration's and one recurring charge
    expect(await getSubscription(running.app, id)).toMatchObject({
      status: 'ACTIVE',
      currentPeriodStart: kst('2027-03-10T09:00:00').toISOString(),
      nextChargeAt: kst('2027-04-10T09:00:00').toISOString(),
    });
    await setClock(running.app, kst('2027-04-10T09:00:00'));
    expect(await runPass(running.app)).toMatchObject({ claimed: 1, succeeded: 1 });
  });
});
