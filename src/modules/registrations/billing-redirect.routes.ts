// The registrations' browser routes (docs/api.md "Registrations and orders"): the gateway's redirects back from a registration's window (a new
// subscription's, or a new payment method's).
import type { ServiceDeps } from '../shared/service-deps.ts';
import { redirectRoutes } from '../checkout/checkout.routes.ts';
import { completeRegistration, failRegistration } from './complete-registration.ts';

export function billingRedirectRoutes(deps: ServiceDeps) {
  return redirectRoutes([
    {
      path: '/billing/success',
      operationId: 'billingSuccess',
      summary: 'The gateway’s success redirect of a registration: issues the billing key, creates the subscription',
      handle: (fields) => completeRegistration(deps, fields),
    },
    {
      path: '/billing/fail',
      operationId: 'billingFail',
      summary: 'The gateway’s failure redirect of a registration',
      handle: (fields) => failRegistration(deps, fields),
    },
  ]);
}
