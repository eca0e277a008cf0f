// Matching settlement lines with the ledger (docs/reconciliation.md "Reconciling with the gateway"), one set-based statement for any set of lines:
// - an APPROVAL line belongs to our charge attempt with its transactionId (or the payment that a settlement already
//   resolved with it), else to the attempt with its orderId;
// - a CANCEL line to our refund (a CANCEL attempt) of the payment with that transactionId, the k-th line of an amount
//   to the k-th refund of that amount;
// - MATCHED, MISMATCHED with reasons AMOUNT, DATE (another Korea calendar day), METHOD, STATUS (the gateway approved or
//   cancelled what we hold as declined, failed or never sent), or UNMATCHED;
// - `finish`: what the line proves of an outcome we do not know (an UNKNOWN charge or refund of the same amount):
//   RESOLVE_PAYMENT or RESOLVE_REFUND (finish-settlement.ts applies it through the operators' own resolve). Its date
//   is then the line's, so DATE is not a reason for it.
// A line matches the payments of its own gateway only (its statement's: a Danal file, Toss's settlements API), and
// a Toss line's transactionId is Toss's paymentKey, which the Toss adapter records as the payment's transactionId.
// MISSING items are our succeeded payments (by approval time) and refunds through the gateway (by the time they were
// sent) whose Korea date lies inside the coverage of an import of their gateway and that no line of it matches; a refund made outside the gateway
// (external_refunds) is no attempt, so no line is expected for it and it is never MISSING. Korea dates are
// 'YYYY-MM-DD' text.
import { KOREA_ZONE } from '../../lib/calendar.ts';

/** The Korea calendar date of a timestamptz expression, as SQL. */
export const koreaDateSql = (instant: string) => `to_char(${instant} AT TIME ZONE '${KOREA_ZONE}', 'YYYY-MM-DD')`;

/**
 * A Korea date (text expression) inside the coverage of any import of a gateway (an expression of type
 * "PaymentGateway"); without one, of any import at all.
 */
export const coveredSql = (d: string, gateway?: string) =>
  `EXISTS (SELECT 1 FROM "settlement_imports" i WHERE ${gateway ? `i."gateway" = ${gateway} AND ` : ''}${d} BETWEEN i."coverageFrom" AND i."coverageTo")`;

export interface ItemsFilter {
  /** A condition on settlement_lines aliased `l`, e.g. `l."id" = ANY($1::uuid[])`. */
  lines: string;
  /**
   * Whether to add the MISSING ledger items, and which: a condition on their Korea date `d` (text), instant `at` and
   * gateway `gateway` (coveredSql for "inside the coverage of any import of their gateway"). Bound `at` too when the dates are known: a condition on `d` alone
   * is computed for every succeeded payment there is (a scan of payments), one on `at` reads an index.
   */
  missing?: (d: string, at: string, gateway: string) => string;
}

/**
 * The statement's lines (and, when asked, the ledger's missing items) as reconciliation items: `id, source, status,
 * reasons, type, transactionId, orderId, amount, tradedAt, tradeDate, paymentId, ourAmount, ourStatus, importId,
 * finish, gateway`. The statement's steps are named CTEs: its lines, each matched with our attempt, judged against our
 * payment, and its reasons.
 */
export function reconciliationItemsSql(filter: ItemsFilter): string {
  const statement = `${linesCte(filter.lines)},${MATCHED_CTE},${JUDGED_CTE},${STATEMENT_CTE}`;
  if (!filter.missing) return `WITH ${statement} ${ITEMS_SQL}`;
  return `WITH ${statement}
  ${ITEMS_SQL}
  UNION ALL
  ${missingPaymentsSql(filter.missing)}
  UNION ALL
  ${missingRefundsSql(filter.missing)}`;
}

/** `lines`: the statement's lines that `lines` (a condition on settlement_lines aliased `l`) selects. */
function linesCte(lines: string): string {
  return `
  lines AS (
    SELECT l."id", l."importId", l."transactionId", l."orderId", l."type"::text AS "type", l."amount", l."tradedAt", l."tradeDate",
           l."method"::text AS "method", l."gateway"
      FROM "settlement_lines" l WHERE ${lines}
  )`;
}

