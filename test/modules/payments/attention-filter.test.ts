// GET /admin/payments?needsAttention=false lists the payments no operator needs to look at, including those that
// never had an attention reason (before, the filter negated a comparison with a NULL reason and left them all out).
import { describe, expect, it } from 'vitest';
import { REFUND_OUTCOME_UNKNOWN } from '../../../src/modules/ledger/payment.state.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';
import { adminHeaders } from '../../helpers/billing.ts';
import { useRunningApp } from '../../helpers/database.ts';

const running = useRunningApp();

async function list(query: string): Promise<string[]> {
  const response = await running.app.inject({ method: 'GET', url: `/admin/payments?${query}&limit=100`, headers: adminHeaders });
  expect(response.statusCode).toBe(200);
  return (response.json() as { items: Array<{ id: string }> }).items.map((item) => item.id).sort();
}

describe('the admin payment list’s needsAttention filter', () => {
  it('splits the payments in two: =true those waiting for an operator, =false all the others', async () => {
    const { db } = running.app;
    const subscription = await createSubscription(db);
    const plain = await createPayment(db, { subscriptionId: subscription.id, cycle: 1, status: 'SUCCEEDED', dueAt: new Date() });
    const failed = await createPayment(db, { subscriptionId: subscription.id, cycle: 2, status: 'FAILED', dueAt: new Date() });
    const unknown = await createPayment(db, { subscriptionId: subscription.id, cycle: 3, status: 'UNKNOWN', dueAt: new Date() });
    const refundUnknown = await createPayment(db, {
      subscriptionId: subscription.id,
      cycle: 4,
      status: 'SUCCEEDED',
      attentionReason: REFUND_OUTCOME_UNKNOWN,
      dueAt: new Date(),
    });
    expect(await list('needsAttention=true')).toEqual([unknown.id, refundUnknown.id].sort());
    expect(await list('needsAttention=false')).toEqual([plain.id, failed.id].sort());
  });
});
