// Storing one gateway statement as an import (docs/reconciliation.md "Reconciling with the gateway"), whatever it
// came from: a settlement file (import-settlement.ts) or a gateway's settlements API (sync-settlements.ts). Read
// top-down: the same content again (its sha256) answers the stored import (200); its lines are stored once each (a line
// already imported from another statement is counted as a duplicate), and the import with its summary as it stands,
// in one transaction, one import at a time (a concurrent import of the same content then loses on the unique sha256
// and answers the winner's import); then what the statement proves is finished through the operators' own resolve
// (finish-settlement.ts).
// The database adds (prisma/functions/): the guard that refuses any edit or delete of an import or its lines
// (guards.sql), and an erased customer's line stored without its extra columns (erasure.sql).
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { GatewayName } from '../../gateway/gateway.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { isUniqueViolation } from '../../lib/errors.ts';
import { writeAudit } from '../audit/audit.ts';
import { ACTIONABLE_SQL, type SettlementFinisher } from './finish-settlement.ts';
import type { ReconciliationRow } from './match-settlement.ts';
import type { ParsedLine } from './parse-settlement.ts';
import { dayAfter, instantOf, presentImport } from './reconciliation.queries.ts';
import { refreshItems } from './settlement-items.ts';

/** What the metrics learn of each import (src/plugins/metrics.ts; passed in by app.ts). */
export interface SettlementObserver {
  imported(summary: Record<string, number>, resolved: number): void;
}

export type Summary = { matched: number; mismatched: number; unmatched: number; missing: number };

/** One gateway's statement, read and checked, ready to be stored. */
export interface Statement {
  gateway: GatewayName;
  /** Of the content as received (a file's bytes, or the canonical rendering of the lines an API answered). */
  sha256: string;
  /** 'UTF-8' | 'CP949' for a file, 'API' for lines read from a gateway's API. */
  encoding: string;
  filename?: string;
  rows: number;
  lines: ParsedLine[];
  /** Korea dates, inclusive. */
  coverage: { from: string; to: string };
  /** The audit entry's reason. */
  reason: string;
  /** What the log line calls it: 'settlement file', 'settlement statement'. */
  what: string;
  /**
   * Store nothing when an import of this gateway already covers the whole coverage (checked under the imports' lock):
   * the daily pass, which replicas may run at once, imports a day once.
   */
  onlyIfUncovered?: boolean;
}

type ImportRow = Prisma.SettlementImportGetPayload<object>;

/** Lines stored per INSERT statement. */
const STORE_CHUNK = 5000;

/** A large file's lines and their matching take longer than Prisma's default 5 s for an interactive transaction. */
const TRANSACTION = { maxWait: 10_000, timeout: 300_000 };

export const sha256Of = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** A unique violation from Prisma or from raw SQL (SQLSTATE 23505). */
const isDuplicate = (error: unknown) => isUniqueViolation(error) || /23505|unique constraint/i.test(String((error as Error | null)?.message));

/** An import of `gateway` whose coverage holds every day of `coverage`, if any. */
export function coveringImport(db: Db | Prisma.TransactionClient, gateway: GatewayName, coverage: { from: string; to: string }) {
  return db.settlementImport.findFirst({
    where: { gateway, coverageFrom: { lte: coverage.from }, coverageTo: { gte: coverage.to } },
    orderBy: { createdAt: 'asc' },
  });
}

