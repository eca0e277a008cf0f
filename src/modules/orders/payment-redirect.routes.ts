// The orders' browser routes (DESIGN.md §5): the gateway's redirects back from an order's window.
import { redirectRoutes } from '../checkout/checkout.routes.ts';
import type { createOrdersService } from './orders.service.ts';

export function paymentRedirectRoutes(orders: Pick<ReturnType<typeof createOrdersService>, 'handleSuccess' | 'handleFail'>) {
  return redirectRoutes([
    {
      path: '/payments/success',
      operationId: 'paymentSuccess',
      summary: 'The gateway’s success redirect of an order: confirms the payment with the stored amount',
      handle: orders.handleSuccess,
    },
    { path: '/payments/fail', operationId: 'paymentFail', summary: 'The gateway’s failure redirect of an order', handle: orders.handleFail },
  ]);
}
