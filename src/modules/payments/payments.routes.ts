// Merchant API: payments (docs/api.md "Routes").
import type { App } from '../../app-types.ts';
import { TAGS } from '../../lib/api-document.ts';
import { IdParams } from '../shared/schemas.ts';
import { readDb } from '../shared/read-db.ts';
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
          tags: [TAGS.payments.name],
          querystring: ListPaymentsQuery,
          response: { 200: PaymentList },
        },
      },
      async (request) => {
        const page = await service.listPayments(request.query, await readDb(request));
        return { items: page.items.map((row) => serializePayment(row)), nextCursor: page.nextCursor };
      },
    );

    app.get(
      '/payments/:id',
      {
        schema: {
          operationId: 'getPayment',
          summary: 'Get a payment with its attempts',
          tags: [TAGS.payments.name],
          params: IdParams,
          response: { 200: PaymentResponse },
          responseDescriptions: { 200: 'The payment with its attempts and refunds' },
        },
        links: {
          200: {
            getSubscription: {
              operationId: 'getSubscription',
              parameters: { id: '$response.body#/subscriptionId' },
              description: 'The subscription it charged',
            },
            refundPayment: {
              operationId: 'refundPayment',
              parameters: { id: '$response.body#/id' },
              description: 'Refund it (an operator, with the admin token); its refunds are listed in `refunds`',
            },
          },
        },
      },
      async (request) => serializePayment(await service.getPayment(request.params.id)),
    );
  };
}
