// Keyset pagination (docs/api.md "Shapes": lists are {items, nextCursor}): newest first by (createdAt, id); the cursor is
// the last item's key, opaque to clients.
import { ValidationError } from './errors.ts';
import { isStorableInstant, isUuid } from './input.ts';

export interface PageKey {
  createdAt: Date;
  id: string;
}

export function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.createdAt.toISOString(), key.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): PageKey | undefined {
  if (!cursor) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    if (!isStorableInstant(date) || !isUuid(id)) throw new Error('bad cursor');
    return { createdAt: date, id };
  } catch {
    throw new ValidationError('cursor is not valid');
  }
}

/** The Prisma where-clause of a list's createdFrom (inclusive) and createdTo (exclusive) filters. */
export function createdWithin(filter: { createdFrom?: string; createdTo?: string }) {
  return { createdAt: { gte: filter.createdFrom ? new Date(filter.createdFrom) : undefined, lt: filter.createdTo ? new Date(filter.createdTo) : undefined } };
}

/**
 * The Prisma where-clause for "after this key" in (createdAt desc, id desc) order. The bound `createdAt <= key` says
 * nothing the OR does not, but PostgreSQL starts its index scan there: the OR alone is a filter over every newer row,
 * slow deep in a long list (docs/benchmarks.md). It holds an OR and a createdAt: combine it with a filter that has
 * either under AND, never by spreading (listPayments).
 */
export function afterCursor(key: PageKey | undefined) {
  return afterCursorOn('createdAt', key);
}

/** The same rule for a list ordered by another instant column (erasures by erasedAt); the key's `createdAt` holds its value. */
export function afterCursorOn<C extends string>(column: C, key: PageKey | undefined) {
  if (!key) return {};
  const at = <T>(value: T) => ({ [column]: value }) as Record<C, T>;
  return { ...at({ lte: key.createdAt }), OR: [at({ lt: key.createdAt }), { ...at(key.createdAt), id: { lt: key.id } }] };
}

export const PAGE_ORDER = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** The same two rules in SQL, for reads through the pg pool: the table aliased `alias`, `param` placing values. */
export const PAGE_ORDER_SQL = (alias: string) => `ORDER BY ${alias}."createdAt" DESC, ${alias}."id" DESC`;
export function afterCursorSql(alias: string, key: PageKey, param: (value: unknown) => string): string {
  return `(${alias}."createdAt", ${alias}."id") < (${param(key.createdAt)}, ${param(key.id)}::uuid)`;
}

/**
 * A page's row limit as a literal for the statement's text, never a parameter. With `LIMIT $n` PostgreSQL cannot cost a
 * generic plan (it assumes a tenth of the table), so it plans a named statement anew on every execution (database CPU
 * on every page, docs/benchmarks.md); with the number in the text the plan is made once per connection.
 * The limits are the schema's (1 to 100, plus one), so there are few distinct texts.
 */
export function limitSql(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`limitSql: not a row count: ${rows}`);
  return `LIMIT ${rows}`;
}

/** Fetch limit + 1 rows; this returns the page and the cursor of the next one. */
export function toPage<T extends PageKey>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
