// A form submitted twice while its first submit is still acting (a double click on "Refund" while the gateway is
// slow): the second waits for the first and answers like it, a redirect to the payment, instead of an error page
// saying the action is in progress when it in fact succeeded; the gateway is asked once.
import { describe, expect, it } from 'vitest';
import { adminHeaders, paymentsOf, subscribe } from '../../helpers/billing.ts';
import { sandboxFault, sandboxLedger } from '../../helpers/checkout.ts';
import { TEST_ADMIN_TOKEN } from '../../helpers/app.ts';
import { consoleCookie, formFields } from '../../helpers/console.ts';
import { useRunningApp } from '../../helpers/database.ts';
import { overlapped } from '../../helpers/locks.ts';

const running = useRunningApp();

describe('a console form submitted twice at once', () => {
  it('refunds once, and both submits answer the redirect to the payment', async () => {
    const id = await subscribe(running.app, { amount: 9_900 });
    const [payment] = await paymentsOf(running.app, id);
    const cookie = await consoleCookie(running.app, TEST_ADMIN_TOKEN);
    const page = await running.app.inject({ method: 'GET', url: `/console/payments/${payment!.id}`, headers: { cookie } });
    const action = `/console/payments/${payment!.id}/refund`;
    const form = formFields(page.body, action);
    expect(form.idempotencyKey).not.toBe('');
    // The refund's call stays out for a second: the second submit arrives while the first is acting.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'latency', latencyMs: 1_000, count: 1 });

    const submit = () =>
      running.app.inject({
        method: 'POST',
        url: action,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ ...form, amount: '', reason: 'customer asked twice' }).toString(),
      });
    // The second submit starts once the first holds its idempotency record (a lock on the table).
    const answers = await overlapped(running.databaseUrl, 'idempotency_records', 2, () => [submit(), submit()]);

    expect(answers.map((a) => [a.statusCode, a.headers.location])).toEqual([
      [303, `/console/payments/${payment!.id}?done=refund`],
      [303, `/console/payments/${payment!.id}?done=refund`],
    ]);
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([9_900]);
    const shown = await running.app.inject({ method: 'GET', url: `/admin/payments/${payment!.id}`, headers: adminHeaders });
    expect(shown.json()).toMatchObject({ status: 'CANCELED', canceledAmount: 9_900 });
  });
});
