// POST /admin/settlement-imports (docs/reconciliation.md "Reconciling with the gateway"): a gateway settlement file,
// all or nothing. Read top-down: the same bytes again answer the stored import (200); the file is parsed (any invalid
// row refuses the whole file, 422, nothing stored); its lines are stored once each (a line already imported from
// another file is counted as a duplicate), and the import with its summary as it stands, in one transaction, one import
// at a time (a concurrent upload of the same bytes then loses on the unique sha256 and answers the winner's import);
// then what the file proves is finished through the operators' own resolve (finish-settlement.ts).
// The database adds (prisma/functions/): the guard that refuses any edit or delete of an import or its lines (guards.sql).
import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { defineError, isUniqueViolation, ValidationError, withDetails } from '../../lib/errors.ts';
import type { Logger } from 'pino';
import { writeAudit } from '../audit/audit.ts';
import type { ReconciliationRow } from './match-settlement.ts';
import { refreshItems } from './settlement-items.ts';
import { parseSettlement, type ParsedLine } from './parse-settlement.ts';
import { dayAfter, instantOf, presentImport } from './reconciliation.queries.ts';
import { ACTIONABLE_SQL, type SettlementFinisher } from './finish-settlement.ts';

export const SettlementFileInvalidError = defineError('SETTLEMENT_FILE_INVALID', '%s', 422);

export interface SettlementUpload {
  bytes: Buffer;
  filename?: string;
  mapping?: string;
  from?: string;
  to?: string;
}

/** What the metrics learn of each import (src/plugins/metrics.ts; passed in by app.ts). */
export interface SettlementObserver {
  imported(summary: Record<string, number>, resolved: number): void;
}

export type Summary = { matched: number; mismatched: number; unmatched: number; missing: number };

/** Lines stored per INSERT statement. */
const STORE_CHUNK = 5000;

/** A large file's lines and their matching take longer than Prisma's default 5 s for an interactive transaction. */
const TRANSACTION = { maxWait: 10_000, timeout: 300_000 };

export const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function readMapping(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined || text === '') return undefined;
  let mapping: unknown;
  try {
    mapping = JSON.parse(text);
  } catch {
    throw new ValidationError('mapping must be JSON: {"<field>": "<header>"}');
  }
  if (!mapping || typeof mapping !== 'object' || Array.isArray(mapping) || Object.values(mapping).some((v) => typeof v !== 'string')) {
    throw new ValidationError('mapping must be a JSON object of field names to header names');
  }
  return mapping as Record<string, string>;
}

/** A unique violation from Prisma or from raw SQL (SQLSTATE 23505). */
const isDuplicate = (error: unknown) => isUniqueViolation(error) || /23505|unique constraint/i.test(String((error as Error | null)?.message));

/** A real day of the calendar as YYYY-MM-DD (2026-02-30 is not). */
function isCalendarDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

