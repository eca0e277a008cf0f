// POST /admin/settlement-imports (docs/reconciliation.md "Reconciling with the gateway"): a gateway settlement file,
// all or nothing. Read top-down: the same bytes again answer the stored import (200); the file is parsed (any invalid
// row refuses the whole file, 422, nothing stored); then it is stored as its gateway's statement (store-statement.ts:
// its lines once each, its summary, what it finishes).
import type { Db } from '../../db/prisma.ts';
import { defineError, ValidationError, withDetails } from '../../lib/errors.ts';
import type { Logger } from 'pino';
import { parseSettlement } from './parse-settlement.ts';
import type { SettlementFinisher } from './finish-settlement.ts';
import { createStatementStore, sha256Of, type SettlementObserver } from './store-statement.ts';

export { sha256Of, type SettlementObserver, type Summary } from './store-statement.ts';

export const SettlementFileInvalidError = defineError('SETTLEMENT_FILE_INVALID', '%s', 422);

export interface SettlementUpload {
  bytes: Buffer;
  filename?: string;
  mapping?: string;
  from?: string;
  to?: string;
}

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

/** A real day of the calendar as YYYY-MM-DD (2026-02-30 is not). */
function isCalendarDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

export function createSettlementImports(deps: { db: Db; log: Pick<Logger, 'info'>; finisher: SettlementFinisher; observer?: SettlementObserver }) {
  const store = createStatementStore(deps);

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
    const stored = await store.findStored(sha256);
    if (stored) return stored;

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
    // A file is Danal's export: the gateway without a settlements API, whose operators download it.
    return store.storeStatement(
      {
        gateway: 'DANAL',
        sha256,
        encoding: parsed.encoding,
        filename: upload.filename,
        rows: parsed.rows,
        lines: parsed.lines,
        coverage: { from: upload.from ?? first, to: upload.to ?? last },
        reason: `settlement file ${upload.filename ?? sha256}`,
        what: 'settlement file',
      },
      who,
    );
  }

  return { importSettlement };
}

export type SettlementImports = ReturnType<typeof createSettlementImports>;
