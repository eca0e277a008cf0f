// Merchant API: the event feed, one event with its deliveries, and resend (docs/api.md "Events and webhooks").
import type { App } from '../../app-types.ts';
import { TAGS } from '../../lib/api-document.ts';
import { IdParams } from '../shared/schemas.ts';
import { readDb } from '../shared/read-db.ts';
import { IDEMPOTENT_ERRORS, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { EventList, EventWithDeliveries, ListEventsQuery, Queued, ResendBody } from './events.schemas.ts';
import type { EventsService } from './events.service.ts';

export function eventsRoutes(service: EventsService, idempotency: Idempotency) {
  return async (app: App) => {
    app.get(
      '/events',
      {
        schema: {
          operationId: 'listEvents',
          summary: 'Events in ascending sequence, after the last one seen',
          description:
            'Sequences are given only to committed events older than every transaction still in flight: a reader that always continues ' +
            'from the last sequence it saw never misses one. Process events idempotently, by id.',
          tags: [TAGS.events.name],
          querystring: ListEventsQuery,
          response: { 200: EventList },
        },
        // The schema's serializer walks each event's object as free-form properties, key by key in JavaScript; every
        // field of a page is already in its public shape (renderEvent), so JSON.stringify writes the same JSON in less
        // CPU (docs/benchmarks.md "Measurements behind choices in the code"). The schema still documents the route.
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      // The page is read from the replica when there is one, once it has replayed this request's numbering.
      async (request) => service.list(request.query, () => readDb(request)),
    );

    app.get(
      '/events/:id',
      {
        schema: {
          operationId: 'getEvent',
          summary: 'Get an event with its deliveries',
          tags: [TAGS.events.name],
          params: IdParams,
          response: { 200: EventWithDeliveries },
          responseDescriptions: { 200: 'The event with its delivery to each endpoint' },
        },
        links: {
          200: { resendEvent: { operationId: 'resendEvent', parameters: { id: '$response.body#/id' }, description: 'Send it again' } },
        },
      },
      async (request) => service.get(request.params.id),
    );

    app.post(
      '/events/:id/resend',
      {
        schema: {
          operationId: 'resendEvent',
          summary: 'Send an event again, to one endpoint or to every endpoint that subscribes to it',
          tags: [TAGS.events.name],
          params: IdParams,
          headers: idempotencyHeaders(false),
          body: ResendBody,
          response: { 202: Queued },
          responseDescriptions: { 202: 'Queued: the deliveries go out with the next dispatch' },
          errors: IDEMPOTENT_ERRORS,
        },
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => ({ statusCode: 202, body: await service.resend(request.params.id, request.body?.endpointId) })),
    );
  };
}
