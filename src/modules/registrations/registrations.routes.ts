// Merchant API: registrations (docs/api.md "Routes"). Thin: schema, auth, one call of the operation's file. The browser
// routes of a registration's window are in billing-redirect.routes.ts.
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { CreateRegistrationBody, PaymentMethodBody, RegistrationResponse } from './registrations.schemas.ts';
import { codesByStatus, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { createRegistration } from './create-registration.ts';
import { createPaymentMethodRegistration } from './replace-payment-method.ts';
import { getRegistration } from './registrations.read.ts';
import { IDEMPOTENT_ERRORS, IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function registrationsRoutes(deps: ServiceDeps, idempotency: Idempotency) {
  return async (app: App) => {
    app.post(
      '/registrations',
      {
        schema: {
          operationId: 'createRegistration',
          summary: 'Create a registration: the parameters of the gateway’s window for a new subscription',
          tags: ['registrations'],
          headers: idempotencyHeaders(false),
          body: CreateRegistrationBody,
          response: { 201: RegistrationResponse },
          errors: IDEMPOTENT_ERRORS,
        },
      },
      async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 201, body: await createRegistration(deps, request.body) })),
    );

    app.post(
      '/subscriptions/:id/payment-method',
      {
        schema: {
          operationId: 'replacePaymentMethod',
          summary: 'A registration whose window replaces the subscription’s card or phone (MOBILE: pays the owed cycle)',
          tags: ['subscriptions'],
          params: IdParams,
          headers: idempotencyHeaders(false),
          body: PaymentMethodBody,
          response: { 201: RegistrationResponse },
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
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => ({
          statusCode: 201,
          body: await createPaymentMethodRegistration(deps, request.params.id, request.body ?? {}),
        })),
    );

    app.get(
      '/registrations/:id',
      {
        schema: {
          operationId: 'getRegistration',
          summary: 'Get a registration (with subscriptionId once completed)',
          tags: ['registrations'],
          params: IdParams,
          response: { 200: RegistrationResponse },
        },
      },
      async (request) => getRegistration(deps, request.params.id),
    );
  };
}
