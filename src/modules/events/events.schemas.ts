import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Limit, StringEnum, Uuid, pageOf } from '../shared/schemas.ts';
import { EVENT_TYPES } from './event-types.ts';

export const EventType = named('EventType', StringEnum(EVENT_TYPES, { description: 'What changed; the document’s webhooks describe each' }));

export const EventResponse = named(
  'Event',
  Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      type: Type.String(),
      sequence: Type.Integer({ minimum: 1 }),
      createdAt: Type.String({ format: 'date-time' }),
      data: Type.Object({
        object: Type.Object(
          {},
          { additionalProperties: true, description: 'The public shape of the subscription, payment, registration or order after the change' },
        ),
        previousAttributes: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The old values of the fields that changed' })),
      }),
    },
    { description: 'A change a merchant cares about, as the feed answers it and webhooks send it' },
  ),
);

export const DeliveryResponse = named(
  'Delivery',
  Type.Object(
    {
      endpointId: Type.String(),
      status: StringEnum(['PENDING', 'SUCCEEDED', 'FAILED']),
      attempts: Type.Integer(),
      lastStatusCode: Type.Optional(Type.Integer()),
      lastError: Type.Optional(Type.String()),
      nextAttemptAt: Type.Optional(Type.String({ format: 'date-time' })),
      deliveredAt: Type.Optional(Type.String({ format: 'date-time' })),
    },
    { description: 'An event’s delivery to one webhook endpoint' },
  ),
);

export const EventWithDeliveries = Type.Intersect([EventResponse, Type.Object({ deliveries: Type.Array(DeliveryResponse) })]);

export const EventList = pageOf('EventPage', EventResponse, 'Events in ascending sequence', 'the last sequence of a full page; continue with after=<it>');

export const ListEventsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'the last sequence seen (0 or absent: from the oldest kept)' }),
    ),
    type: Type.Optional(EventType),
    limit: Limit,
  },
  { additionalProperties: false },
);

export const ResendBody = Type.Object(
  { endpointId: Type.Optional(Type.String({ ...Uuid, description: 'one endpoint (default: every enabled endpoint that subscribes to the event’s type)' })) },
  { additionalProperties: false, examples: [{ endpointId: '3f2b9c1e-7a4d-4e8b-9c2f-1d5e6a7b8c90' }] },
);
export const Queued = Type.Object({ queued: Type.Integer({ description: 'deliveries queued' }) });
