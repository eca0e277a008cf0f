// Merchant API: payments (docs/api.md "Routes").
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { ListPaymentsQuery, PaymentList, PaymentResponse } from './payments.schemas.ts';
import { serializePayment, type createPaymentsService } from './payments.service.ts';

export function paymentsRoutes(service: ReturnType<typeof createPaymentsService>) {
  return async (app: App) => {
    app.get(
      '/payments',
      {
        schema: {
          operationId: 'listPayments',
          summary: 'List payments, newest first',
          tags: ['payments'],
          querystring: ListPaymentsQuery,
          response: { 200: PaymentList },
        },
      },
      async (request) => {
        const page = await service.listPayments(request.query);
        return { items: page.items.map((row) => serializePayment(row)), nextCursor: page.nextCursor };
      },
    );

    app.get(
      '/payments/:id',
      {
        schema: {
          operationId: 'getPayment',
          summary: 'Get a payment with its attempts',
          tags: ['payments'],
          params: IdParams,
          response: { 200: PaymentResponse },
        },
      },
      async (request) => serializePayment(await service.getPayment(request.params.id)),
    );
  };
}
