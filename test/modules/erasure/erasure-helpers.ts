// What the erasure tests share: the route called as an operator, a scan of every row of every table for a personal
// value (the row's text form: every column, JSON and all), and a customer's rows counted by userId.
import { randomUUID } from 'node:crypto';
import type { App } from '../../../src/app.ts';
import type { Db } from '../../../src/db/prisma.ts';
import { adminHeaders } from '../../helpers/billing.ts';

export function erase(app: App, userId: string, body: Record<string, unknown>, key: string | null = randomUUID()) {
  return app.inject({
    method: 'POST',
    url: `/admin/customers/${encodeURIComponent(userId)}/erasure`,
    headers: key === null ? adminHeaders : { ...adminHeaders, 'idempotency-key': key },
    payload: body,
  });
}

/** Every table holding one of `values` anywhere in a row, as `table: value` (empty when none does). */
export async function personalTrace(db: Db, values: string[]): Promise<string[]> {
  const tables = await db.$queryRawUnsafe<Array<{ name: string }>>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT IN ('_prisma_migrations', '_function_files') ORDER BY 1`,
  );
  const found: string[] = [];
  for (const { name } of tables) {
    for (const value of values) {
      const [row] = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM "${name}" t WHERE strpos(t::text, $1) > 0`, value);
      if (row!.n > 0) found.push(`${name}: ${value}`);
    }
  }
  return found;
}

/** How many rows of each kind carry `userId`. */
export async function snapshotOfCustomer(db: Db, userId: string) {
  return {
    subscriptions: await db.subscription.count({ where: { userId } }),
    registrations: await db.registration.count({ where: { userId } }),
    orders: await db.order.count({ where: { userId } }),
    billingKeys: await db.billingKey.count({ where: { userId } }),
    portalSessions: await db.portalSession.count({ where: { userId } }),
  };
}

/**
 * Each table's rows as one digest (idempotency records aside: a refusal's answer is stored there by design; and the
 * events' public numbering, which the app's dispatcher gives committed events at any time).
 */
export async function digestOfTables(db: Db): Promise<Record<string, string>> {
  const tables = await db.$queryRawUnsafe<Array<{ name: string }>>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()
        AND tablename NOT IN ('_prisma_migrations', '_function_files', 'idempotency_records', 'event_sequencer') ORDER BY 1`,
  );
  const digest: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await db.$queryRawUnsafe<Array<{ d: string | null }>>(
      `SELECT md5(string_agg((to_jsonb(t) - 'sequence')::text, '|' ORDER BY (to_jsonb(t) - 'sequence')::text)) AS d FROM "${name}" t`,
    );
    digest[name] = row!.d ?? '';
  }
  return digest;
}
