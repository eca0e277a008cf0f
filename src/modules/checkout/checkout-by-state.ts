// The read of a registration or an order by its single-use `state`: the first read of every browser redirect, which
// browsers replay (through Prisma it was most of a replay's cost, docs/benchmarks.md "Measurements behind choices in the code"), so it is one named statement.
import { columnsOf, sqlQuery, type Db } from '../../db/prisma.ts';

/**
 * The reader of one kind of checkout by its `state`, with the id of what it made (`made`: a subquery on the checkout
 * aliased `c`).
 */
export function checkoutByState<Row>(table: 'registrations' | 'orders', fields: Record<string, string>, made: { as: string; sql: string }) {
  const text = `SELECT ${columnsOf(fields, 'c')}, ${made.sql} AS "${made.as}" FROM "${table}" c WHERE c."state" = $1`;
  return async (db: Db, state: string): Promise<Row | null> => (await sqlQuery<Row & object>(db, text, [state]))[0] ?? null;
}
