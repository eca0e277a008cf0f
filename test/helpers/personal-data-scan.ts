// A scan of the whole database for a customer's personal data (docs/operating.md "A customer asks to be forgotten"):
// every table of every user schema, every column that can hold text (text, varchar, char, citext and other string
// types, json, jsonb, xml, arrays of those, domains over them) and bytea, where plaintext could hide, listed from
// pg_catalog at run time, so a table or column added tomorrow is scanned too without anyone updating a list.
//
// A needle is looked for in every form it could be stored in: as given and in any letter case; JSON-escaped (a
// json column or a JSON text keeps "\uD64D" for 홍, in either hex case); URL-encoded (%ED%99%8D, and + for a space,
// as a query string or a form body keeps it); Unicode-decomposed (NFD). A phone number also in each way it is
// written: 010-1234-5678, 010 1234 5678, 010.1234.5678, 01012345678, +82-10-1234-5678, +82 10 1234 5678,
// +821012345678, 821012345678 (each then through the encodings above). In bytea the forms' UTF-8 and CP949 bytes
// (a Korean settlement file's encoding) are looked for, in the cases written.
//
// One statement per table: the rows with a hit anywhere, then which column holds which form is decided here from
// the values read back. Tables without a primary key are named by ctid.
import iconv from 'iconv-lite';

export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export interface Needle {
  /** What the needle is, as reports name it ("userId", "name", "phone"): never the value itself. */
  label: string;
  value: string;
  /** A phone number: looked for in each way of writing it too. */
  phone?: boolean;
}

export interface ScanHit {
  schema: string;
  table: string;
  column: string;
  /** The row's primary key values joined by "," (or its ctid). */
  rowId: string;
  needle: string;
  /** Which stored form matched: "as is", "json-escaped", "url-encoded", "+82 10 …", "bytes cp949"… */
  form: string;
}

export interface ScannedColumn {
  schema: string;
  table: string;
  column: string;
  type: string;
  bytea: boolean;
}

export interface ScanResult {
  hits: ScanHit[];
  /** Every column read: the inventory the scan covered. */
  columns: ScannedColumn[];
  tables: string[];
}

interface Form {
  needle: string;
  form: string;
  text: string;
}

/** Every character above ASCII as \uXXXX (UTF-16 code units, as JSON writes them). */
function jsonEscaped(value: string): string {
  let out = '';
  for (const char of JSON.stringify(value).slice(1, -1)) {
    for (let i = 0; i < char.length; i++) {
      const code = char.charCodeAt(i);
      out += code > 0x7e ? `\\u${code.toString(16).padStart(4, '0')}` : char[i];
    }
  }
  return out;
}

/** The ways a Korean phone number is written: local with and without separators, and the +82 form. */
export function phoneForms(value: string): Array<{ form: string; text: string }> {
  let digits = value.replace(/\D/g, '');
  if (digits.startsWith('82')) digits = `0${digits.slice(2)}`;
  const local = digits.slice(1);
  // 010-1234-5678 (11 digits) or 02-123-4567 / 031-123-4567 (shorter): the last four are the subscriber part.
  const head = digits.startsWith('02') ? digits.slice(0, 2) : digits.slice(0, 3);
  const middle = digits.slice(head.length, -4);
  const tail = digits.slice(-4);
  const parts = [head, middle, tail];
  const intlParts = [head.slice(1), middle, tail];
  const forms = [
    { form: 'digits', text: digits },
    { form: 'hyphens', text: parts.join('-') },
    { form: 'spaces', text: parts.join(' ') },
    { form: 'dots', text: parts.join('.') },
    { form: '+82 digits', text: `+82${local}` },
    { form: '82 digits', text: `82${local}` },
    { form: '+82 hyphens', text: `+82-${intlParts.join('-')}` },
    { form: '+82 spaces', text: `+82 ${intlParts.join(' ')}` },
    { form: '+82 hyphens after 82', text: `+82 ${intlParts.join('-')}` },
  ];
  return forms.filter((f, i) => forms.findIndex((g) => g.text === f.text) === i);
}