export function createStatementStore(deps: { db: Db; log: Pick<Logger, 'info'>; finisher: SettlementFinisher; observer?: SettlementObserver }) {
  const { db, log, finisher, observer } = deps;

  /**
   * The stored import, answered again. Its finishing runs again too: it changes nothing once done, and completes what
   * a process that stopped between storing the statement and finishing it left undone.
   */
  async function replay(row: ImportRow) {
    await finisher.finish(row.id);
    return { statusCode: 200, body: await presentImport(db, row) };
  }

  /** The stored import of this content, if any (answered again, finished again). */
  async function findStored(sha256: string) {
    const existing = await db.settlementImport.findUnique({ where: { sha256 } });
    return existing ? replay(existing) : undefined;
  }

  async function storeStatement(statement: Statement, who: { actor: string; requestId?: string }) {
    const stored = await findStored(statement.sha256);
    if (stored) return stored;
    const id = randomUUID();
    let written: { row: ImportRow; actionable: ReconciliationRow[]; created: boolean };
    try {
      written = await db.$transaction(async (tx) => {
        await serializeImports(tx);
        const covering = statement.onlyIfUncovered ? await coveringImport(tx, statement.gateway, statement.coverage) : null;
        if (covering) return { row: covering, actionable: [], created: false };
        return { ...(await writeImport(tx, id, statement, who)), created: true };
      }, TRANSACTION);
    } catch (error) {
      if (!isDuplicate(error)) throw error;
      // The same content, imported at the same time, won: its import is the answer.
      const winner = await db.settlementImport.findUnique({ where: { sha256: statement.sha256 } });
      if (!winner) throw error;
      return replay(winner);
    }
    if (!written.created) return replay(written.row);

    const finished = await finisher.finish(id, written.actionable);
    const body = await presentImport(db, written.row);
    observer?.imported(body.summary, finished.payments + finished.refunds);
    log.info(
      {
        importId: id,
        gateway: statement.gateway,
        sha256: statement.sha256,
        encoding: statement.encoding,
        rows: statement.rows,
        newLines: body.newLines,
        duplicateLines: body.duplicateLines,
        ...body.summary,
        resolved: body.resolved,
        flagged: finished.flagged,
      },
      `${statement.what} imported`,
    );
    return { statusCode: 201, body };
  }

  return { storeStatement, findStored };
}

/**
 * The statement's lines, its items and its import row, in the caller's transaction (serialized): answers the row and
 * the items it may act on.
 */
async function writeImport(tx: Prisma.TransactionClient, id: string, statement: Statement, who: { actor: string; requestId?: string }) {
  const { lines, coverage, gateway } = statement;
  const lineCount = lines.length;
  // In statements of STORE_CHUNK lines: the parameters of one statement for 100,000 lines were several copies of
  // the file in the service's memory at once.
  let inserted = 0;
  for (let i = 0; i < lineCount; i += STORE_CHUNK) inserted += await storeLines(tx, id, gateway, lines.slice(i, i + STORE_CHUNK));
  // The statement's lines: all stored by this import (selected by its id), or (when some were imported before, from
  // another statement) found by their keys.
  const lineIds = inserted === lineCount ? undefined : await storedLineIds(tx, gateway, lines);
  // Stored: the parsed lines are not needed any more, and matching a large file takes a while.
  lines.length = 0;
  const start = instantOf(coverage.from);
  const end = dayAfter(coverage.to);
  // Matched once (settlement-items.ts): the statement's lines, what they change of other items, and every payment and
  // refund of its gateway inside the coverage (the import's own row, which the coverage test reads, is written below).
  // What is not MATCHED, and what the statement may finish, is stored; a line without a stored item is MATCHED.
  const scope = { from: start, to: end, gateway };
  await refreshItems(tx, lineIds ? { lineIds, coverage: scope } : { importId: id, coverage: scope });
  const { summary, actionable } = await summarize(tx, lineIds ?? id, scope);
  const row = await tx.settlementImport.create({
    data: {
      id,
      gateway,
      filename: statement.filename,
      sha256: statement.sha256,
      encoding: statement.encoding,
      rows: statement.rows,
      newLines: inserted,
      duplicateLines: lineCount - inserted,
      coverageFrom: coverage.from,
      coverageTo: coverage.to,
      summary,
      actor: who.actor,
    },
  });
  await writeAudit(tx, {
    actor: who.actor,
    action: 'settlement_import.create',
    entityType: 'settlement_import',
    entityId: id,
    reason: statement.reason,
    after: { gateway, sha256: statement.sha256, rows: statement.rows, newLines: inserted, coverage, summary: row.summary },
    requestId: who.requestId,
  });
  return { row, actionable };
}

/**
 * The statement's items counted by status, and only those it acts on brought back (a file of 100,000 lines would
 * otherwise be 100,000 rows in memory for a handful of resolutions). `lines`: the lines' ids, or the import's id when
 * it stored them all.
 */
