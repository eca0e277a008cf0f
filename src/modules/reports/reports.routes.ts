// The reports' admin routes (docs/reconciliation.md "Revenue reports"): MRR movements, revenue and recovery by Korea calendar period,
// in JSON, or in CSV with `Accept: text/csv`. Each reads its figures in one set-based query; the period that contains
// the service's now (app.clock) ends now. They read the replica when there is one (shared/read-db.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import { toCsv } from '../../lib/csv.ts';
import { TAGS } from '../../lib/api-document.ts';
import { readDb } from '../shared/read-db.ts';
import { buildMrrReport } from './mrr-report.ts';
import { monthsBetweenDays, periodsBetween } from './periods.ts';
import { buildRecoveryReport } from './recovery-report.ts';
import { MonthRangeQuery, MrrReport, RecoveryReport, RevenueQuery, RevenueReport } from './reports.schemas.ts';
import { buildRevenueReport } from './revenue-report.ts';

const CSV = 'text/csv';

/** The rows as CSV when the caller asked for it (a report's periods), else the JSON answer. */
function answer<T extends object>(request: FastifyRequest, reply: FastifyReply, body: T, rows: readonly object[]) {
  if (!request.headers.accept?.toLowerCase().includes(CSV)) return body;
  return reply.type(`${CSV}; charset=utf-8`).send(toCsv(rows));
}

/** A report's CSV answer (Accept: text/csv), as the API document lists it beside the JSON. */
const csvOf = (rows: string) => ({
  'text/csv': { schema: { type: 'string', description: `UTF-8 with BOM: ${rows}; nested names joined by dots (byMethod.CARD.net)` } },
});

export function reportsRoutes() {
  return async (app: App) => {
    const tags = [TAGS.adminReports.name];
    const zone = app.config.timezone;
    const csvNote = ' With `Accept: text/csv`: the periods as CSV (UTF-8 with BOM, nested names joined by dots).';

    app.get(
      '/reports/mrr',
      {
        schema: {
          operationId: 'reportMrr',
          summary: 'MRR movements by Korea calendar month',
          description: `Starting MRR, new, expansion, reactivation, contraction, churn and ending MRR per month, with subscription counts and churn rates.${csvNote}`,
          tags,
          querystring: MonthRangeQuery,
          response: { 200: MrrReport },
          otherMedia: { 200: csvOf('a header row, then one row per month') },
        },
      },
      async (request, reply) => {
        const periods = periodsBetween(request.query.from, request.query.to, 'month', zone, app.clock.now());
        const months = await buildMrrReport(await readDb(request), periods, zone);
        return answer(request, reply, { timezone: zone, currency: 'KRW' as const, months }, months);
      },
    );

    app.get(
      '/reports/revenue',
      {
        schema: {
          operationId: 'reportRevenue',
          summary: 'Payments and refunds by Korea calendar day or month',
          description: `Succeeded payments by the date of approval, succeeded refunds by the date they were requested, net, and each by method and by gateway.${csvNote}`,
          tags,
          querystring: RevenueQuery,
          response: { 200: RevenueReport },
          otherMedia: { 200: csvOf('a header row, then one row per day or month') },
        },
      },
      async (request, reply) => {
        const { from, to, granularity = 'day' } = request.query;
        const now = app.clock.now();
        const periods = granularity === 'month' ? monthsBetweenDays(from, to, zone, now) : periodsBetween(from, to, 'day', zone, now);
        const items = await buildRevenueReport(await readDb(request), periods, zone);
        return answer(request, reply, { timezone: zone, currency: 'KRW' as const, items }, items);
      },
    );

    app.get(
      '/reports/recovery',
      {
        schema: {
          operationId: 'reportRecovery',
          summary: 'Declined recurring cycles by Korea calendar month of their first decline, and what became of them',
          description: `Failed cycles, recovered, lost and still open, the recovery rate and the amount recovered.${csvNote}`,
          tags,
          querystring: MonthRangeQuery,
          response: { 200: RecoveryReport },
          otherMedia: { 200: csvOf('a header row, then one row per month') },
        },
      },
      async (request, reply) => {
        const periods = periodsBetween(request.query.from, request.query.to, 'month', zone, app.clock.now());
        const months = await buildRecoveryReport(await readDb(request), periods, zone);
        return answer(request, reply, { months }, months);
      },
    );
  };
}
