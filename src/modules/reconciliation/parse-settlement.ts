// A settlement file's bytes to its lines, or to every reason it is refused (docs/reconciliation.md "Reconciling with the gateway": all or nothing). The
// encoding (UTF-8 with or without BOM, else CP949) and the delimiter (comma or tab, from the header row) are detected;
// RFC 4180 is csv-parse's; blank lines are skipped. Errors carry the physical line (the header is line 1), at most
// MAX_ERRORS of them. Pure: the caller stores nothing unless `errors` is empty.
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import {
  CANCEL_AMOUNT_HEADER,
  FieldError,
  fieldOfHeader,
  koreaDate,
  normalizeHeader,
  readAmount,
  readDate,
  readInteger,
  readMethod,
  readTradedAt,
  readType,
  REQUIRED_FIELDS,
  SETTLEMENT_FIELDS,
  type SettlementField,
} from './settlement-fields.ts';

export const MAX_ERRORS = 100;

export interface SettlementError {
  line: number;
  column?: string;
  message: string;
}

export interface ParsedLine {
  line: number;
  transactionId: string;
  orderId: string | null;
  type: 'APPROVAL' | 'CANCEL';
  amount: number;
  tradedAt: Date;
  tradeDate: string;
  method: 'CARD' | 'MOBILE' | null;
  fee: number | null;
  settlementDate: string | null;
  extra: Record<string, string> | null;
}

export interface ParseOptions {
  /** {field: header} overriding the aliases. */
  mapping?: Record<string, string>;
  /** Korea dates, inclusive: every line must lie inside. */
  from?: string;
  to?: string;
}

export interface ParsedSettlement {
  encoding: 'UTF-8' | 'CP949';
  rows: number;
  lines: ParsedLine[];
  errors: SettlementError[];
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Where the text holds a control character other than tab, line feed and carriage return, or an undecodable byte. */
function binaryAt(text: string): number {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f || code === 0xfffd) return i;
  }
  return -1;
}

function decode(bytes: Buffer): { text: string; encoding: 'UTF-8' | 'CP949' } {
  if (bytes.subarray(0, 3).equals(BOM)) return { text: bytes.subarray(3).toString('utf8'), encoding: 'UTF-8' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'UTF-8' };
  } catch {
    return { text: iconv.decode(bytes, 'cp949'), encoding: 'CP949' };
  }
}

/** Tab when the header row has more tabs than commas outside quotes, else comma. */
function detectDelimiter(text: string): ',' | '\t' {
  const header = text.split(/\r\n|\n|\r/).find((line) => line.trim() !== '') ?? '';
  let tabs = 0;
  let commas = 0;
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === '\t') tabs += 1;
    else if (!quoted && char === ',') commas += 1;
  }
  return tabs > commas ? '\t' : ',';
}

/** The physical line where a record starts: csv-parse counts lines to its end, and a quoted field may span several. */
const startLine = (endLine: number, record: string[]) =>
  endLine - record.reduce((sum, field) => sum + (field.includes('\n') ? (field.match(/\n/g)?.length ?? 0) : 0), 0);

/** Which columns feed each field, in header order; the mapping, when it names a field, replaces the aliases. */
function mapColumns(headers: string[], mapping: Record<string, string>, errors: SettlementError[]) {
  const columns = new Map<SettlementField, number[]>();
  for (const [field, header] of Object.entries(mapping)) {
    if (!SETTLEMENT_FIELDS.includes(field as SettlementField)) {
      errors.push({ line: 1, message: `mapping names an unknown field "${field}"` });
      continue;
    }
    const index = headers.findIndex((h) => normalizeHeader(h) === normalizeHeader(header));
    if (index < 0) errors.push({ line: 1, column: header, message: `mapping's column "${header}" for ${field} is not in the header row` });
    else columns.set(field as SettlementField, [index]);
  }
  headers.forEach((header, index) => {
    const field = fieldOfHeader(header);
    if (!field || field in mapping) return;
    columns.set(field, [...(columns.get(field) ?? []), index]);
  });
  for (const field of REQUIRED_FIELDS) {
    if (!columns.has(field) && !(field in mapping)) errors.push({ line: 1, column: field, message: `the required column ${field} is missing` });
  }
  return columns;
}

