// POST /admin/customers/:userId/erasure (docs/operating.md "A customer asks to be forgotten"): erase a customer's
// personal data, admin token, Idempotency-Key required. The idempotency scope never holds the userId (the route's
// pattern, not its path), and the request's hash covers it with the body, so one key sent for two customers is 409
// IDEMPOTENCY_KEY_REUSED. The stored answer names only the erasure and the pseudonym.
import type { App } from '../../app-types.ts';
import { codesByStatus, IDEMPOTENCY_KEY_HEADER, IdempotencyKeyRequiredError } from '../../lib/errors.ts';
import { TAGS } from '../../lib/api-document.ts';
import { scopeOf, type Idempotency } from '../idempotency/idempotency.ts';
import { IDEMPOTENT, RequiredIdempotencyHeader, who } from '../shared/admin-actions.ts';
import { CustomerNotFoundError } from '../shared/customers.ts';
import { ErasureBlockedError } from './erasure.blockers.ts';
import { CustomerParams, ErasureBody, ErasureResponse } from './erasure.schemas.ts';
import type { Erasure } from './erase-customer.ts';

const ROUTE = '/customers/:userId/erasure';

export function erasureRoutes(deps: { erasure: Erasure; idempotency: Idempotency }) {
  return async function registerErasureRoutes(app: App) {
    app.post(
      ROUTE,
      {
        schema: {
          operationId: 'eraseCustomer',
          summary: 'Erase a customer’s personal data (the payment records stay under a pseudonym)',
          tags: [TAGS.adminErasures.name],
          params: CustomerParams,
          headers: RequiredIdempotencyHeader,
          body: ErasureBody,
          response: { 201: ErasureResponse },
          responseDescriptions: { 201: 'The customer is erased: every row that carried the userId carries the pseudonym' },
          errors: codesByStatus(IdempotencyKeyRequiredError, CustomerNotFoundError, ErasureBlockedError, ...IDEMPOTENT),
        },
      },
      async function eraseCustomer(request, reply) {
        const { userId } = request.params;
        const { reason, cancelOpenSubscriptions = false } = request.body;
        const key = String(request.headers[IDEMPOTENCY_KEY_HEADER]);
        const { outcome, replayed } = await deps.idempotency.once(scopeOf('POST', `/admin${ROUTE}`), key, { userId, body: request.body }, async () => ({
          statusCode: 201,
          body: await deps.erasure.erase({ userId, reason, cancelOpenSubscriptions }, who(request, reason)),
        }));
        reply.status(outcome.statusCode as 201);
        if (replayed) reply.header('idempotent-replayed', 'true');
        return outcome.body;
      },
    );
  };
}
