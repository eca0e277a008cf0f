// The reports' CSV (DESIGN.md §5 "Reports"): UTF-8 with a BOM (so spreadsheet programs read it as UTF-8), a header
// row of the JSON field names with nested ones joined by dots (byMethod.CARD.net), one row per period, times in UTC
// ISO-8601, RFC 4180 quoting, null as an empty field.
type Cell = string | number | boolean | null | undefined | Date;

function flatten(value: Record<string, unknown>, prefix = '', into: Array<[string, Cell]> = []): Array<[string, Cell]> {
  for (const [key, field] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (field !== null && typeof field === 'object' && !(field instanceof Date)) flatten(field as Record<string, unknown>, name, into);
    else into.push([name, field as Cell]);
  }
  return into;
}

function quote(cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  const text = cell instanceof Date ? cell.toISOString() : String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(rows: readonly object[]): string {
  const flat = rows.map((row) => flatten(row as Record<string, unknown>));
  const header = flat[0]?.map(([name]) => name) ?? [];
  const lines = [header.map(quote).join(','), ...flat.map((cells) => cells.map(([, cell]) => quote(cell)).join(','))];
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}
