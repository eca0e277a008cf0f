// The service's one CSV writer (docs/reconciliation.md "Revenue reports"), for the reports, the reconciliation list and the console's exports: UTF-8 with a
// BOM (so spreadsheet programs read it as UTF-8), a header row of the JSON field names with nested ones joined by
// dots (byMethod.CARD.net), one row per item, times in UTC ISO-8601, RFC 4180 quoting, null as an empty field.
type Cell = string | number | boolean | null | undefined | Date;

function flatten(value: Record<string, unknown>, prefix = '', into: Array<[string, Cell]> = []): Array<[string, Cell]> {
  for (const [key, field] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (field !== null && typeof field === 'object' && !(field instanceof Date)) flatten(field as Record<string, unknown>, name, into);
    else into.push([name, field as Cell]);
  }
  return into;
}

/**
 * A text cell a spreadsheet would run as a formula (it begins with =, +, -, @, a tab or a carriage return) starts with an
 * apostrophe instead, which Excel shows as text (OWASP "CSV injection"): merchant-given fields (`orderName`, `userId`)
 * and settlement lines reach these files, and an operator opens them. Numbers are written as they are (a negative rate
 * stays a number).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function quote(cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  const raw = cell instanceof Date ? cell.toISOString() : String(cell);
  const text = typeof cell === 'string' && FORMULA_START.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The BOM and the header row: the start of a CSV whose rows csvRows writes (a streamed export). */
export function csvHead(columns: readonly string[]): string {
  return `\uFEFF${columns.map(quote).join(',')}\r\n`;
}

/**
 * The rows' lines under a fixed header: each row's field (nested ones by their dotted name) in the column's place, an
 * absent one empty. Items whose optional fields are left out still line up under their columns.
 */
export function csvRows(rows: readonly object[], columns: readonly string[]): string {
  return rows
    .map((row) => {
      const cells = new Map(flatten(row as Record<string, unknown>));
      return `${columns.map((column) => quote(cells.get(column))).join(',')}\r\n`;
    })
    .join('');
}

/** The whole CSV; the header is `columns`, else the first row's field names (a report's rows all have the same). */
export function toCsv(rows: readonly object[], columns?: readonly string[]): string {
  const header = columns ?? (rows[0] ? flatten(rows[0] as Record<string, unknown>).map(([name]) => name) : []);
  return csvHead(header) + csvRows(rows, header);
}
