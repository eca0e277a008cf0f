// The charging pipeline's per-row writes (answers recorded one by one, charges prepared one by one) share one limit
// of half SCHEDULER_CONCURRENCY transactions at once, well inside the database pool (app.ts): when they were not
// limited, a pass whose every call was declined opened up to 4 × SCHEDULER_CONCURRENCY transactions at once, Prisma
// could not start some within its wait, and those definite declines were left IN_FLIGHT, then UNKNOWN.
import { expect, it } from 'vitest';
import { createKeyring } from '../../../src/lib/crypto.ts';
import { seedDueSubscriptions } from '../../helpers/bulk.ts';
import { sandboxFault } from '../../helpers/checkout.ts';
import { useRunningApp } from '../../helpers/database.ts';

const CONCURRENCY = 4;
const COUNT = 64;
const running = useRunningApp({ SCHEDULER_CONCURRENCY: String(CONCURRENCY), SCHEDULER_BATCH_SIZE: '32' });

it('a pass whose every call is declined records every decline, never more transactions at once than half its slots', async () => {
  const { app } = running;
  await seedDueSubscriptions(app.db, createKeyring(app.config.encryptionKeys), {
    count: COUNT,
    sandboxUrl: `${running.baseUrl}/sandbox`,
    dueAt: new Date(Date.now() - 60_000),
  });
  await sandboxFault(app, { operation: 'BILLING_CONFIRM', kind: 'decline', count: COUNT });
  // Counts the interactive transactions open at once (each holds a pool connection until it ends).
  const db = app.db as unknown as { $transaction: (...args: unknown[]) => Promise<unknown> };
  const original = db.$transaction;
  let open = 0;
  let most = 0;
  db.$transaction = async (...args: unknown[]) => {
    open += 1;
    most = Math.max(most, open);
    try {
      return await original.apply(app.db, args);
    } finally {
      open -= 1;
    }
  };
  let report: Awaited<ReturnType<typeof app.charges.runPass>>;
  try {
    report = await app.charges.runPass();
  } finally {
    db.$transaction = original;
  }
  expect(report).toEqual({ claimed: COUNT, succeeded: 0, declined: COUNT, unknown: 0, skipped: 0 });
  expect(await app.db.paymentAttempt.count({ where: { status: 'DECLINED' } })).toBe(COUNT);
  expect(await app.db.paymentAttempt.count({ where: { status: { not: 'DECLINED' } } })).toBe(0);
  expect(most).toBeGreaterThan(0);
  expect(most).toBeLessThanOrEqual(CONCURRENCY / 2);
});
