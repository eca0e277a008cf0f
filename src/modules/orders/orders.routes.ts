// Merchant API: one-time orders (DESIGN.md §5).
import type { App } from '../../app.ts';
import { IdParams } from '../checkout/checkout.schemas.ts';
import { CreateOrderBody, OrderResponse } from './orders.schemas.ts';
import type { createOrdersService } from './orders.service.ts';

export function ordersRoutes(service: ReturnType<typeof createOrdersService>) {
  return async (app: App) => {
    app.addHook('onRequest', app.requireApiKey);

    app.post('/orders', { schema: { operationId: 'createOrder', summary: 'Create a one-time order: the parameters of the gateway’s window', tags: ['orders'], body: CreateOrderBody, response: { 201: OrderResponse } } }, async (request, reply) =>
      reply.status(201).send(await service.createOrder(request.body)),
    );

    app.get('/orders/:id', { schema: { operationId: 'getOrder', summary: 'Get an order (with paymentId once paid)', tags: ['orders'], params: IdParams, response: { 200: OrderResponse } } }, async (request) =>
      service.getOrder(request.params.id),
    );
  };
}
