// The registrations' browser routes (DESIGN.md §5): the gateway's redirects back from a registration's window.
import type { ServiceDeps } from '../shared/service-deps.ts';
import { redirectRoutes } from '../checkout/checkout.routes.ts';
import { createRegistrationCheckout } from './complete-registration.ts';

export function billingRedirectRoutes(deps: ServiceDeps) {
  const checkout = createRegistrationCheckout(deps);
  return redirectRoutes([
    {
      path: '/billing/success',
      operationId: 'billingSuccess',
      summary: 'The gateway’s success redirect of a registration: issues the billing key, creates the subscription',
      handle: checkout.handleSuccess,
    },
    { path: '/billing/fail', operationId: 'billingFail', summary: 'The gateway’s failure redirect of a registration', handle: checkout.handleFail },
  ]);
}