/** `matched`: each line with our attempt it belongs to (none: unmatched). */
const MATCHED_CTE = `
  matched AS (
    SELECT l.*, a."id" AS "attemptId", a."paymentId", a."amount" AS "ourAmount", a."status"::text AS "attemptStatus",
           coalesce(a."approvedAt", a."sentAt", a."createdAt") AS "attemptAt"
      FROM lines l
      -- The first of the three ways that finds an attempt, each its latest, of a payment of the line's gateway: COALESCE
      -- evaluates the next only when the one before found nothing, so a line usually costs one index probe, not three.
      LEFT JOIN LATERAL (SELECT COALESCE(
        (SELECT x."id" FROM "payment_attempts" x JOIN "payments" g ON g."id" = x."paymentId" AND g."gateway" = l."gateway"
          WHERE x."transactionId" = l."transactionId" AND x."operation" <> 'CANCEL' ORDER BY x."attemptNumber" DESC LIMIT 1),
        (SELECT x."id" FROM "payments" p JOIN "payment_attempts" x ON x."paymentId" = p."id" AND x."orderId" = p."orderId"
          WHERE p."transactionId" = l."transactionId" AND p."gateway" = l."gateway" AND x."operation" <> 'CANCEL' ORDER BY x."attemptNumber" DESC LIMIT 1),
        (SELECT x."id" FROM "payment_attempts" x JOIN "payments" g ON g."id" = x."paymentId" AND g."gateway" = l."gateway"
          WHERE x."orderId" = l."orderId" AND x."operation" <> 'CANCEL' ORDER BY x."attemptNumber" DESC LIMIT 1)) AS "id") found ON true
      LEFT JOIN "payment_attempts" a ON a."id" = found."id"
     WHERE l."type" = 'APPROVAL'
    UNION ALL
    SELECT l.*, r."id", r."paymentId", r."amount", r."status"::text, coalesce(r."sentAt", r."createdAt")
      FROM lines l
      LEFT JOIN LATERAL (${refundOfCancelLine('l')}) r ON true
     WHERE l."type" = 'CANCEL'
  )`;

/** `judged`: each matched line with our payment, the outcome it proves (`finish`), our time and a STATUS mismatch. */
const JUDGED_CTE = `
  judged AS (
    SELECT m.*, p."status"::text AS "ourStatus", p."method"::text AS "ourMethod",
           CASE WHEN m."type" = 'APPROVAL' AND p."status" = 'UNKNOWN' AND m."attemptStatus" = 'UNKNOWN' AND m."ourAmount" = m."amount" THEN 'RESOLVE_PAYMENT'
                WHEN m."type" = 'CANCEL' AND m."attemptStatus" = 'UNKNOWN' AND m."ourAmount" = m."amount" THEN 'RESOLVE_REFUND' END AS "finish",
           CASE WHEN m."type" = 'APPROVAL' AND p."transactionId" = m."transactionId" THEN p."approvedAt" ELSE m."attemptAt" END AS "ourAt",
           CASE WHEN m."type" = 'APPROVAL'
                THEN p."transactionId" IS DISTINCT FROM m."transactionId" AND (m."attemptStatus" IN ('DECLINED', 'NOT_SENT') OR p."status" = 'FAILED')
                ELSE m."attemptStatus" = 'DECLINED' END AS "statusMismatch"
      FROM matched m LEFT JOIN "payments" p ON p."id" = m."paymentId"
  )`;

/** `statement`: each line as an item, with its reasons. */
const STATEMENT_CTE = `
  statement AS (
    SELECT j."id", 'STATEMENT' AS "source", j."type", j."transactionId", j."orderId", j."amount", j."tradedAt", j."tradeDate", j."paymentId",
           j."ourAmount", j."ourStatus", j."importId", j."finish", j."gateway"::text AS "gateway",
           CASE WHEN j."attemptId" IS NULL THEN ARRAY[]::text[] ELSE array_remove(ARRAY[
             CASE WHEN j."ourAmount" <> j."amount" THEN 'AMOUNT' END,
             CASE WHEN j."finish" IS NULL AND ${koreaDateSql('j."ourAt"')} <> j."tradeDate" THEN 'DATE' END,
             CASE WHEN j."method" IS NOT NULL AND j."method" <> j."ourMethod" THEN 'METHOD' END,
             CASE WHEN j."statusMismatch" THEN 'STATUS' END], NULL) END AS "reasons",
           j."attemptId" IS NULL AS "unmatched"
      FROM judged j
  )`;

/** The statement's items with their status. */
const ITEMS_SQL = `SELECT s."id", s."source", CASE WHEN s."unmatched" THEN 'UNMATCHED' WHEN cardinality(s."reasons") = 0 THEN 'MATCHED' ELSE 'MISMATCHED' END AS "status",
         s."reasons", s."type", s."transactionId", s."orderId", s."amount", s."tradedAt", s."tradeDate", s."paymentId", s."ourAmount", s."ourStatus",
         s."importId", s."finish", s."gateway"
    FROM statement s`;

/**
 * Our succeeded payments that no APPROVAL line names, inside `missing`'s dates. A ledger item is MISSING when no line
 * names it, by transactionId or by orderId: two anti-joins, each on an index of settlement_lines (one with an OR
 * between them is a scan of the lines for every payment).
 */