async function summarize(tx: Prisma.TransactionClient, lines: string[] | string, scope: { from: Date; to: Date; gateway: GatewayName }) {
  const [matched] = await tx.$queryRawUnsafe<Array<{ summary: Partial<Summary> | null; actionable: ReconciliationRow[] }>>(
    `WITH file AS (SELECT l."id" FROM "settlement_lines" l WHERE ${Array.isArray(lines) ? 'l."id" = ANY($1::uuid[])' : 'l."importId" = $1::uuid'}),
     items AS MATERIALIZED (
       SELECT i.* FROM "settlement_items" i WHERE i."id" IN (SELECT "id" FROM file)
       UNION ALL
       SELECT i.* FROM "settlement_items" i WHERE i."source" = 'LEDGER' AND i."gateway" = $4::"PaymentGateway"
          AND i."tradedAt" >= $2::timestamptz AND i."tradedAt" < $3::timestamptz),
     counts AS (
       SELECT i."status", count(*)::int AS "n" FROM items i WHERE i."status" <> 'MATCHED' GROUP BY 1
       UNION ALL
       SELECT 'MATCHED', (SELECT count(*) FROM file)::int - (SELECT count(*) FROM items i WHERE i."source" = 'STATEMENT' AND i."status" <> 'MATCHED')::int)
     SELECT (SELECT jsonb_object_agg(lower(c."status"), c."n") FROM counts c) AS "summary",
            (SELECT coalesce(jsonb_agg(i), '[]'::jsonb) FROM items i WHERE ${ACTIONABLE_SQL}) AS "actionable"`,
    lines,
    scope.from,
    scope.to,
    scope.gateway,
  );
  return { summary: { matched: 0, mismatched: 0, unmatched: 0, missing: 0, ...matched?.summary }, actionable: matched?.actionable ?? [] };
}

/**
 * Imports are stored one at a time, until the transaction ends (a transaction-level advisory lock). Two files sharing
 * lines, inserted at once in different orders, each waited on the other's uncommitted lines in the unique index and
 * PostgreSQL aborted one (a deadlock, answered 500); serialized, the second finds the first's lines stored (its
 * duplicates) and its summary sees them.
 */
async function serializeImports(tx: Prisma.TransactionClient): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('settlement_imports'))`;
}

const column = <K extends keyof ParsedLine>(lines: ParsedLine[], key: K) => lines.map((l) => l[key]);

/** Inserts the lines not stored yet (ON CONFLICT: a line from another statement of the gateway is stored once); answers how many it stored. */
async function storeLines(tx: Prisma.TransactionClient, importId: string, gateway: GatewayName, lines: ParsedLine[]): Promise<number> {
  return tx.$executeRawUnsafe(
    `INSERT INTO "settlement_lines" ("importId", "gateway", "line", "transactionId", "orderId", "type", "amount", "tradedAt", "tradeDate", "method", "fee", "settlementDate", "extra")
     SELECT $1::uuid, $13::"PaymentGateway", k.*
       FROM unnest($2::int[], $3::text[], $4::text[], $5::"SettlementLineType"[], $6::int[], $7::timestamptz[], $8::text[], $9::"PaymentMethod"[], $10::int[], $11::text[], $12::jsonb[]) AS k
     ON CONFLICT ("transactionId", "type", "tradedAt", "amount", "gateway") DO NOTHING`,
    importId,
    column(lines, 'line'),
    column(lines, 'transactionId'),
    column(lines, 'orderId'),
    column(lines, 'type'),
    column(lines, 'amount'),
    column(lines, 'tradedAt'),
    column(lines, 'tradeDate'),
    column(lines, 'method'),
    column(lines, 'fee'),
    column(lines, 'settlementDate'),
    lines.map((l) => (l.extra ? JSON.stringify(l.extra) : null)),
    gateway,
  );
}

/** The ids of the statement's lines as stored, this import's or an earlier one's (same gateway, transactionId, type, tradedAt, amount). */
async function storedLineIds(tx: Prisma.TransactionClient, gateway: GatewayName, lines: ParsedLine[]): Promise<string[]> {
  const ids = await tx.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT l."id" FROM "settlement_lines" l
       JOIN unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS k("transactionId", "type", "tradedAt", "amount")
         ON l."transactionId" = k."transactionId" AND l."type"::text = k."type" AND l."tradedAt" = k."tradedAt" AND l."amount" = k."amount"
      WHERE l."gateway" = $5::"PaymentGateway"`,
    column(lines, 'transactionId'),
    column(lines, 'type'),
    column(lines, 'tradedAt'),
    column(lines, 'amount'),
    gateway,
  );
  return ids.map((r) => r.id);
}

export type StatementStore = ReturnType<typeof createStatementStore>;
