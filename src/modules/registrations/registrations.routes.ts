// Merchant API: registrations (DESIGN.md §5). Thin: schema, auth, one service call.
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { CreateRegistrationBody, PaymentMethodBody, RegistrationResponse } from './registrations.schemas.ts';
import { codesByStatus, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { createRegistrationsService } from './registrations.service.ts';
import { IDEMPOTENT_ERRORS, IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function registrationsRoutes(service: ReturnType<typeof createRegistrationsService>, idempotency: Idempotency) {
  return async (app: App) => {
    app.addHook('onRequest', app.requireApiKey);

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
      async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 201, body: await service.createRegistration(request.body) })),
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
          body: await service.createPaymentMethodRegistration(request.params.id, request.body ?? {}),
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
      async (request) => service.getRegistration(request.params.id),
    );
  };
}
