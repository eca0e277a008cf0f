// Reports (/console/reports, docs/console.md "Operator console"; docs/reconciliation.md "Revenue reports"): MRR movements by month as a chart
// (mrr-chart.ts, server-rendered SVG) and a table, revenue and recovery by month, over the months chosen in a form
// (by default the last 12 months to the current one by the service's clock), and each report's CSV. The figures are
// the report routes' own (the same builders over the same Korea calendar periods) and the CSV is theirs (lib/csv.ts).
import type { FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { toCsv } from '../../lib/csv.ts';
import { buildMrrReport } from '../reports/mrr-report.ts';
import { type Period, periodsBetween } from '../reports/periods.ts';
import { buildRecoveryReport } from '../reports/recovery-report.ts';
import { MonthRangeQuery } from '../reports/reports.schemas.ts';
import { buildRevenueReport } from '../reports/revenue-report.ts';
import { renderPage, speechOf } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { dropBlankFields, listHref } from './list-filters.ts';
import { renderMrrChart } from './mrr-chart.ts';
import { readDb } from '../shared/read-db.ts';

const MonthsQuery = Type.Object(
  { from: Type.Optional(MonthRangeQuery.properties.from), to: Type.Optional(MonthRangeQuery.properties.to) },
  { additionalProperties: false },
);

/** Each report by its name in the export's URL: its rows over the periods, as the admin route answers them in CSV. */
const REPORTS: Record<'mrr' | 'revenue' | 'recovery', (db: Db, periods: Period[], zone: string) => Promise<readonly object[]>> = {
  mrr: buildMrrReport,
  revenue: buildRevenueReport,
  recovery: buildRecoveryReport,
};

const dropBlank = async (request: FastifyRequest) => {
  dropBlankFields(request.query);
};

/** The months shown when the form leaves them out: the 12 months up to the current one, in the report's zone. */
export function defaultMonths(now: Date, zone: string, given: { from?: string; to?: string }): { from: string; to: string } {
  const to = given.to ?? DateTime.fromJSDate(now, { zone }).toFormat('yyyy-MM');
  const from = given.from ?? DateTime.fromFormat(to, 'yyyy-MM', { zone }).minus({ months: 11 }).toFormat('yyyy-MM');
  return { from, to };
}

export function reportsPage(deps: ConsoleDeps) {
  const { clock, config } = deps.service;
  const zone = config.timezone;
  const periodsOf = (query: { from?: string; to?: string }) => {
    const months = defaultMonths(clock.now(), zone, query);
    return { months, periods: periodsBetween(months.from, months.to, 'month', zone, clock.now()) };
  };

  return async (scope: App) => {
    scope.get('/reports', { schema: { querystring: MonthsQuery }, preValidation: dropBlank }, async (request, reply) => {
      const { months, periods } = periodsOf(request.query);
      const db = await readDb(request);
      const [mrr, revenue, recovery] = await Promise.all([
        buildMrrReport(db, periods, zone),
        buildRevenueReport(db, periods, zone),
        buildRecoveryReport(db, periods, zone),
      ]);
      const exportHref = (name: keyof typeof REPORTS) => listHref(`/console/reports/${name}/export`, months);
      const says = speechOf(request);
      return renderPage(request, reply, 'reports', {
        title: says.t('console.frame.nav.reports'),
        months,
        mrr,
        chart: renderMrrChart(mrr, says),
        revenue,
        recovery,
        exports: { mrr: exportHref('mrr'), revenue: exportHref('revenue'), recovery: exportHref('recovery') },
      });
    });

    for (const name of Object.keys(REPORTS) as Array<keyof typeof REPORTS>) {
      scope.get(`/reports/${name}/export`, { schema: { querystring: MonthsQuery }, preValidation: dropBlank }, async (request, reply) => {
        const { months, periods } = periodsOf(request.query);
        const rows = await REPORTS[name](await readDb(request), periods, zone);
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${name}-${months.from}-${months.to}.csv"`)
          .header('cache-control', 'no-store')
          .send(toCsv(rows));
      });
    }
  };
}