/** A needle's stored forms, each once, with the name of the first way that produced it. */
export function storedForms(needle: Needle): Form[] {
  const bases = needle.phone ? phoneForms(needle.value) : [{ form: 'as is', text: needle.value }];
  const forms = new Map<string, Form>();
  const add = (form: string, text: string) => {
    const key = text.toLowerCase();
    if (text && !forms.has(key)) forms.set(key, { needle: needle.label, form, text });
  };
  for (const base of bases) {
    const prefix = base.form === 'as is' ? '' : `${base.form}, `;
    add(base.form, base.text);
    add(`${prefix}NFD`, base.text.normalize('NFD'));
    add(`${prefix}NFC`, base.text.normalize('NFC'));
    add(`${prefix}json-escaped`, jsonEscaped(base.text));
    add(`${prefix}url-encoded`, encodeURIComponent(base.text));
    add(`${prefix}form-encoded`, new URLSearchParams({ v: base.text }).toString().slice(2));
    add(`${prefix}url-encoded NFD`, encodeURIComponent(base.text.normalize('NFD')));
  }
  return [...forms.values()];
}

interface ByteForm {
  needle: string;
  form: string;
  hex: string;
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The byte strings a form may be stored as in bytea: UTF-8 in each case written, and CP949 where it differs. */
function byteForms(form: Form): ByteForm[] {
  const out = new Map<string, string>();
  for (const text of new Set([form.text, form.text.toLowerCase(), form.text.toUpperCase()])) {
    out.set(Buffer.from(text, 'utf8').toString('hex'), `${form.form}, bytes utf-8`);
    if ([...text].some((c) => c.charCodeAt(0) > 0x7f) && text.normalize('NFC') === text) {
      const cp949 = iconv.encode(text, 'cp949');
      // Characters CP949 has no code for come out as "?": such an encoding is not a stored form of the value.
      if (iconv.decode(cp949, 'cp949') === text) out.set(cp949.toString('hex'), `${form.form}, bytes cp949`);
    }
  }
  return [...out].map(([hex, name]) => ({ needle: form.needle, form: name, hex }));
}

const COLUMNS_SQL = `
  SELECT n.nspname::text AS schema, c.relname::text AS "table", a.attname::text AS "column", format_type(a.atttypid, a.atttypmod) AS type,
         (base.typname = 'bytea') AS bytea,
         coalesce((SELECT array_agg(pa.attname::text ORDER BY k.ord)
                     FROM pg_index i
                     CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                     JOIN pg_attribute pa ON pa.attrelid = i.indrelid AND pa.attnum = k.attnum
                    WHERE i.indrelid = c.oid AND i.indisprimary), '{}'::text[]) AS "primaryKey"
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    JOIN pg_type t ON t.oid = a.atttypid
    -- A domain is read as its base type; an array as its element's.
    JOIN pg_type base ON base.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
    LEFT JOIN pg_type element ON element.oid = base.typelem AND base.typcategory = 'A'
   WHERE c.relkind IN ('r', 'p', 'm')
     AND NOT c.relispartition
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
     AND (base.typcategory = 'S' OR base.typname IN ('json', 'jsonb', 'xml', 'bytea')
          OR element.typcategory = 'S' OR element.typname IN ('json', 'jsonb', 'xml'))
   ORDER BY n.nspname, c.relname, a.attnum`;

interface ColumnRow extends ScannedColumn {
  primaryKey: string[];
}

export interface ScanOptions {
  /** Schemas left out, each for a reason the caller states (e.g. the built-in sandbox gateway's own records). */
  excludeSchemas?: string[];
}

/** Scans every table for every needle in every stored form. */
export async function scanForPersonalData(db: Queryable, needles: Needle[], options: ScanOptions = {}): Promise<ScanResult> {
  const excluded = new Set(options.excludeSchemas ?? []);
  const columns = (await db.query<ColumnRow & Record<string, unknown>>(COLUMNS_SQL)).rows.filter((c) => !excluded.has(c.schema));
  const forms = needles.flatMap(storedForms);
  const patterns = forms.map((f) => likePattern(f.text));
  const bytes = forms.flatMap(byteForms);
  const byTable = new Map<string, ColumnRow[]>();
  for (const column of columns) {
    const key = `${column.schema}.${column.table}`;
    byTable.set(key, [...(byTable.get(key) ?? []), column]);
  }
  const hits: ScanHit[] = [];
  for (const tableColumns of byTable.values()) {
    hits.push(...(await scanTable(db, tableColumns, forms, patterns, bytes)));
  }
  return {
    hits,
    columns: columns.map(({ schema, table, column, type, bytea }) => ({ schema, table, column, type, bytea })),
    tables: [...byTable.keys()].map((key) => key.replace(/^public\./, '')),
  };
}

async function scanTable(db: Queryable, columns: ColumnRow[], forms: Form[], patterns: string[], bytes: ByteForm[]): Promise<ScanHit[]> {
  const { schema, table, primaryKey } = columns[0]!;
  const rowId = primaryKey.length > 0 ? `concat_ws(',', ${primaryKey.map((k) => `${ident(k)}::text`).join(', ')})` : 'ctid::text';
  const read = (c: ColumnRow) => (c.bytea ? `encode(${ident(c.column)}, 'hex')` : `${ident(c.column)}::text`);
  // Only the parameters a statement uses: PostgreSQL refuses a bind of more than the statement names.
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const textParam = columns.some((c) => !c.bytea) ? param(patterns) : '';
  const bytesParam = columns.some((c) => c.bytea) ? param(bytes.map((b) => b.hex)) : '';
  const conditions = columns.map((c) =>
    c.bytea
      ? `EXISTS (SELECT 1 FROM unnest(${bytesParam}::text[]) AS b(hex) WHERE position(decode(b.hex, 'hex') IN ${ident(c.column)}) > 0)`
      : `${ident(c.column)}::text ILIKE ANY (${textParam}::text[])`,
  );
  const sql = `SELECT ${rowId} AS "rowId", ${columns.map((c, i) => `${read(c)} AS c${i}`).join(', ')}
                 FROM ${ident(schema)}.${ident(table)}
                WHERE ${conditions.join(' OR ')}`;
  const { rows } = await db.query(sql, values);
  const hits: ScanHit[] = [];
  for (const row of rows) {
    columns.forEach((column, i) => {
      const value = row[`c${i}`] as string | null;
      if (value === null) return;
      const found = new Set<string>();
      if (column.bytea) {
        // Hex pairs: a match must start on a byte boundary.
        for (const b of bytes) {
          for (let at = value.indexOf(b.hex); at !== -1; at = value.indexOf(b.hex, at + 1)) {
            if (at % 2 === 0) {
              found.add(`${b.needle}\u0000${b.form}`);
              break;
            }
          }
        }
      } else {
        const lower = value.toLowerCase();
        for (const form of forms) if (lower.includes(form.text.toLowerCase())) found.add(`${form.needle}\u0000${form.form}`);
      }
      for (const entry of found) {
        const [needle, form] = entry.split('\u0000') as [string, string];
        hits.push({ schema, table, column: column.column, rowId: String(row.rowId), needle, form });
      }
    });
  }
  return hits;
}

/** "table.column" ("schema.table.column" outside public) of a hit. */
export const placeOf = (hit: { schema: string; table: string; column: string }) =>
  `${hit.schema === 'public' ? '' : `${hit.schema}.`}${hit.table}.${hit.column}`;

/** Each place with a hit, once, sorted. */
export function placesOf(hits: ScanHit[]): string[] {
  return [...new Set(hits.map(placeOf))].sort();
}

/** One line per (table, column, needle): its rows and forms; for a test's failure message. */
export function describeHits(hits: ScanHit[]): string {
  const groups = new Map<string, { rows: Set<string>; forms: Set<string> }>();
  for (const hit of hits) {
    const key = `${placeOf(hit)} [${hit.needle}]`;
    const group = groups.get(key) ?? { rows: new Set(), forms: new Set() };
    group.rows.add(hit.rowId);
    group.forms.add(hit.form);
    groups.set(key, group);
  }
  return [...groups]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, g]) => `${key}: ${g.rows.size} row(s) (${[...g.rows].slice(0, 3).join('; ')}${g.rows.size > 3 ? '; …' : ''}) as ${[...g.forms].join(', ')}`)
    .join('\n');
}

/** The needles (in any stored form) a response body, a page or a file contains: "label (form)" each. */
export function formsInText(text: string, needles: Needle[]): string[] {
  const lower = text.toLowerCase();
  return needles.flatMap((needle) =>
    storedForms(needle)
      .filter((form) => lower.includes(form.text.toLowerCase()))
      .map((form) => `${form.needle} (${form.form})`),
  );
}
