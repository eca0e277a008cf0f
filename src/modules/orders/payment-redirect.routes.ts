// The orders' browser routes (docs/api.md "Registrations and orders"): the gateway's redirects back from an order's window.
import type { ServiceDeps } from '../shared/service-deps.ts';
import { redirectRoutes } from '../checkout/checkout.routes.ts';
import { completeOrder, failOrder } from './complete-order.ts';

export function paymentRedirectRoutes(deps: ServiceDeps) {
  return redirectRoutes([
    {
      path: '/payments/success',
      operationId: 'paymentSuccess',
      summary: 'The gateway’s success redirect of an order: confirms the payment with the stored amount',
      handle: (fields) => completeOrder(deps, fields),
    },
    { path: '/payments/fail', operationId: 'paymentFail', summary: 'The gateway’s failure redirect of an order', handle: (fields) => failOrder(deps, fields) },
  ]);
}
