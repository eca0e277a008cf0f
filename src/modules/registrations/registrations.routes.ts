// Merchant API: registrations (docs/api.md "Routes"). Thin: schema, auth, one call of the operation's file. The browser
// routes of a registration's window are in billing-redirect.routes.ts.
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { CreateRegistrationBody, PaymentMethodBody, RegistrationResponse } from './registrations.schemas.ts';
import { codesByStatus, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { TAGS } from '../../lib/api-document.ts';
import { createRegistration } from './create-registration.ts';
import { createPaymentMethodRegistration } from './replace-payment-method.ts';
import { getRegistration } from './registrations.read.ts';
import { IDEMPOTENT_ERRORS, IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function registrationsRoutes(deps: ServiceDeps, idempotency: Idempotency) {
  return async (app: App) => {
    registerCreate(app, deps, idempotency);
    registerPaymentMethod(app, deps, idempotency);
    registerRead(app, deps);
  };
}

/** POST /registrations: a new subscription's window (create-registration.ts). */
function registerCreate(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  app.post(
    '/registrations',
    {
      schema: {
        operationId: 'createRegistration',
        summary: 'Create a registration: the parameters of the gateway’s window for a new subscription',
        description:
          'Answers the registration (PENDING) with the window’s parameters: send the customer to `window.url` (or open the gateway’s SDK ' +
          'with `window`). When the customer approves, the gateway sends the browser to /billing/success, which issues the billing key, ' +
          'charges the first cycle (unless issueKeyOnly or trialDays) and creates the subscription: the registration becomes COMPLETED with ' +
          'its subscriptionId, and the events registration.completed and subscription.created follow.',
        tags: [TAGS.registrations.name],
        headers: idempotencyHeaders(false),
        body: CreateRegistrationBody,
        response: { 201: RegistrationResponse },
        responseDescriptions: { 201: 'The registration, PENDING: send the customer to window.url' },
        errors: IDEMPOTENT_ERRORS,
      },
      links: {
        201: {
          getRegistration: {
            operationId: 'getRegistration',
            parameters: { id: '$response.body#/id' },
            description: 'Read it again: COMPLETED with subscriptionId once the customer approved',
          },
        },
      },
    },
    async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 201, body: await createRegistration(deps, request.body) })),
  );
}

/** POST /subscriptions/:id/payment-method: a window that replaces a subscription's method (replace-payment-method.ts). */
function registerPaymentMethod(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  app.post(
    '/subscriptions/:id/payment-method',
    {
      schema: {
        operationId: 'replacePaymentMethod',
        summary: 'A registration whose window replaces the subscription’s card or phone (MOBILE: pays the owed cycle)',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: PaymentMethodBody,
        response: { 201: RegistrationResponse },
        responseDescriptions: {
          201: 'A registration of purpose PAYMENT_METHOD, PENDING: send the customer to window.url; on success the subscription takes the new billing key',
        },
        errors: codesByStatus(
          ValidationError,
          NotFoundError,
          StateConflictError,
          RULE_ERRORS.NOT_DUE,
          RULE_ERRORS.PAYMENT_OUTCOME_UNKNOWN,
          IdempotencyKeyReusedError,
          IdempotencyInProgressError,
        ),
      },
      links: {
        201: {
          getRegistration: {
            operationId: 'getRegistration',
            parameters: { id: '$response.body#/id' },
            description: 'Read it again: COMPLETED once the customer approved',
          },
        },
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({
        statusCode: 201,
        body: await createPaymentMethodRegistration(deps, request.params.id, request.body ?? {}),
      })),
  );
}

/** GET /registrations/:id. */
function registerRead(app: App, deps: ServiceDeps) {
  app.get(
    '/registrations/:id',
    {
      schema: {
        operationId: 'getRegistration',
        summary: 'Get a registration (with subscriptionId once completed)',
        tags: [TAGS.registrations.name],
        params: IdParams,
        response: { 200: RegistrationResponse },
        responseDescriptions: { 200: 'The registration as it is now' },
      },
      links: {
        200: {
          getSubscription: {
            operationId: 'getSubscription',
            parameters: { id: '$response.body#/subscriptionId' },
            description: 'The subscription it created (or whose payment method it replaces)',
          },
        },
      },
    },
    async (request) => getRegistration(deps, request.params.id),
  );
}
