// An issueKeyOnly CARD registration completes when issue-key answers the 100-unit verification amount instead of the
// registration's amount: that echo is no mismatch. (Regression test for issue #12 defect 8.)
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { createRegistration, decideWindow, follow, sandboxLedger } from '../../helpers/checkout.ts';
import { getSubscription } from '../../helpers/billing.ts';

const running = useRunningApp();

describe('issueKeyOnly registration', () => {
  it('completes when issue-key answers the verification amount, and charges nothing', async () => {
    const registration = await createRegistration(running.app, { userId: 'key-only', method: 'CARD', amount: 9900, orderName: 'Plan', issueKeyOnly: true });
    const window = await decideWindow(running.app, registration.window);
    const response = await follow(running.app, window.redirectUrl, { json: true });
    expect(response.statusCode, response.body).toBe(200);
    const { subscriptionId } = response.json() as { subscriptionId: string };
    expect(await getSubscription(running.app, subscriptionId)).toMatchObject({ status: 'ACTIVE', amount: 9900 });
    const ledger = await sandboxLedger(running.app);
    expect(ledger.map((e) => [e.type, e.amount])).toEqual([
      ['CHARGE', 100],
      ['CANCEL', 100],
    ]);
  });
});
