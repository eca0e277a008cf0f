// The reconciliation reads (docs/reconciliation.md "Reconciling with the gateway"): imports (newest first), the items of the statement and the ledger with
// their status (match-settlement.ts computes it; settlement-items.ts stores it and keeps it current), and the summary of a period in Korea dates.
import { DateTime } from 'luxon';
import { sqlParams, sqlQuery, type Db } from '../../db/prisma.ts';
import { toCsv } from '../../lib/csv.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { KOREA_ZONE } from '../../lib/calendar.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { afterCursor, decodeCursor, encodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { settlementActor } from './finish-settlement.ts';
import { koreaDate } from './settlement-fields.ts';
import { reconciliationItemsSql, serializeItem, type ReconciliationRow } from './match-settlement.ts';
import { refreshQueued } from './settlement-items.ts';

type ImportRow = Prisma.SettlementImportGetPayload<object>;
type Summary = { matched: number; mismatched: number; unmatched: number; missing: number };

/** 00:00 Korea time of a Korea date, and of the day after it (the end of a period that includes the date). */
export const instantOf = (date: string) => DateTime.fromISO(date, { zone: KOREA_ZONE }).toJSDate();
export const dayAfter = (date: string) => DateTime.fromISO(date, { zone: KOREA_ZONE }).plus({ days: 1 }).toJSDate();

/** Payments and refunds each import resolved, from the audit trail (their actor names the import). */
async function resolvedBy(db: Db, ids: string[]) {
  const groups = await db.auditEvent.groupBy({
    by: ['actor', 'action'],
    where: { actor: { in: ids.map(settlementActor) }, action: { in: ['payment.resolve_succeeded', 'payment.refund_resolve_succeeded'] } },
    _count: { _all: true },
  });
  const of = (id: string, action: string) => groups.find((g) => g.actor === settlementActor(id) && g.action === action)?._count._all ?? 0;
  return (id: string) => ({ payments: of(id, 'payment.resolve_succeeded'), refunds: of(id, 'payment.refund_resolve_succeeded') });
}

function serializeImport(row: ImportRow, resolved: { payments: number; refunds: number }) {
  return {
    id: row.id,
    filename: row.filename ?? undefined,
    sha256: row.sha256,
    gateway: row.gateway,
    encoding: row.encoding as 'UTF-8' | 'CP949' | 'API',
    rows: row.rows,
    newLines: row.newLines,
    duplicateLines: row.duplicateLines,
    coverage: { from: row.coverageFrom, to: row.coverageTo },
    summary: row.summary as Summary,
    resolved,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function presentImport(db: Db, row: ImportRow) {
  return serializeImport(row, (await resolvedBy(db, [row.id]))(row.id));
}

export async function getImport(db: Db, id: string) {
  const row = await db.settlementImport.findUnique({ where: { id } });
  if (!row) throw new NotFoundError('Settlement import');
  return presentImport(db, row);
}

export async function listImports(db: Db, filter: { limit: number; cursor?: string }) {
  const rows = await db.settlementImport.findMany({ where: afterCursor(decodeCursor(filter.cursor)), orderBy: PAGE_ORDER, take: filter.limit + 1 });
  const page = toPage(rows, filter.limit);
  const resolved = await resolvedBy(
    db,
    page.items.map((r) => r.id),
  );
  return { items: page.items.map((row) => serializeImport(row, resolved(row.id))), nextCursor: page.nextCursor };
}

export interface ItemFilter {
  from?: string;
  to?: string;
  /** One status, or several (the console's Needs attention asks for every status an operator must look at). */
  status?: ReconciliationRow['status'] | Array<ReconciliationRow['status']>;
  /** One gateway's statement lines and ledger items only. */
  gateway?: ReconciliationRow['gateway'];
  limit?: number;
  cursor?: string;
}

const STATUSES: Array<ReconciliationRow['status']> = ['MATCHED', 'MISMATCHED', 'UNMATCHED', 'MISSING'];
const CSV_COLUMNS = [
  'id',
  'source',
  'status',
  'reasons',
  'type',
  'transactionId',
  'orderId',
  'amount',
  'tradedAt',
  'tradeDate',
  'paymentId',
  'ourAmount',
  'ourStatus',
  'importId',
] as const;
/**
 * An item's columns as stored and as matched: what the CSV shows, whether a line finishes an outcome, and its gateway
 * (as text: stored it is the enum, matched it is text).
 */
const ITEM_COLUMNS = `${[...CSV_COLUMNS, 'finish'].map((c) => `"${c}"`).join(', ')}, "gateway"::text AS "gateway"`;

/**
 * A period of Korea dates (inclusive) on a `tradeDate` column, and a gateway when asked (`alias`: the row's table, for
 * its "gateway" column). Every item lies inside some import's coverage.
 */
function withinPeriod(filter: Pick<ItemFilter, 'from' | 'to' | 'gateway'>, alias: string, column: string, param: (value: unknown) => string) {
  return [
    filter.from ? `${column} >= ${param(filter.from)}` : 'true',
    filter.to ? `${column} <= ${param(filter.to)}` : 'true',
    filter.gateway ? `${alias}."gateway" = ${param(filter.gateway)}::"PaymentGateway"` : 'true',
  ].join(' AND ');
}

/**
 * A read after the queued refresh: `reader` answers the client to read from once the refresh (a write, on `db`, the
 * primary) has committed: the replica when the route reads there (shared/read-db.ts), else `db`.
 */
type Reader = () => Promise<Db>;

/**
 * Items newest first by trade time; without `limit`, every item of the filter (the CSV export). The page's keys come
 * from the stored items (settlement-items.ts) and, when MATCHED is asked, from the lines without one (MATCHED); the
 * items of those lines are then matched here, in the same statement, for the page only.
 */
export async function listItems(db: Db, filter: ItemFilter, reader: Reader = async () => db) {
  await refreshQueued(db);
  const from = await reader();
  const statuses = filter.status === undefined ? STATUSES : Array.isArray(filter.status) ? filter.status : [filter.status];
  const { values, param } = sqlParams();
  const key = decodeCursor(filter.cursor);
  const after = (alias: string) => (key ? `(${alias}."tradedAt", ${alias}."id") < (${param(key.createdAt)}::timestamptz, ${param(key.id)}::uuid)` : 'true');
  const keys = [
    `SELECT s."id", s."tradedAt", true AS "stored" FROM "settlement_items" s
      WHERE s."status" = ANY(${param(statuses)}::text[]) AND ${withinPeriod(filter, 's', 's."tradeDate"', param)} AND ${after('s')}`,
  ];
  const matched = statuses.includes('MATCHED');
  if (matched) {
    keys.push(`SELECT l."id", l."tradedAt", false FROM "settlement_lines" l
      WHERE ${withinPeriod(filter, 'l', 'l."tradeDate"', param)} AND ${after('l')} AND NOT EXISTS (SELECT 1 FROM "settlement_items" s WHERE s."id" = l."id")`);
  }
  // Without MATCHED (Needs attention) the matching statement is left out altogether: planning it alone cost more than
  // reading the stored items.
  const computed = matched
    ? `UNION ALL SELECT ${ITEM_COLUMNS} FROM (${reconciliationItemsSql({ lines: 'l."id" IN (SELECT "id" FROM page WHERE NOT "stored")' })}) c`
    : '';
  // Each side ordered and limited on its own: over the union, PostgreSQL sorted every line instead of reading each
  // side's index newest first (docs/benchmarks.md).
  const limit = filter.limit ? `LIMIT ${param(filter.limit + 1)}` : '';
  const sql = `WITH page AS MATERIALIZED (
      SELECT k.* FROM (${keys.map((k) => `(${k} ORDER BY "tradedAt" DESC, "id" DESC ${limit})`).join(' UNION ALL ')}) k
       ORDER BY k."tradedAt" DESC, k."id" DESC ${limit})
    SELECT r.* FROM (SELECT ${ITEM_COLUMNS} FROM "settlement_items" s WHERE s."id" IN (SELECT "id" FROM page WHERE "stored") ${computed}) r
     ORDER BY r."tradedAt" DESC, r."id" DESC`;
  const rows = await sqlQuery<ReconciliationRow>(from, sql, values);
  const items = filter.limit ? rows.slice(0, filter.limit) : rows;
  const last = items[items.length - 1];
  const more = filter.limit !== undefined && rows.length > filter.limit && last;
  return { items: items.map(serializeItem), nextCursor: more ? encodeCursor({ createdAt: new Date(last.tradedAt), id: last.id }) : null };
}

/**
 * The period's statement and ledger totals, its items by status, and what the anomalies amount to. The ledger's
 * `refunds` and `net` are what the gateway's statement can show (refunds through it); refunds made outside the gateway
 * are counted apart (`externalRefunds`, by the Korea date they were recorded) and are never MISSING: no line is expected.
 */
export async function summarizePeriod(db: Db, period: { from: string; to: string; gateway?: ReconciliationRow['gateway'] }, reader: Reader = async () => db) {
  await refreshQueued(db);
  const from = await reader();
  const { values, param } = sqlParams();
  // The statement's totals from its lines; the counts and anomalies from the stored items (a line without one is
  // MATCHED, and a MATCHED item is no anomaly).
  const [items] = await sqlQuery<Record<string, string>>(
    from,
    `WITH l AS (SELECT l."type", l."amount" FROM "settlement_lines" l WHERE ${withinPeriod(period, 'l', 'l."tradeDate"', param)}),
          i AS (SELECT i.* FROM "settlement_items" i WHERE i."status" <> 'MATCHED' AND ${withinPeriod(period, 'i', 'i."tradeDate"', param)})
     SELECT s.*, s."lines" - s."storedLines" AS "matched" FROM (SELECT
            (SELECT count(*) FROM l WHERE l."type" = 'APPROVAL') AS "approvals",
            (SELECT coalesce(sum(l."amount"), 0) FROM l WHERE l."type" = 'APPROVAL') AS "approvalAmount",
            (SELECT count(*) FROM l WHERE l."type" = 'CANCEL') AS "cancels",
            (SELECT coalesce(sum(l."amount"), 0) FROM l WHERE l."type" = 'CANCEL') AS "cancelAmount",
            (SELECT count(*) FROM l) AS "lines",
            (SELECT count(*) FROM i WHERE i."source" = 'STATEMENT') AS "storedLines",
            (SELECT count(*) FROM i WHERE i."status" = 'MISMATCHED') AS "mismatched",
            (SELECT count(*) FROM i WHERE i."status" = 'UNMATCHED') AS "unmatched",
            (SELECT count(*) FROM i WHERE i."status" = 'MISSING') AS "missing",
            (SELECT coalesce(sum(CASE WHEN i."status" IN ('UNMATCHED', 'MISSING') THEN i."amount"
                              WHEN 'STATUS' = ANY(i."reasons") THEN i."amount"
                              WHEN 'AMOUNT' = ANY(i."reasons") THEN abs(i."amount" - i."ourAmount") ELSE 0 END), 0) FROM i) AS "anomalyAmount") s`,
    values,
  );
  const start = instantOf(period.from);
  const end = dayAfter(period.to);
  // One gateway's ledger when asked: its payments, their refunds and refunds recorded outside it.
  const ofGateway = (payment: string) =>
    period.gateway ? ` AND EXISTS (SELECT 1 FROM "payments" g WHERE g."id" = ${payment} AND g."gateway" = $3::"PaymentGateway")` : '';
  const [ledger] = await sqlQuery<Record<string, string>>(
    from,
    `SELECT (SELECT count(*) FROM "payments" p WHERE "counts_as_paid"(p."status") AND p."approvedAt" >= $1 AND p."approvedAt" < $2${ofGateway('p."id"')}) AS "approvals",
            (SELECT coalesce(sum(p."amount"), 0) FROM "payments" p WHERE "counts_as_paid"(p."status") AND p."approvedAt" >= $1 AND p."approvedAt" < $2${ofGateway('p."id"')}) AS "approvalAmount",
            (SELECT count(*) FROM "payment_attempts" r WHERE r."operation" = 'CANCEL' AND r."status" = 'SUCCEEDED' AND coalesce(r."sentAt", r."createdAt") >= $1 AND coalesce(r."sentAt", r."createdAt") < $2${ofGateway('r."paymentId"')}) AS "refunds",
            (SELECT coalesce(sum(r."amount"), 0) FROM "payment_attempts" r WHERE r."operation" = 'CANCEL' AND r."status" = 'SUCCEEDED' AND coalesce(r."sentAt", r."createdAt") >= $1 AND coalesce(r."sentAt", r."createdAt") < $2${ofGateway('r."paymentId"')}) AS "refundAmount",
            (SELECT count(*) FROM "external_refunds" e WHERE e."recordedAt" >= $1 AND e."recordedAt" < $2${ofGateway('e."paymentId"')}) AS "externalRefunds",
            (SELECT coalesce(sum(e."amount"), 0) FROM "external_refunds" e WHERE e."recordedAt" >= $1 AND e."recordedAt" < $2${ofGateway('e."paymentId"')}) AS "externalRefundAmount"`,
    period.gateway ? [start, end, period.gateway] : [start, end],
  );
  const n = (row: Record<string, string> | undefined, key: string) => Number(row?.[key] ?? 0);
  const pair = (row: Record<string, string> | undefined, count: string, amount: string) => ({ count: n(row, count), amount: n(row, amount) });
  return {
    from: period.from,
    to: period.to,
    timezone: KOREA_ZONE,
    statement: {
      approvals: pair(items, 'approvals', 'approvalAmount'),
      cancels: pair(items, 'cancels', 'cancelAmount'),
      net: n(items, 'approvalAmount') - n(items, 'cancelAmount'),
    },
    ledger: {
      approvals: pair(ledger, 'approvals', 'approvalAmount'),
      refunds: pair(ledger, 'refunds', 'refundAmount'),
      externalRefunds: pair(ledger, 'externalRefunds', 'externalRefundAmount'),
      net: n(ledger, 'approvalAmount') - n(ledger, 'refundAmount'),
    },
    counts: { matched: n(items, 'matched'), mismatched: n(items, 'mismatched'), unmatched: n(items, 'unmatched'), missing: n(items, 'missing') },
    anomalyAmount: n(items, 'anomalyAmount'),
  };
}

/**
 * The period a summary covers when it is not given in full: from the earliest coverage of any import (else today) to
 * today, Korea dates by the service's clock.
 */
export async function summaryPeriod(db: Db, now: Date, given: { from?: string; to?: string }): Promise<{ from: string; to: string }> {
  const today = koreaDate(now);
  const from = given.from ?? (await earliestCoverage(db)) ?? today;
  const to = given.to ?? today;
  if (from > to) throw new ValidationError('from is after to');
  return { from, to };
}

/** The earliest coverage date of any import, if any (the summary's default start). */
export async function earliestCoverage(db: Db): Promise<string | undefined> {
  const first = await db.settlementImport.findFirst({ orderBy: { coverageFrom: 'asc' }, select: { coverageFrom: true } });
  return first?.coverageFrom;
}

/** The items as CSV (lib/csv.ts: UTF-8 with BOM, a header row of the JSON field names, UTC times), reasons joined by `;`. */
export function itemsCsv(items: Array<ReturnType<typeof serializeItem>>): string {
  return toCsv(
    items.map((item) => ({ ...item, reasons: Array.isArray(item.reasons) ? item.reasons.join(';') : item.reasons })),
    CSV_COLUMNS,
  );
}