export function parseSettlement(bytes: Buffer, options: ParseOptions = {}): ParsedSettlement {
  const decoded = decode(bytes);
  const encoding = decoded.encoding;
  // One line break, so that csv-parse's line count is the file's (it counts a CRLF inside quotes as two).
  const text = decoded.text.replace(/\r\n?/g, '\n');
  const errors: SettlementError[] = [];
  const result = (lines: ParsedLine[], rows: number) => ({ encoding, rows, lines, errors: errors.slice(0, MAX_ERRORS) });
  const binary = binaryAt(text);
  if (binary >= 0) {
    errors.push({ line: text.slice(0, binary).split(/\r\n|\n|\r/).length, message: 'the file is not text (binary or undecodable bytes)' });
    return result([], 0);
  }
  // Each record is read as csv-parse finds it (on_record) and then dropped: the file's records are never all held at
  // once (the memory they took: docs/benchmarks.md), and once a problem is found no more lines are kept.
  let headers: string[] | undefined;
  let columns = new Map<SettlementField, number[]>();
  let mapped = new Set<number>();
  let headerInvalid = false;
  let rows = 0;
  const lines: ParsedLine[] = [];
  try {
    parse(text, {
      delimiter: detectDelimiter(text),
      record_delimiter: '\n',
      relax_column_count: true,
      skip_empty_lines: true,
      on_record: (record: string[], context: { lines: number }) => {
        if (!record.some((field) => field.trim() !== '')) return null;
        if (!headers) {
          headers = record.map((h) => h.trim());
          columns = mapColumns(headers, options.mapping ?? {}, errors);
          mapped = new Set([...columns.values()].flat());
          headerInvalid = errors.length > 0;
          return null;
        }
        rows += 1;
        if (headerInvalid || errors.length >= MAX_ERRORS) return null;
        const parsed = readRow(record, startLine(context.lines, record), headers, columns, mapped, options, errors);
        if (parsed && errors.length === 0) lines.push(parsed);
        return null;
      },
    });
  } catch (error) {
    errors.push({ line: (error as { lines?: number }).lines ?? 1, message: `not a valid CSV file: ${(error as Error).message}` });
    return result([], 0);
  }
  if (!headers) {
    errors.push({ line: 1, message: 'the file has no header row' });
    return result([], 0);
  }
  return result(errors.length === 0 ? lines : [], rows);
}

function readRow(
  record: string[],
  line: number,
  headers: string[],
  columns: Map<SettlementField, number[]>,
  /** The columns some field reads (the others go to `extra`). */
  mapped: Set<number>,
  options: ParseOptions,
  errors: SettlementError[],
): ParsedLine | undefined {
  if (record.length !== headers.length) {
    errors.push({ line, message: `the row has ${record.length} columns; the header has ${headers.length}` });
    return undefined;
  }
  const before = errors.length;
  const cell = (field: SettlementField, prefer?: (index: number) => boolean) => {
    const indexes = columns.get(field) ?? [];
    if (indexes.length === 1) {
      const value = record[indexes[0]!]!.trim();
      return value === '' ? undefined : { value, column: headers[indexes[0]!]! };
    }
    const filled = indexes.filter((i) => record[i]!.trim() !== '');
    const index = filled.find((i) => prefer?.(i)) ?? filled[0];
    return index === undefined ? undefined : { value: record[index]!.trim(), column: headers[index]! };
  };
  const read = <T>(field: SettlementField, reader: (value: string) => T, required: boolean, prefer?: (index: number) => boolean): T | null => {
    const found = cell(field, prefer);
    if (!found) {
      if (required) errors.push({ line, column: field, message: `${field} is empty` });
      return null;
    }
    try {
      return reader(found.value);
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      errors.push({ line, column: found.column, message: `${field}: ${error.message}` });
      return null;
    }
  };

  const type = read('type', readType, true);
  const transactionId = read('transactionId', (v) => v, true);
  const orderId = read('orderId', (v) => v, type === 'APPROVAL');
  const isCancelAmount = (index: number) => normalizeHeader(headers[index]!) === CANCEL_AMOUNT_HEADER;
  const amount = type ? read('amount', (v) => readAmount(v, type), true, type === 'CANCEL' ? isCancelAmount : undefined) : null;
  const tradedAt = read('tradedAt', readTradedAt, true);
  const method = read('method', readMethod, false);
  const fee = read('fee', (v) => readInteger(v, { negative: true }), false);
  const settlementDate = read('settlementDate', readDate, false);
  const tradeDate = tradedAt ? koreaDate(tradedAt) : null;
  if (tradeDate && ((options.from && tradeDate < options.from) || (options.to && tradeDate > options.to))) {
    errors.push({ line, column: 'tradedAt', message: `traded on ${tradeDate}, outside ${options.from ?? '…'} to ${options.to ?? '…'}` });
  }
  if (errors.length > before) return undefined;

  const extra = Object.fromEntries(headers.flatMap((h, i) => (mapped.has(i) || record[i] === '' ? [] : [[h || `column${i + 1}`, record[i]!]])));
  return {
    line,
    transactionId: transactionId!,
    orderId,
    type: type!,
    amount: amount!,
    tradedAt: tradedAt!,
    tradeDate: tradeDate!,
    method,
    fee,
    settlementDate,
    extra: Object.keys(extra).length > 0 ? extra : null,
  };
}
