// The Idempotency-Key scope is the route and the canonical (lower-case) resource id: the same key on
// /admin/payments/<ID>/cancel with the id in upper case replays the first refund and refunds nothing more.
// (Regression test for issue #12 defect 1, when the scope was the raw URL.)
import { describe, expect, it } from 'vitest';
import { useRunningApp } from '../../helpers/database.ts';
import { sandboxLedger } from '../../helpers/checkout.ts';
import { adminHeaders, paymentsOf, subscribe } from '../../helpers/billing.ts';

const running = useRunningApp();

describe('Idempotency-Key scope', () => {
  it('the same key on the same payment spelled in upper case replays the first refund and refunds nothing more', async () => {
    const id = await subscribe(running.app, {});
    const [payment] = await paymentsOf(running.app, id);
    const refund = (paymentId: string) =>
      running.app.inject({
        method: 'POST',
        url: `/admin/payments/${paymentId}/cancel`,
        headers: { ...adminHeaders, 'idempotency-key': 'refund-once' },
        payload: { amount: 1000, reason: 'partial refund' },
      });
    const first = await refund(payment!.id);
    expect(first.statusCode, first.body).toBe(200);
    const again = await refund(payment!.id.toUpperCase());
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await sandboxLedger(running.app)).filter((e) => e.type === 'CANCEL')).toHaveLength(1);
  });
});
