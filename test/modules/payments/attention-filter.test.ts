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

  it('keeps the filter on every page: a page’s cursor never replaces it (both were one OR of the query)', async () => {
    const { db } = running.app;
    const subscription = await createSubscription(db);
    const made = [];
    for (const [cycle, status, attentionReason] of [
      [1, 'SUCCEEDED', undefined],
      [2, 'UNKNOWN', undefined],
      [3, 'FAILED', undefined],
      [4, 'SUCCEEDED', REFUND_OUTCOME_UNKNOWN],
      [5, 'SUCCEEDED', undefined],
      [6, 'UNKNOWN', undefined],
    ] as const) {
      made.push(await createPayment(db, { subscriptionId: subscription.id, cycle, status, attentionReason, dueAt: new Date() }));
    }
    const paged = async (query: string) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const url = `/admin/payments?${query}&limit=1${cursor ? `&cursor=${cursor}` : ''}`;
        const page = (await running.app.inject({ method: 'GET', url, headers: adminHeaders })).json() as {
          items: Array<{ id: string }>;
          nextCursor: string | null;
        };
        ids.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor;
      } while (cursor && ids.length < 20);
      return ids.sort();
    };
    const waiting = [made[1]!.id, made[3]!.id, made[5]!.id].sort();
    expect(await paged('needsAttention=true')).toEqual(waiting);
    expect(await paged('needsAttention=false')).toEqual(
      made
        .map((p) => p.id)
        .filter((id) => !waiting.includes(id))
        .sort(),
    );
  });
});
