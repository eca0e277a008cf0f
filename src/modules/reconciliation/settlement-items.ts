// The stored reconciliation items (settlement_items; migration 20261124211000_settlement_line_status). Matching every
// line on each read cost about a second at 1,000,000 payments; the items an operator must see (every status but
// MATCHED, and the lines that finish an outcome: storedSql) are therefore stored, and a line without a stored item is
// MATCHED. They are rewritten by the one matching statement (match-settlement.ts reconciliationItemsSql) whenever what
// they were computed from may have moved:
// - an import rewrites, in its own transaction, the items of its lines, of the cancel lines it may re-pair, of the
//   MISSING items its lines may now match, and of every payment and refund inside its coverage;
// - a change of the ledger that may move an item is queued (settlement_item_refreshes) by the triggers on payments and
//   payment_attempts, in the transaction of the change; `refreshQueued` rewrites what is queued, and every read of the
//   items calls it first.
// Invariant: once what is queued is rewritten, the stored items are exactly the items of reconciliationItemsSql that
// storedSql names, and every other line's item is MATCHED; a test proves it through the reads after every kind of change (test/modules/reconciliation/stored-items.test.ts).
//
// Refreshes are serialized (a transaction-level advisory lock), and each one reads the ledger after taking it. The
// triggers try the same lock in shared mode and queue without looking when a refresh holds it, so a change that
// commits while an import is between its matching and its commit is queued, never lost (the migration says why).
// A read refreshes only when the lock is free: during an import it answers what is stored.
import { sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { coveredSql, reconciliationItemsSql } from './match-settlement.ts';

type Tx = Prisma.TransactionClient;

/**
 * What to match again: lines (by id, or every line of an import), payments (their lines, their MISSING approval and
 * refunds), a new coverage.
 */
export interface RefreshScope {
  lineIds?: string[];
  /** Every line of this import (its own lines: an import whose lines were all new), without sending their ids. */
  importId?: string;
  paymentIds?: string[];
  /** An import's coverage as instants [from, to) and its gateway: every payment and refund of that gateway inside it is a MISSING candidate. */
  coverage?: { from: Date; to: Date; gateway: 'DANAL' | 'TOSS' };
}

const COLUMNS =
  '"id", "lineId", "source", "status", "reasons", "type", "transactionId", "orderId", "amount", "tradedAt", "tradeDate", "paymentId", "ourAmount", "ourStatus", "importId", "finish", "gateway"';

/**
 * The items stored (an item row aliased `alias`): every item that is not MATCHED (what an operator must see), and the MATCHED lines that
 * finish an outcome we do not know (what an import acts on, finish-settlement.ts). A line without a stored item is
 * MATCHED, and finishes nothing.
 */
export const storedSql = (alias: string) => `(${alias}."status" <> 'MATCHED' OR ${alias}."finish" IS NOT NULL)`;

/** The lines given ($1 their ids, $3 an import's id), as a condition on settlement_lines aliased `l`. */
const GIVEN = `(l."id" = ANY($1::uuid[]) OR l."importId" = $3::uuid)`;

/**
 * The rest of a change's reach: the cancel lines sharing a transactionId with a given cancel line (the k-th line of an
 * amount pairs with the k-th refund), the lines that name a given payment or one of its attempts (by transactionId or
 * orderId: every way a line finds its attempt or refund) or whose stored item points at it; and the payments given,
 * plus those whose MISSING item a given line may now match. $1, $2, $3: line ids, payment ids, import id.
 */
const REACH_SQL = `
  WITH given AS MATERIALIZED (SELECT l."id", l."type", l."transactionId", l."orderId" FROM "settlement_lines" l WHERE ${GIVEN}),
  keys AS (
    SELECT p."transactionId", p."orderId" FROM "payments" p WHERE p."id" = ANY($2::uuid[])
    UNION SELECT a."transactionId", a."orderId" FROM "payment_attempts" a WHERE a."paymentId" = ANY($2::uuid[])
  ),
  lines AS (
    SELECT o."id" FROM given g JOIN "settlement_lines" o ON o."transactionId" = g."transactionId" AND o."type" = 'CANCEL' WHERE g."type" = 'CANCEL'
    UNION SELECT l."id" FROM keys k JOIN "settlement_lines" l ON l."transactionId" = k."transactionId"
    UNION SELECT l."id" FROM keys k JOIN "settlement_lines" l ON l."orderId" = k."orderId"
    UNION SELECT i."id" FROM "settlement_items" i WHERE i."source" = 'STATEMENT' AND i."paymentId" = ANY($2::uuid[])
  ),
  payments AS (
    SELECT unnest($2::uuid[]) AS "id"
    UNION SELECT i."paymentId" FROM "settlement_items" i JOIN given g ON g."transactionId" = i."transactionId" WHERE i."source" = 'LEDGER'
    UNION SELECT i."paymentId" FROM "settlement_items" i JOIN given g ON g."orderId" = i."orderId" WHERE i."source" = 'LEDGER'
  )
  SELECT (SELECT coalesce(array_agg(x."id"), '{}') FROM lines x WHERE NOT EXISTS (SELECT 1 FROM given g WHERE g."id" = x."id")) AS "lineIds",
         (SELECT coalesce(array_agg("id"), '{}') FROM payments) AS "paymentIds"`;

/**
 * Rewrites the items of a scope (in the caller's transaction): every item in reach is matched again; those storedSql
 * names are stored, and the other stored items in reach are deleted. Only those are stored (about 1 % of the lines of a
 * real file): storing every line's item made an import of 100,000 lines write 100,000 more rows, about twice its time
 * (docs/benchmarks.md "Settlement import"); the reads compute a MATCHED line's item (its payment, our amount and status) for the few they show.
 */
export async function refreshItems(tx: Tx, scope: RefreshScope): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('settlement_items'))`;
  const given = [scope.lineIds ?? [], scope.importId ?? null] as const;
  const [reach] = await tx.$queryRawUnsafe<Array<{ lineIds: string[]; paymentIds: string[] }>>(REACH_SQL, given[0], scope.paymentIds ?? [], given[1]);
  const extraLines = reach?.lineIds ?? [];
  const paymentIds = reach?.paymentIds ?? [];
  // $1 given line ids, $2 extra line ids, $3 import id, $4 payment ids, $5 and $6 the new coverage, $7 its gateway.
  const values = [given[0], extraLines, given[1], paymentIds, ...(scope.coverage ? [scope.coverage.from, scope.coverage.to, scope.coverage.gateway] : [])];
  const inCoverage = (at: string, gateway: string) =>
    scope.coverage ? `(${at} >= $5::timestamptz AND ${at} < $6::timestamptz AND ${gateway} = $7::"PaymentGateway")` : 'false';
  const lines = (alias: string) => `(${alias}."id" = ANY($1::uuid[]) OR ${alias}."id" = ANY($2::uuid[]) OR ${alias}."importId" = $3::uuid)`;
  // A payment or refund is a MISSING candidate when it is one of the payments reached (inside any coverage) or lies
  // inside the new coverage; the OR of an id list and a time range reads two indexes (a bitmap OR), not the payments.
  const missing = (d: string, at: string, gateway: string) =>
    `(p."id" = ANY($4::uuid[]) OR ${inCoverage(at, gateway)}) AND (${coveredSql(d, gateway)} OR ${inCoverage(at, gateway)})`;
  // Deleted, then written (no upsert): refreshes are serialized, so nothing else writes these rows in between.
  await tx.$executeRawUnsafe(
    `DELETE FROM "settlement_items" i
      WHERE (i."source" = 'STATEMENT' AND ${lines('i')})
         OR (i."source" = 'LEDGER' AND (i."paymentId" = ANY($4::uuid[]) OR ${inCoverage('i."tradedAt"', 'i."gateway"')}))`,
    ...values,
  );
  await tx.$executeRawUnsafe(
    `INSERT INTO "settlement_items" (${COLUMNS})
     SELECT c."id", CASE WHEN c."source" = 'STATEMENT' THEN c."id" END, c."source", c."status", c."reasons", c."type", c."transactionId", c."orderId",
            c."amount", c."tradedAt", c."tradeDate", c."paymentId", c."ourAmount", c."ourStatus", c."importId", c."finish",
            c."gateway"::"PaymentGateway"
       FROM (${reconciliationItemsSql({ lines: lines('l'), missing })}) c
      WHERE ${storedSql('c')}`,
    ...values,
  );
}

/** Queued rows taken per transaction: the migration queues every line imported before it, and one transaction for all
 * of them could outlast its timeout (then nothing would ever be drained). */
const DRAIN_BATCH = 5000;

/**
 * Rewrites the items of what the triggers queued, and empties the queue, a batch per transaction (a failure leaves its
 * batch queued). Costs one indexed read when nothing is queued: every read of the items calls it first.
 */
export async function refreshQueued(db: Db): Promise<void> {
  for (;;) {
    const [queued] = await sqlQuery<{ any: boolean }>(db, 'SELECT EXISTS (SELECT 1 FROM "settlement_item_refreshes") AS "any"', []);
    if (!queued?.any) return;
    const taken = await db.$transaction(
      async (tx) => {
        // The lock first, without waiting: while an import (or another read's refresh) holds it, this read answers
        // what is stored and leaves the queue to the next read, rather than hold a pooled connection (shared with the
        // charging pass) for as long as a large import takes. What a change queues during that time stays queued.
        const [locked] = await tx.$queryRaw<Array<{ locked: boolean }>>`SELECT pg_try_advisory_xact_lock(hashtext('settlement_items')) AS "locked"`;
        if (!locked?.locked) return 0;
        const rows = await tx.$queryRaw<Array<{ paymentId: string | null; lineId: string | null }>>`
          DELETE FROM "settlement_item_refreshes"
           WHERE "id" IN (SELECT "id" FROM "settlement_item_refreshes" ORDER BY "id" LIMIT ${DRAIN_BATCH})
          RETURNING "paymentId", "lineId"`;
        const ids = (key: 'paymentId' | 'lineId') => [...new Set(rows.map((r) => r[key]).filter((id): id is string => id !== null))];
        if (rows.length > 0) await refreshItems(tx, { lineIds: ids('lineId'), paymentIds: ids('paymentId') });
        return rows.length;
      },
      { maxWait: 10_000, timeout: 120_000 },
    );
    if (taken === 0) return;
  }
}
