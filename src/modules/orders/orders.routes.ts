// Merchant API: one-time orders (docs/api.md "Routes").
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { CreateOrderBody, OrderResponse } from './orders.schemas.ts';
import type { createOrdersService } from './orders.service.ts';
import { TAGS } from '../../lib/api-document.ts';
import { IDEMPOTENT_ERRORS, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function ordersRoutes(service: ReturnType<typeof createOrdersService>, idempotency: Idempotency) {
  return async (app: App) => {
    app.post(
      '/orders',
      {
        schema: {
          operationId: 'createOrder',
          summary: 'Create a one-time order: the parameters of the gateway’s window',
          description:
            'Answers the order (PENDING) with the window’s parameters: send the customer to `window.url`. When the customer approves, the ' +
            'gateway sends the browser to /payments/success, which confirms the payment for the stored amount: the order becomes COMPLETED ' +
            'with its paymentId (events order.completed and payment.succeeded).',
          tags: [TAGS.orders.name],
          headers: idempotencyHeaders(false),
          body: CreateOrderBody,
          response: { 201: OrderResponse },
          responseDescriptions: { 201: 'The order, PENDING: send the customer to window.url' },
          errors: IDEMPOTENT_ERRORS,
        },
        links: {
          201: {
            getOrder: { operationId: 'getOrder', parameters: { id: '$response.body#/id' }, description: 'Read it again: COMPLETED with paymentId once paid' },
          },
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
          tags: [TAGS.orders.name],
          params: IdParams,
          response: { 200: OrderResponse },
          responseDescriptions: { 200: 'The order as it is now' },
        },
        links: { 200: { getPayment: { operationId: 'getPayment', parameters: { id: '$response.body#/paymentId' }, description: 'Its payment' } } },
      },
      async (request) => service.getOrder(request.params.id),
    );
  };
}
