// The stored reconciliation items (settlement_items; migration 20261124211000_settlement_line_status). Matching every
// line on each read cost about a second at 1,000,000 payments; the items are therefore stored, and rewritten by the one
// matching statement (match-settlement.ts reconciliationItemsSql) whenever what they were computed from may have moved:
// - an import rewrites, in its own transaction, the items of its lines, of the cancel lines it may re-pair, of the
//   MISSING items its lines may now match, and of every payment and refund inside its coverage;
// - a change of the ledger that may move an item is queued (settlement_item_refreshes) by the triggers on payments and
//   payment_attempts, in the transaction of the change; `refreshQueued` rewrites what is queued, and every read of the
//   items calls it first.
// Invariant: the stored items plus what is queued equal what reconciliationItemsSql answers now; a test proves it after
// every kind of change (test/modules/reconciliation/stored-items.test.ts).
//
// Refreshes are serialized (a transaction-level advisory lock), and each one reads the ledger after taking it: a
// refresh that waited for another (or for an import) then sees what that one committed.
import { sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { coveredSql, reconciliationItemsSql } from './match-settlement.ts';

type Tx = Prisma.TransactionClient;

/** What to match again: lines (by id), payments (their lines, their MISSING approval and refunds), a new coverage. */
export interface RefreshScope {
  lineIds?: string[];
  paymentIds?: string[];
  /** An import's coverage as instants [from, to): every payment and refund inside it is a MISSING candidate. */
  coverage?: { from: Date; to: Date };
}

const COLUMNS =
  '"id", "lineId", "source", "status", "reasons", "type", "transactionId", "orderId", "amount", "tradedAt", "tradeDate", "paymentId", "ourAmount", "ourStatus", "importId", "finish"';

/**
 * The whole reach of a change: the lines given, the cancel lines sharing a transactionId with a given cancel line (the
 * k-th line of an amount pairs with the k-th refund), the lines that name a given payment or one of its attempts (by
 * transactionId or orderId) or whose stored item points at it; and the payments given, plus those whose MISSING item a
 * given line may now match.
 */
const REACH_SQL = `
  WITH given AS (SELECT l."id", l."type", l."transactionId", l."orderId" FROM "settlement_lines" l WHERE l."id" = ANY($1::uuid[])),
  keys AS (
    SELECT p."transactionId", p."orderId" FROM "payments" p WHERE p."id" = ANY($2::uuid[])
    UNION SELECT a."transactionId", a."orderId" FROM "payment_attempts" a WHERE a."paymentId" = ANY($2::uuid[])
  ),
  lines AS (
    SELECT g."id" FROM given g
    UNION SELECT o."id" FROM given g JOIN "settlement_lines" o ON o."transactionId" = g."transactionId" AND o."type" = 'CANCEL' WHERE g."type" = 'CANCEL'
    UNION SELECT l."id" FROM keys k JOIN "settlement_lines" l ON l."transactionId" = k."transactionId"
    UNION SELECT l."id" FROM keys k JOIN "settlement_lines" l ON l."orderId" = k."orderId"
    UNION SELECT i."id" FROM "settlement_items" i WHERE i."source" = 'STATEMENT' AND i."paymentId" = ANY($2::uuid[])
  ),
  payments AS (
    SELECT unnest($2::uuid[]) AS "id"
    UNION SELECT i."paymentId" FROM "settlement_items" i JOIN given g ON g."transactionId" = i."transactionId" WHERE i."source" = 'LEDGER'
    UNION SELECT i."paymentId" FROM "settlement_items" i JOIN given g ON g."orderId" = i."orderId" WHERE i."source" = 'LEDGER'
  )
  SELECT (SELECT coalesce(array_agg("id"), '{}') FROM lines) AS "lineIds", (SELECT coalesce(array_agg("id"), '{}') FROM payments) AS "paymentIds"`;

/** Rewrites the items of a scope (in the caller's transaction): matched again, upserted, and the stale ones deleted. */
export async function refreshItems(tx: Tx, scope: RefreshScope): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('settlement_items'))`;
  const [reach] = await tx.$queryRawUnsafe<Array<{ lineIds: string[]; paymentIds: string[] }>>(REACH_SQL, scope.lineIds ?? [], scope.paymentIds ?? []);
  const lineIds = reach?.lineIds ?? [];
  const paymentIds = reach?.paymentIds ?? [];
  if (lineIds.length === 0 && paymentIds.length === 0 && !scope.coverage) return;
  // A payment or refund is a MISSING candidate when it is one of the payments reached (inside any coverage) or lies
  // inside the new coverage; the OR of an id list and a time range reads two indexes (a bitmap OR), not the payments.
  const inCoverage = (at: string) => (scope.coverage ? `(${at} >= $3::timestamptz AND ${at} < $4::timestamptz)` : 'false');
  const missing = (d: string, at: string) => `(p."id" = ANY($2::uuid[]) OR ${inCoverage(at)}) AND (${coveredSql(d)} OR ${inCoverage(at)})`;
  const ledgerScope = `i."source" = 'LEDGER' AND (i."paymentId" = ANY($2::uuid[]) OR ${inCoverage('i."tradedAt"')})`;
  await tx.$executeRawUnsafe(
    `WITH computed AS MATERIALIZED (${reconciliationItemsSql({ lines: 'l."id" = ANY($1::uuid[])', missing })}),
     stale AS (
       DELETE FROM "settlement_items" i
        WHERE (i."id" = ANY($1::uuid[]) OR (${ledgerScope})) AND NOT EXISTS (SELECT 1 FROM computed c WHERE c."id" = i."id")
     )
     INSERT INTO "settlement_items" (${COLUMNS})
     SELECT c."id", CASE WHEN c."source" = 'STATEMENT' THEN c."id" END, c."source", c."status", c."reasons", c."type", c."transactionId", c."orderId",
            c."amount", c."tradedAt", c."tradeDate", c."paymentId", c."ourAmount", c."ourStatus", c."importId", c."finish"
       FROM computed c
     ON CONFLICT ("id") DO UPDATE SET
       "lineId" = EXCLUDED."lineId", "source" = EXCLUDED."source", "status" = EXCLUDED."status", "reasons" = EXCLUDED."reasons",
       "type" = EXCLUDED."type", "transactionId" = EXCLUDED."transactionId", "orderId" = EXCLUDED."orderId", "amount" = EXCLUDED."amount",
       "tradedAt" = EXCLUDED."tradedAt", "tradeDate" = EXCLUDED."tradeDate", "paymentId" = EXCLUDED."paymentId", "ourAmount" = EXCLUDED."ourAmount",
       "ourStatus" = EXCLUDED."ourStatus", "importId" = EXCLUDED."importId", "finish" = EXCLUDED."finish"`,
    lineIds,
    paymentIds,
    ...(scope.coverage ? [scope.coverage.from, scope.coverage.to] : []),
  );
}

/**
 * Rewrites the items of what the triggers queued, and empties the queue, in one transaction (a failure leaves the queue
 * as it was). Costs one indexed read when nothing is queued: every read of the items calls it first.
 */
export async function refreshQueued(db: Db): Promise<void> {
  const [queued] = await sqlQuery<{ any: boolean }>(db, 'SELECT EXISTS (SELECT 1 FROM "settlement_item_refreshes") AS "any"', []);
  if (!queued?.any) return;
  await db.$transaction(
    async (tx) => {
      // The lock first: rows queued by a change that commits while this refresh waits are taken, and read, after it.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('settlement_items'))`;
      const taken = await tx.$queryRaw<Array<{ paymentId: string | null; lineId: string | null }>>`
        DELETE FROM "settlement_item_refreshes" RETURNING "paymentId", "lineId"`;
      if (taken.length === 0) return;
      const ids = (key: 'paymentId' | 'lineId') => [...new Set(taken.map((r) => r[key]).filter((id): id is string => id !== null))];
      await refreshItems(tx, { lineIds: ids('lineId'), paymentIds: ids('paymentId') });
    },
    { maxWait: 10_000, timeout: 120_000 },
  );
}
