// The console's lists of subscriptions and payments (docs/console.md "Operator console"): the admin routes' filters
// (list-filters.ts derives each page's query schema from the admin route's), the admin routes' services
// (pageSubscriptions, listPayments), keyset pages (a next-page link carrying the filters and the cursor), and the
// whole filtered list as CSV (list-export.ts). Each row links to its Subscription or Payment page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { pageSubscriptions } from '../subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import { renderPage, speechOf } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { csvStream, PAYMENT_COLUMNS, type PageReader, SUBSCRIPTION_COLUMNS } from './list-export.ts';
import { readDb } from '../shared/read-db.ts';
import { ConsolePaymentsQuery, ConsoleSubscriptionsQuery, dropBlankFields, listHref, toAdminFilter } from './list-filters.ts';

/** A form's blank fields filter nothing: dropped before the query is validated. */
const dropBlank = async (request: FastifyRequest) => {
  dropBlankFields(request.query);
};

/** The links of a list page: the next page (same filters), the first page, and the export (whole filtered list). */
function links(path: string, query: Record<string, unknown>, nextCursor: string | null) {
  const { limit, cursor, ...filters } = query;
  const paging = limit === 20 ? filters : { ...filters, limit };
  return {
    next: nextCursor ? listHref(path, paging, nextCursor) : undefined,
    first: cursor ? listHref(path, paging) : undefined,
    exportHref: listHref(`${path}/export`, filters),
  };
}

function sendCsv<T extends object>(reply: FastifyReply, name: string, columns: readonly string[], readPage: PageReader<T>) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}.csv"`)
    .header('cache-control', 'no-store')
    .send(csvStream(columns, readPage));
}

export function listPages(deps: ConsoleDeps) {
  const { payments } = deps;
  // Each page (and each page of an export) reads from the request's client: the replica when there is one (shared/read-db.ts).
  const readSubscriptions =
    (db: Db, filter: ReturnType<typeof toAdminFilter<ConsoleSubscriptionsQuery>>): PageReader<ReturnType<typeof serializeSubscription>> =>
    async (cursor, limit) => {
      const page = await pageSubscriptions(db, { ...filter, cursor, limit });
      return { items: page.items.map(serializeSubscription), nextCursor: page.nextCursor };
    };

  return async (scope: App) => {
    scope.get('/subscriptions', { schema: { querystring: ConsoleSubscriptionsQuery }, preValidation: dropBlank }, async (request, reply) => {
      const filter = toAdminFilter(request.query);
      const page = await readSubscriptions(await readDb(request), filter)(request.query.cursor, request.query.limit);
      return renderPage(request, reply, 'subscriptions', {
        title: speechOf(request).t('console.frame.nav.subscriptions'),
        filters: request.query,
        items: page.items,
        ...links('/console/subscriptions', request.query, page.nextCursor),
      });
    });
    scope.get('/subscriptions/export', { schema: { querystring: ConsoleSubscriptionsQuery }, preValidation: dropBlank }, async (request, reply) =>
      sendCsv(reply, 'subscriptions', SUBSCRIPTION_COLUMNS, readSubscriptions(await readDb(request), toAdminFilter(request.query))),
    );

    scope.get('/payments', { schema: { querystring: ConsolePaymentsQuery }, preValidation: dropBlank }, async (request, reply) => {
      const page = await payments.listPayments(toAdminFilter(request.query), await readDb(request));
      return renderPage(request, reply, 'payments', {
        title: speechOf(request).t('console.frame.nav.payments'),
        filters: request.query,
        items: page.items,
        ...links('/console/payments', request.query, page.nextCursor),
      });
    });
    scope.get('/payments/export', { schema: { querystring: ConsolePaymentsQuery }, preValidation: dropBlank }, async (request, reply) => {
      const filter = toAdminFilter(request.query);
      const db = await readDb(request);
      return sendCsv(reply, 'payments', PAYMENT_COLUMNS, (cursor, limit) => payments.listPayments({ ...filter, cursor, limit }, db));
    });
  };
}