export function createSettlementImports(deps: { db: Db; log: Pick<Logger, 'info'>; finisher: SettlementFinisher; observer?: SettlementObserver }) {
  const { db, log, finisher, observer } = deps;

  /**
   * The stored import, answered again. Its finishing runs again too: it changes nothing once done, and completes what
   * a process that stopped between storing the file and finishing it left undone.
   */
  async function replay(row: Prisma.SettlementImportGetPayload<object>) {
    await finisher.finish(row.id);
    return { statusCode: 200, body: await presentImport(db, row) };
  }

  async function importSettlement(upload: SettlementUpload, who: { actor: string; requestId?: string }) {
    for (const [name, day] of [
      ['from', upload.from],
      ['to', upload.to],
    ] as const) {
      if (day !== undefined && !isCalendarDay(day)) throw new ValidationError(`${name}: "${day.slice(0, 20)}" is not a calendar day (YYYY-MM-DD)`);
    }
    if (upload.from && upload.to && upload.from > upload.to) throw new ValidationError('from is after to');
    const mapping = readMapping(upload.mapping);
    const sha256 = sha256Of(upload.bytes);
    const existing = await db.settlementImport.findUnique({ where: { sha256 } });
    if (existing) return replay(existing);

    const parsed = parseSettlement(upload.bytes, { mapping, from: upload.from, to: upload.to });
    if (parsed.errors.length === 0 && parsed.lines.length === 0 && !(upload.from && upload.to)) {
      parsed.errors.push({ line: 2, message: 'the file has no data rows (give from and to to import an empty period)' });
    }
    if (parsed.errors.length > 0) {
      throw withDetails(
        new SettlementFileInvalidError(`The settlement file is refused: ${parsed.errors.length} problem(s), first on line ${parsed.errors[0]!.line}`),
        {
          errors: parsed.errors,
        },
      );
    }
    let first = parsed.lines[0]?.tradeDate ?? '';
    let last = first;
    for (const { tradeDate } of parsed.lines) {
      if (tradeDate < first) first = tradeDate;
      if (tradeDate > last) last = tradeDate;
    }
    const coverage = { from: upload.from ?? first, to: upload.to ?? last };
    const lineCount = parsed.lines.length;
    const id = randomUUID();
    let created: Prisma.SettlementImportGetPayload<object>;
    let actionable: ReconciliationRow[] = [];
    try {
      created = await db.$transaction(async (tx) => {
        await serializeImports(tx);
        // In statements of STORE_CHUNK lines: the parameters of one statement for 100,000 lines were several copies of
        // the file in the service's memory at once.
        let inserted = 0;
        for (let i = 0; i < lineCount; i += STORE_CHUNK) inserted += await storeLines(tx, id, parsed.lines.slice(i, i + STORE_CHUNK));
        // The file's lines: all stored by this import (selected by its id), or (when some were imported before, from
        // another file) found by their keys.
        const lineIds = inserted === lineCount ? undefined : await storedLineIds(tx, parsed.lines);
        // Stored: the parsed lines are not needed any more, and matching a large file takes a while.
        parsed.lines.length = 0;
        const start = instantOf(coverage.from);
        const end = dayAfter(coverage.to);
        // Matched once (settlement-items.ts): the file's lines, what they change of other items, and every payment and
        // refund inside the coverage (the import's own row, which the coverage test reads, is written below). What is
        // not MATCHED, and what the file may finish, is stored; a line without a stored item is MATCHED.
        await refreshItems(tx, lineIds ? { lineIds, coverage: { from: start, to: end } } : { importId: id, coverage: { from: start, to: end } });
        // The file's items counted by status, and only those the file acts on brought back (a file of 100,000 lines
        // would otherwise be 100,000 rows in memory for a handful of resolutions).
        const [matched] = await tx.$queryRawUnsafe<Array<{ summary: Partial<Summary> | null; actionable: ReconciliationRow[] }>>(
          `WITH file AS (SELECT l."id" FROM "settlement_lines" l WHERE ${lineIds ? 'l."id" = ANY($1::uuid[])' : 'l."importId" = $1::uuid'}),
           items AS MATERIALIZED (
             SELECT i.* FROM "settlement_items" i WHERE i."id" IN (SELECT "id" FROM file)
             UNION ALL
             SELECT i.* FROM "settlement_items" i WHERE i."source" = 'LEDGER' AND i."tradedAt" >= $2::timestamptz AND i."tradedAt" < $3::timestamptz),
           counts AS (
             SELECT i."status", count(*)::int AS "n" FROM items i WHERE i."status" <> 'MATCHED' GROUP BY 1
             UNION ALL
             SELECT 'MATCHED', (SELECT count(*) FROM file)::int - (SELECT count(*) FROM items i WHERE i."source" = 'STATEMENT' AND i."status" <> 'MATCHED')::int)
           SELECT (SELECT jsonb_object_agg(lower(c."status"), c."n") FROM counts c) AS "summary",
                  (SELECT coalesce(jsonb_agg(i), '[]'::jsonb) FROM items i WHERE ${ACTIONABLE_SQL}) AS "actionable"`,
          lineIds ?? id,
          start,
          end,
        );
        actionable = matched?.actionable ?? [];
        const row = await tx.settlementImport.create({
          data: {
            id,
            filename: upload.filename,
            sha256,
            encoding: parsed.encoding,
            rows: parsed.rows,
            newLines: inserted,
            duplicateLines: lineCount - inserted,
            coverageFrom: coverage.from,
            coverageTo: coverage.to,
            summary: { matched: 0, mismatched: 0, unmatched: 0, missing: 0, ...matched?.summary },
            actor: who.actor,
          },
        });
        await writeAudit(tx, {
          actor: who.actor,
          action: 'settlement_import.create',
          entityType: 'settlement_import',
          entityId: id,
          reason: `settlement file ${upload.filename ?? sha256}`,
          after: { sha256, rows: parsed.rows, newLines: inserted, coverage, summary: row.summary },
          requestId: who.requestId,
        });
        return row;
      }, TRANSACTION);
    } catch (error) {
      if (!isDuplicate(error)) throw error;
      // The same bytes, uploaded at the same time, won: its import is the answer.
      const winner = await db.settlementImport.findUnique({ where: { sha256 } });
      if (!winner) throw error;
      return replay(winner);
    }

    const finished = await finisher.finish(id, actionable);
    const body = await presentImport(db, created);
    observer?.imported(body.summary, finished.payments + finished.refunds);
    log.info(
      {
        importId: id,
        sha256,
        encoding: parsed.encoding,
        rows: parsed.rows,
        newLines: body.newLines,
        duplicateLines: body.duplicateLines,
        ...body.summary,
        resolved: body.resolved,
        flagged: finished.flagged,
      },
      'settlement file imported',
    );
    return { statusCode: 201, body };
  }

  return { importSettlement };
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

/** Inserts the lines not stored yet (ON CONFLICT: a line from another file is stored once); answers how many it stored. */
async function storeLines(tx: Prisma.TransactionClient, importId: string, lines: ParsedLine[]): Promise<number> {
  return tx.$executeRawUnsafe(
    `INSERT INTO "settlement_lines" ("importId", "line", "transactionId", "orderId", "type", "amount", "tradedAt", "tradeDate", "method", "fee", "settlementDate", "extra")
     SELECT $1::uuid, k.*
       FROM unnest($2::int[], $3::text[], $4::text[], $5::"SettlementLineType"[], $6::int[], $7::timestamptz[], $8::text[], $9::"PaymentMethod"[], $10::int[], $11::text[], $12::jsonb[]) AS k
     ON CONFLICT ("transactionId", "type", "tradedAt", "amount") DO NOTHING`,
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
  );
}

/** The ids of the file's lines as stored, this import's or an earlier one's (same transactionId, type, tradedAt, amount). */
async function storedLineIds(tx: Prisma.TransactionClient, lines: ParsedLine[]): Promise<string[]> {
  const ids = await tx.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT l."id" FROM "settlement_lines" l
       JOIN unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS k("transactionId", "type", "tradedAt", "amount")
         ON l."transactionId" = k."transactionId" AND l."type"::text = k."type" AND l."tradedAt" = k."tradedAt" AND l."amount" = k."amount"`,
    column(lines, 'transactionId'),
    column(lines, 'type'),
    column(lines, 'tradedAt'),
    column(lines, 'amount'),
  );
  return ids.map((r) => r.id);
}

export type SettlementImports = ReturnType<typeof createSettlementImports>;
