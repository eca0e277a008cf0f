// "A payment needs an operator" is rendered twice from one list: the Prisma filter of the lists (needsAttention=true
// and =false, null-safe) and the row predicate of the public shape. On the migrated database, over every combination of the
// columns it reads, the filter, its negation and the predicate agree.
import { describe, expect, it } from 'vitest';
import { CHARGED_AFTER_CANCEL, needsAttentionWhere, needsNoAttentionWhere, paymentNeedsAttention } from '../../../src/modules/ledger/payment.queries.ts';
import { REFUND_OUTCOME_UNKNOWN, SETTLEMENT_MISMATCH } from '../../../src/modules/ledger/payment.state.ts';
import { createPayment, createSubscription } from '../../factories/index.ts';
import { useTestDatabase } from '../../helpers/database.ts';

const database = useTestDatabase();

const STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELED'] as const;
const REASONS = [null, REFUND_OUTCOME_UNKNOWN, CHARGED_AFTER_CANCEL, SETTLEMENT_MISMATCH, 'LEASE_EXPIRED'];

describe('payment needs attention: the list filter and the shape’s flag agree', () => {
  it('over every status and attention reason', async () => {
    const { db } = database;
    const subscription = await createSubscription(db);
    let cycle = 1;
    for (const status of STATUSES)
      for (const attentionReason of REASONS) {
        await createPayment(db, { subscriptionId: subscription.id, cycle: cycle++, status, attentionReason, dueAt: new Date() });
      }
    const rows = await db.payment.findMany({ select: { id: true, status: true, attentionReason: true } });
    const flagged = rows
      .filter(paymentNeedsAttention)
      .map((row) => row.id)
      .sort();
    const listed = (await db.payment.findMany({ where: needsAttentionWhere, select: { id: true } })).map((row) => row.id).sort();
    const notListed = (await db.payment.findMany({ where: needsNoAttentionWhere, select: { id: true } })).map((row) => row.id).sort();
    expect(rows).toHaveLength(STATUSES.length * REASONS.length);
    // Every UNKNOWN payment, a refund's unknown outcome on each other status, the one charge after a cancel and the one
    // FAILED payment a settlement file showed approved.
    expect(flagged).toHaveLength(REASONS.length + (STATUSES.length - 1) + 2);
    expect(listed).toEqual(flagged);
    expect(notListed).toEqual(
      rows
        .map((row) => row.id)
        .filter((id) => !flagged.includes(id))
        .sort(),
    );
  });
});
