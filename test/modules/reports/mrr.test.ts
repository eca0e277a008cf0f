// A subscription's MRR: the TypeScript function the tests and reports use against the SQL function that dates every
// movement (subscription_mrr, in the migration), on the migrated database; and the movements ledger refuses edits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sqlQuery } from '../../../src/db/prisma.ts';
import { type MrrTerms, subscriptionMrr } from '../../../src/modules/reports/mrr.ts';
import { createSubscription } from '../../factories/index.ts';
import { useTestDatabase } from '../../helpers/database.ts';

const database = useTestDatabase();

const STATUSES = ['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED', 'CANCELED'] as const;
const UNITS = ['day', 'week', 'month', 'year'] as const;

async function sqlMrr(terms: MrrTerms[]): Promise<number[]> {
  const rows = await sqlQuery<{ mrr: number }>(
    database.db,
    // bigint comes back from node-postgres as a string; a float8 holds every MRR exactly (under 2^53).
    `SELECT "subscription_mrr"(t.s::"SubscriptionStatus", t.a, t.u::"IntervalUnit", t.c)::float8 AS "mrr"
       FROM unnest($1::text[], $2::int[], $3::text[], $4::int[]) WITH ORDINALITY AS t(s, a, u, c, i) ORDER BY t.i`,
    [terms.map((t) => t.status), terms.map((t) => t.amount), terms.map((t) => t.intervalUnit), terms.map((t) => t.intervalCount)],
  );
  return rows.map((row) => row.mrr);
}

describe('subscription MRR', () => {
  it('follows the contract: per month, rounded half up per subscription, only while ACTIVE or PAST_DUE', () => {
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 9900, intervalUnit: 'month', intervalCount: 1 })).toBe(9900);
    expect(subscriptionMrr({ status: 'PAST_DUE', amount: 9900, intervalUnit: 'month', intervalCount: 2 })).toBe(4950);
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 3, intervalUnit: 'month', intervalCount: 2 })).toBe(2); // 1.5 → 2
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 18, intervalUnit: 'year', intervalCount: 1 })).toBe(2); // 1.5 → 2
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 120000, intervalUnit: 'year', intervalCount: 1 })).toBe(10000);
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 9900, intervalUnit: 'week', intervalCount: 1 })).toBe(42900);
    expect(subscriptionMrr({ status: 'ACTIVE', amount: 1000, intervalUnit: 'day', intervalCount: 1 })).toBe(30417); // 30416.67
    for (const status of ['TRIALING', 'PAUSED', 'CANCELED']) {
      expect(subscriptionMrr({ status, amount: 9900, intervalUnit: 'month', intervalCount: 1 })).toBe(0);
    }
  });

  it('the TypeScript function and the database’s subscription_mrr agree on every status, unit, count and amount', async () => {
    const terms = fc.record({
      status: fc.constantFrom(...STATUSES),
      amount: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100_000_000 }), fc.integer({ min: 1, max: 2_147_483_647 })),
      intervalUnit: fc.constantFrom(...UNITS),
      intervalCount: fc.integer({ min: 1, max: 36 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(terms, { minLength: 1, maxLength: 200 }), async (batch) => {
        expect(await sqlMrr(batch)).toEqual(batch.map(subscriptionMrr));
      }),
      { numRuns: 25 },
    );
  });

  it('a daily subscription of the largest amount the API takes has its MRR over 2^31 recorded, not refused', async () => {
    const { db } = database;
    const terms = { status: 'ACTIVE' as const, amount: 2_147_483_647, intervalUnit: 'day' as const, intervalCount: 1 };
    expect(await sqlMrr([terms])).toEqual([subscriptionMrr(terms)]);
    const sub = await createSubscription(db, { amount: terms.amount, intervalUnit: 'day', intervalCount: 1 });
    const [movement] = await db.mrrMovement.findMany({ where: { subscriptionId: sub.id } });
    expect(movement).toMatchObject({ kind: 'NEW', mrrAfter: BigInt(subscriptionMrr(terms)) });
    expect(subscriptionMrr(terms)).toBeGreaterThan(2 ** 31);
  });

  it('mrr_movements are immutable: the database refuses to change or delete one', async () => {
    const { db } = database;
    const sub = await createSubscription(db);
    const [movement] = await db.mrrMovement.findMany({ where: { subscriptionId: sub.id } });
    expect(movement).toMatchObject({ kind: 'NEW', mrrBefore: 0n, mrrAfter: 9900n, delta: 9900n, method: 'CARD' });
    await expect(db.mrrMovement.update({ where: { id: movement!.id }, data: { delta: 1n } })).rejects.toThrow(/immutable/);
    await expect(db.mrrMovement.delete({ where: { id: movement!.id } })).rejects.toThrow(/immutable/);
    expect(await db.mrrMovement.count()).toBe(1);
  });
});