function missingPaymentsSql(missing: NonNullable<ItemsFilter['missing']>): string {
  const payDate = koreaDateSql('p."approvedAt"');
  return `SELECT p."id", 'LEDGER', 'MISSING', ARRAY[]::text[], 'APPROVAL', p."transactionId", p."orderId", p."amount", p."approvedAt", ${payDate}, p."id",
         p."amount", p."status"::text, NULL::uuid, NULL, p."gateway"::text
    FROM "payments" p
   WHERE "counts_as_paid"(p."status") AND p."approvedAt" IS NOT NULL AND ${missing(payDate, 'p."approvedAt"', 'p."gateway"')}
     AND NOT EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."type" = 'APPROVAL' AND l."transactionId" = p."transactionId" AND l."gateway" = p."gateway")
     AND NOT EXISTS (SELECT 1 FROM "settlement_lines" l WHERE l."type" = 'APPROVAL' AND l."orderId" = p."orderId" AND l."gateway" = p."gateway")`;
}

/** Our refunds through the gateway that no CANCEL line pairs with, inside `missing`'s dates. */
function missingRefundsSql(missing: NonNullable<ItemsFilter['missing']>): string {
  const refundAt = 'coalesce(r."sentAt", r."createdAt")';
  const refundDate = koreaDateSql(refundAt);
  return `SELECT r."id", 'LEDGER', 'MISSING', ARRAY[]::text[], 'CANCEL', p."transactionId", r."orderId", r."amount", ${refundAt}, ${refundDate}, p."id",
         r."amount", p."status"::text, NULL::uuid, NULL, p."gateway"::text
    FROM "payment_attempts" r JOIN "payments" p ON p."id" = r."paymentId"
   WHERE r."operation" = 'CANCEL' AND r."status" = 'SUCCEEDED' AND ${missing(refundDate, refundAt, 'p."gateway"')}
     AND NOT EXISTS (SELECT 1 FROM "settlement_lines" l CROSS JOIN LATERAL (${refundOfCancelLine('l')}) m
                      WHERE l."type" = 'CANCEL' AND l."transactionId" = p."transactionId" AND l."gateway" = p."gateway" AND m."id" = r."id")`;
}

/**
 * The refund a CANCEL line (aliased `line`) belongs to: of the payment of its gateway with its transactionId, the k-th refund sent
 * (NOT_SENT ones never reached the gateway) for the k-th line of that amount, refunds of that amount first, and among
 * them those that may have moved money (succeeded, unknown, in flight) before those the gateway declined: a declined
 * refund refunded nothing, so it takes a line only when every other refund of that amount has one (the gateway then
 * cancelled what it answered declined: STATUS), and never the line of a refund that went through (which would then be
 * MISSING). The same pairing decides a line's match and whether a refund is MISSING.
 */
function refundOfCancelLine(line: string): string {
  return `SELECT r."id", r."paymentId", r."amount", r."status", r."sentAt", r."createdAt" FROM "payment_attempts" r
         WHERE r."paymentId" = (SELECT p."id" FROM "payments" p WHERE p."transactionId" = ${line}."transactionId" AND p."gateway" = ${line}."gateway"
                                 ORDER BY p."createdAt" LIMIT 1)
           AND r."operation" = 'CANCEL' AND r."status" <> 'NOT_SENT'
         ORDER BY (r."amount" = ${line}."amount") DESC, (r."status" <> 'DECLINED') DESC, r."attemptNumber"
        OFFSET (SELECT count(*) FROM "settlement_lines" o
                 WHERE o."type" = 'CANCEL' AND o."transactionId" = ${line}."transactionId" AND o."amount" = ${line}."amount" AND o."gateway" = ${line}."gateway"
                   AND (o."tradedAt", o."id") < (${line}."tradedAt", ${line}."id"))
         LIMIT 1`;
}

export interface ReconciliationRow {
  id: string;
  source: 'STATEMENT' | 'LEDGER';
  status: 'MATCHED' | 'MISMATCHED' | 'UNMATCHED' | 'MISSING';
  reasons: Array<'AMOUNT' | 'DATE' | 'METHOD' | 'STATUS'>;
  type: 'APPROVAL' | 'CANCEL';
  transactionId: string | null;
  orderId: string | null;
  amount: number;
  tradedAt: Date;
  tradeDate: string;
  paymentId: string | null;
  ourAmount: number | null;
  ourStatus: string | null;
  importId: string | null;
  finish: 'RESOLVE_PAYMENT' | 'RESOLVE_REFUND' | null;
  gateway: 'DANAL' | 'TOSS';
}

/** The public shape of an item (docs/reconciliation.md "Reconciling with the gateway"). */
export function serializeItem(row: ReconciliationRow) {
  return {
    id: row.id,
    source: row.source,
    status: row.status,
    reasons: row.reasons,
    type: row.type,
    transactionId: row.transactionId ?? undefined,
    orderId: row.orderId ?? undefined,
    amount: row.amount,
    tradedAt: new Date(row.tradedAt).toISOString(),
    tradeDate: row.tradeDate,
    paymentId: row.paymentId ?? undefined,
    ourAmount: row.ourAmount ?? undefined,
    ourStatus: row.ourStatus ?? undefined,
    importId: row.importId ?? undefined,
    gateway: row.gateway,
  };
}
