// The subscription predicates' SQL forms against their Prisma forms, on the migrated database: over every
// combination of the columns they read, each SQL form selects exactly the rows its Prisma form selects; and the claim's
// form is the due-claim partial index's own predicate (the planner can serve the claim from it).
import { describe, expect, it } from 'vitest';
import { sqlQuery } from '../../../src/db/prisma.ts';
import { LIVE } from '../../../src/modules/ledger/schedule.rules.ts';
import { dueClaimSql, dueSql, dueWhere } from '../../../src/modules/ledger/subscription.queries.ts';
import { leaseFreeSql, leaseFreeWhere } from '../../../src/modules/ledger/lease.queries.ts';
import { createSubscription } from '../../factories/index.ts';
import { useTestDatabase } from '../../helpers/database.ts';

const database = useTestDatabase();

const STATUSES = ['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED', 'CANCELED'] as const;
const now = new Date('2027-03-01T00:00:00Z');
const before = new Date(now.getTime() - 60_000);
const after = new Date(now.getTime() + 60_000);

/** One subscription for every combination of the columns the predicates read. */
async function seedGrid() {
  const { db } = database;
  for (const status of STATUSES)
    for (const needsAttention of [false, true])
      for (const nextChargeAt of [before, now, after, null])
        for (const leaseExpiresAt of [null, before, now, after]) {
          await createSubscription(db, {
            status,
            needsAttention,
            nextChargeAt,
            leaseOwner: leaseExpiresAt ? 'someone' : null,
            leaseExpiresAt,
            ...(status === 'TRIALING' ? { trialEnd: now } : {}),
            ...(status === 'CANCELED' ? { canceledAt: now } : {}),
            ...(status === 'PAUSED' ? { pausedAt: now } : {}),
          });
        }
}

const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id).sort();

describe('subscription predicates: SQL and Prisma forms select the same rows', () => {
  it('due (dueSql, dueClaimSql) and lease free (leaseFreeSql) agree with dueWhere and leaseFreeWhere', async () => {
    await seedGrid();
    const { db } = database;
    const prisma = ids(await db.subscription.findMany({ where: { ...dueWhere(now), ...leaseFreeWhere(now) }, select: { id: true } }));
    const sql = ids(
      await sqlQuery<{ id: string }>(
        db,
        `SELECT s."id" FROM "subscriptions" s WHERE ${dueSql('s.', '$1', '$2')} AND ${leaseFreeSql('s."leaseExpiresAt"', '$1')}`,
        [now, [...LIVE]],
      ),
    );
    const claim = ids(
      await sqlQuery<{ id: string }>(db, `SELECT "id" FROM "subscriptions" WHERE ${dueClaimSql('$1')} AND ${leaseFreeSql('"leaseExpiresAt"', '$1')}`, [now]),
    );
    // The grid has due and not-due rows of every kind, so an empty or full answer would be a wrong predicate.
    expect(prisma.length).toBe(LIVE.length * 2 * 2);
    expect(sql).toEqual(prisma);
    expect(claim).toEqual(prisma);
  });

  it('the claim’s due predicate is the due-claim index’s own: the planner serves it from subscriptions_due_claim_idx', async () => {
    await seedGrid();
    const { db } = database;
    const plan = await db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
      await tx.$executeRawUnsafe('SET LOCAL enable_bitmapscan = off');
      return tx.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
        `EXPLAIN SELECT "id" FROM "subscriptions" WHERE ${dueClaimSql(`'${now.toISOString()}'::timestamptz`)} ORDER BY "nextChargeAt" LIMIT 10`,
      );
    });
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('subscriptions_due_claim_idx');
  });
});
