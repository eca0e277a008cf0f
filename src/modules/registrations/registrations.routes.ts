// Merchant API: registrations (DESIGN.md §5). Thin: schema, auth, one service call.
import type { App } from '../../app-types.ts';
import { IdParams } from '../checkout/checkout.schemas.ts';
import { CreateRegistrationBody, RegistrationResponse } from './registrations.schemas.ts';
import type { createRegistrationsService } from './registrations.service.ts';
import { IDEMPOTENT_ERRORS, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';

export function registrationsRoutes(service: ReturnType<typeof createRegistrationsService>, idempotency: Idempotency) {
  return async (app: App) => {
    app.addHook('onRequest', app.requireApiKey);

    app.post(
      '/registrations',
      { schema: { operationId: 'createRegistration', summary: 'Create a registration: the parameters of the gateway’s window for a new subscription', tags: ['registrations'], headers: idempotencyHeaders(false), body: CreateRegistrationBody, response: { 201: RegistrationResponse }, errors: IDEMPOTENT_ERRORS } },
      async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 201, body: await service.createRegistration(request.body) })),
    );

    app.get(
      '/registrations/:id',
      { schema: { operationId: 'getRegistration', summary: 'Get a registration (with subscriptionId once completed)', tags: ['registrations'], params: IdParams, response: { 200: RegistrationResponse } } },
      async (request) => service.getRegistration(request.params.id),
    );
  };
}
