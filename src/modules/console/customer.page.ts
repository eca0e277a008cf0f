// The Customer page (/console/customers?userId=, docs/console.md "Operator console"): a customer found by their exact
// userId, with their subscriptions, one-time orders and payments, each linked to its page, and the "Erase customer"
// box leading to the erasure's confirmation page (customer-erasure.page.ts). An erased customer's pseudonym finds the
// records that carry it, and the page says the customer was erased, when, and until when their identity is sealed.
// The userId travels in the query string only: request logs keep the path, never the query (src/lib/logger.ts).
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { renderPage, speechOf } from './console-page.ts';
import { hasRecords, readCustomer } from './customer.queries.ts';
import { listHref } from './list-filters.ts';
import { readDb } from '../shared/read-db.ts';

const CustomerQuery = Type.Object({
  userId: Type.Optional(Type.String({ maxLength: 200 })),
  done: Type.Optional(Type.String({ maxLength: 40 })),
});

export function customerPage(deps: ConsoleDeps) {
  return async (scope: App) => {
    scope.get('/customers', { schema: { querystring: CustomerQuery } }, async function showCustomer(request, reply) {
      const userId = request.query.userId?.trim() ?? '';
      const { t } = speechOf(request);
      if (userId === '') return renderPage(request, reply, 'customer', { title: t('console.customers.search.heading'), userId });
      const records = await readCustomer(await readDb(request), deps.payments, userId);
      return renderPage(request, reply, 'customer', {
        title: t('console.customers.search.title', { userId }),
        userId,
        records,
        canErase: records.erasure === null && hasRecords(records),
        subscriptionsHref: listHref('/console/subscriptions', { userId }),
        paymentsHref: listHref('/console/payments', { userId }),
        done: request.query.done,
      });
    });
  };
}
