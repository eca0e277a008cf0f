// Merchant API: subscriptions (DESIGN.md §5).
import type { App } from '../../app-types.ts';
import { codesByStatus, StateConflictError } from '../../lib/errors.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { IdParams } from '../checkout/checkout.schemas.ts';
import { CancelSubscriptionBody, ListSubscriptionsQuery, SubscriptionList, SubscriptionResponse } from './subscriptions.schemas.ts';
import { serializeSubscription, type createSubscriptionsService } from './subscriptions.service.ts';

export function subscriptionsRoutes(service: ReturnType<typeof createSubscriptionsService>, idempotency: Idempotency) {
  return async (app: App) => {
    app.addHook('onRequest', app.requireApiKey);

    app.get('/subscriptions', { schema: { operationId: 'listSubscriptions', summary: 'List subscriptions, newest first', tags: ['subscriptions'], querystring: ListSubscriptionsQuery, response: { 200: SubscriptionList } } }, async (request) => {
      const page = await service.listSubscriptions(request.query);
      return { items: page.items.map(serializeSubscription), nextCursor: page.nextCursor };
    });

    app.get('/subscriptions/:id', { schema: { operationId: 'getSubscription', summary: 'Get a subscription', tags: ['subscriptions'], params: IdParams, response: { 200: SubscriptionResponse } } }, async (request) =>
      serializeSubscription(await service.getSubscription(request.params.id)),
    );

    app.post(
      '/subscriptions/:id/cancel',
      {
        schema: {
          operationId: 'cancelSubscription',
          summary: 'Cancel a subscription now or at the end of its period',
          tags: ['subscriptions'],
          params: IdParams,
          headers: idempotencyHeaders(false),
          body: CancelSubscriptionBody,
          response: { 200: SubscriptionResponse },
          errors: codesByStatus(StateConflictError, IdempotencyKeyReusedError, IdempotencyInProgressError),
        },
      },
      async (request, reply) => {
        const body = (request.body ?? {}) as { atPeriodEnd?: boolean };
        return idempotency.run(request, reply, async () => ({
          statusCode: 200,
          body: serializeSubscription(await service.cancelSubscription(request.params.id, { atPeriodEnd: body.atPeriodEnd ?? false })),
        }));
      },
    );
  };
}
