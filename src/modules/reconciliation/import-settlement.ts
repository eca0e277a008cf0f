// POST /admin/settlement-imports (DESIGN.md §5 "Settlement files and reconciliation"): a gateway settlement file,
// all or nothing. Read top-down: the same bytes again answer the stored import (200); the file is parsed (any invalid
// row refuses the whole file, 422, nothing stored); its lines are stored once each (a line already imported from
// another file is counted as a duplicate), and the import with its summary as it stands, in one transaction, one import
// at a time (a concurrent upload of the same bytes then loses on the unique sha256 and answers the winner's import);
// then what the file proves is finished through the operators' own resolve (finish-settlement.ts).
import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { defineError, isUniqueViolation, ValidationError, withDetails } from '../../lib/errors.ts';
import type { Logger } from 'pino';
import { writeAudit } from '../audit/audit.ts';
import { reconciliationItemsSql, type ReconciliationRow } from './match-settlement.ts';
import { parseSettlement, type ParsedLine } from './parse-settlement.ts';
import { presentImport } from './reconciliation.queries.ts';
import type { SettlementFinisher } from './finish-settlement.ts';

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

/** Summary counts of reconciliation rows; an outcome the file will finish counts as it will stand (MATCHED). */
export function summarize(rows: Array<Pick<ReconciliationRow, 'status'>>): Summary {
  const summary: Summary = { matched: 0, mismatched: 0, unmatched: 0, missing: 0 };
  for (const row of rows) summary[row.status.toLowerCase() as keyof Summary] += 1;
  return summary;
}

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
    const dates = parsed.lines.map((l) => l.tradeDate).sort();
    const coverage = { from: upload.from ?? dates[0]!, to: upload.to ?? dates[dates.length - 1]! };
    const id = randomUUID();
    let created: Prisma.SettlementImportGetPayload<object>;
    try {
      created = await db.$transaction(async (tx) => {
        await serializeImports(tx);
        const { inserted, lineIds } = await storeLines(tx, id, parsed.lines);
        const rows = await tx.$queryRawUnsafe<ReconciliationRow[]>(
          reconciliationItemsSql({ lines: 'l."id" = ANY($1::uuid[])', missing: (d) => `${d} BETWEEN $2 AND $3` }),
          lineIds,
          coverage.from,
          coverage.to,
        );
        const row = await tx.settlementImport.create({
          data: {
            id,
            filename: upload.filename,
            sha256,
            encoding: parsed.encoding,
            rows: parsed.rows,
            newLines: inserted,
            duplicateLines: parsed.lines.length - inserted,
            coverageFrom: coverage.from,
            coverageTo: coverage.to,
            summary: summarize(rows),
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

    const finished = await finisher.finish(id);
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

/** Inserts the lines not stored yet (ON CONFLICT: a line from another file is stored once); answers every line's id. */
async function storeLines(tx: Prisma.TransactionClient, importId: string, lines: ParsedLine[]) {
  const column = <K extends keyof ParsedLine>(key: K) => lines.map((l) => l[key]);
  const keys = [column('transactionId'), column('type'), column('tradedAt'), column('amount')];
  const inserted = await tx.$executeRawUnsafe(
    `INSERT INTO "settlement_lines" ("importId", "line", "transactionId", "orderId", "type", "amount", "tradedAt", "tradeDate", "method", "fee", "settlementDate", "extra")
     SELECT $1::uuid, k.*
       FROM unnest($2::int[], $3::text[], $4::text[], $5::"SettlementLineType"[], $6::int[], $7::timestamptz[], $8::text[], $9::"PaymentMethod"[], $10::int[], $11::text[], $12::jsonb[]) AS k
     ON CONFLICT ("transactionId", "type", "tradedAt", "amount") DO NOTHING`,
    importId,
    column('line'),
    keys[0],
    column('orderId'),
    keys[1],
    keys[3],
    keys[2],
    column('tradeDate'),
    column('method'),
    column('fee'),
    column('settlementDate'),
    lines.map((l) => (l.extra ? JSON.stringify(l.extra) : null)),
  );
  const ids = await tx.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT l."id" FROM "settlement_lines" l
       JOIN unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[]) AS k("transactionId", "type", "tradedAt", "amount")
         ON l."transactionId" = k."transactionId" AND l."type"::text = k."type" AND l."tradedAt" = k."tradedAt" AND l."amount" = k."amount"`,
    ...keys,
  );
  return { inserted, lineIds: ids.map((r) => r.id) };
}
