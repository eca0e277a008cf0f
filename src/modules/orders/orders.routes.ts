// Merchant API: one-time orders (docs/api.md "Routes").
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { CreateOrderBody, OrderResponse } from './orders.schemas.ts';
import type { createOrdersService } from './orders.service.ts';
import { IDEMPOTENT_ERRORS, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function ordersRoutes(service: ReturnType<typeof createOrdersService>, idempotency: Idempotency) {
  return async (app: App) => {
    app.post(
      '/orders',
      {
        schema: {
          operationId: 'createOrder',
          summary: 'Create a one-time order: the parameters of the gateway’s window',
          tags: ['orders'],
          headers: idempotencyHeaders(false),
          body: CreateOrderBody,
          response: { 201: OrderResponse },
          errors: IDEMPOTENT_ERRORS,
        },
      },
      async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 201, body: await service.createOrder(request.body) })),
    );

    app.get(
      '/orders/:id',
      {
        schema: {
          operationId: 'getOrder',
          summary: 'Get an order (with paymentId once paid)',
          tags: ['orders'],
          params: IdParams,
          response: { 200: OrderResponse },
        },
      },
      async (request) => service.getOrder(request.params.id),
    );
  };
}
