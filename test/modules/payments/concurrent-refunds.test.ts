// Concurrent refunds of one payment: a payment's attempts are numbered under a lock of its row, so operators
// refunding it at once never collide on an attempt number (a 500), the gateway is asked exactly once, and every
// other request answers a coded 409.
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxFault, sandboxHeld, sandboxLedger, sandboxRelease } from '../../helpers/checkout.ts';
import { waitFor } from '../../helpers/service.ts';
import { adminHeaders, paymentsOf, subscribe } from '../../helpers/billing.ts';
import { overlapped } from '../../helpers/locks.ts';

const running = useRunningApp();

const refund = (paymentId: string, key: string) =>
  running.app.inject({
    method: 'POST',
    url: `/admin/payments/${paymentId}/cancel`,
    headers: { ...adminHeaders, 'idempotency-key': key },
    payload: { reason: 'customer asked for a refund' },
  });

describe('concurrent full refunds of one payment', () => {
  it('one is sent and succeeds, the others answer 409 STATE_CONFLICT, none a 500', async () => {
    const id = await subscribe(running.app, { amount: 9_900 });
    const [payment] = await paymentsOf(running.app, id);
    // The winner's cancellation is held at the sandbox until the others have answered: they find it in flight.
    // Only the first is held: a second cancellation sent would go through and show in the ledger.
    await sandboxFault(running.app, { operation: 'CANCEL', kind: 'latency', until: 'released', count: 1 });

    let answered = 0;
    const answering = overlapped(running.databaseUrl, 'payment_attempts', 3, () =>
      ['refund-a', 'refund-b', 'refund-c'].map((key) => refund(payment!.id, key).finally(() => answered++)),
    );
    await sandboxHeld(running.app);
    await waitFor('the two others answered while the winner’s cancellation is out', async () => answered === 2);
    await sandboxRelease(running.app);
    const answers = await answering;

    const outcomes = answers.map((a) => `${a.statusCode} ${a.json().code ?? a.json().status}`).sort();
    expect(outcomes).toEqual(['200 CANCELED', '409 STATE_CONFLICT', '409 STATE_CONFLICT']);
    expect(answers.find((a) => a.statusCode === 200)!.json()).toMatchObject({ canceledAmount: 9_900 });
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL').map((e) => e.amount)).toEqual([9_900]);
    const shown = await running.app.inject({ method: 'GET', url: `/admin/payments/${payment!.id}`, headers: adminHeaders });
    const attempts = shown.json().attempts as Array<{ attemptNumber: number; operation: string; outcome: string }>;
    expect(attempts.filter((a) => a.operation === 'CANCEL').map((a) => [a.attemptNumber, a.outcome])).toEqual([[2, 'SUCCEEDED']]);
  });
});
