// The benchmarks' seeder (bench/seed.ts) at a tiny size: the history it writes is one the service reads as its own.
// The MRR movements come from the database's triggers, so the MRR report over the whole history ends at the
// subscriptions' MRR now, and every kind of movement, payment outcome and attempt it promises is there.
import { describe, expect, it } from 'vitest';
import { seedHistory } from '../../bench/seed.ts';
import { sqlQuery } from '../../src/db/prisma.ts';
import { adminHeaders } from '../helpers/billing.ts';
import { useRunningApp } from '../helpers/database.ts';

const service = useRunningApp();

describe('bench/seed.ts', () => {
  it('seeds subscriptions, payments, attempts and movements that the reports add up', async () => {
    const now = service.app.clock.now();
    const stats = await seedHistory(service.databaseUrl, { subscriptions: 400, payments: 3000, months: 24, now, unknownRate: 0.2 });
    expect(stats).toMatchObject({ subscriptions: 400, payments: 3000 });
    expect(stats.cycles).toBeGreaterThan(3000);
    expect(stats.attempts).toBeGreaterThan(stats.payments);

    const kinds = await sqlQuery<{ kind: string; n: number }>(service.app.db, 'SELECT "kind"::text, count(*)::int AS "n" FROM "mrr_movements" GROUP BY 1', []);
    expect(kinds.map((k) => k.kind).sort()).toEqual(['CHURN', 'CONTRACTION', 'EXPANSION', 'NEW', 'REACTIVATION']);
    const outcomes = await sqlQuery<{ status: string }>(service.app.db, 'SELECT DISTINCT "status"::text FROM "payments"', []);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['CANCELED', 'FAILED', 'SUCCEEDED', 'UNKNOWN']);
    const latest = await sqlQuery<{ at: Date }>(service.app.db, 'SELECT max("approvedAt") AS "at" FROM "payments"', []);
    expect(latest[0]!.at.getTime()).toBeLessThanOrEqual(now.getTime());

    const month = (offset: number) => {
      const d = new Date(now.getTime() + 9 * 3600_000);
      d.setUTCDate(1);
      d.setUTCMonth(d.getUTCMonth() + offset);
      return d.toISOString().slice(0, 7);
    };
    const response = await service.app.inject({ method: 'GET', url: `/admin/reports/mrr?from=${month(-25)}&to=${month(0)}`, headers: adminHeaders });
    expect(response.statusCode).toBe(200);
    const months = response.json().months as Array<{ startingMrr: number; endingMrr: number; new: number }>;
    expect(months[0]!.startingMrr).toBe(0);
    expect(months.at(-1)!.endingMrr).toBe(stats.mrr);
    expect(stats.mrr).toBeGreaterThan(0);
  }, 60_000);
});
