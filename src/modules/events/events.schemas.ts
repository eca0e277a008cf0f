import { Type } from 'typebox';
import { Limit, Uuid } from '../shared/schemas.ts';
import { EVENT_TYPES } from './event-types.ts';

export const EventType = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));

export const EventResponse = Type.Object({
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
});

export const DeliveryResponse = Type.Object({
  endpointId: Type.String(),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]),
  attempts: Type.Integer(),
  lastStatusCode: Type.Optional(Type.Integer()),
  lastError: Type.Optional(Type.String()),
  nextAttemptAt: Type.Optional(Type.String({ format: 'date-time' })),
  deliveredAt: Type.Optional(Type.String({ format: 'date-time' })),
});

export const EventWithDeliveries = Type.Intersect([EventResponse, Type.Object({ deliveries: Type.Array(DeliveryResponse) })]);

export const EventList = Type.Object({
  items: Type.Array(EventResponse),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'the last sequence of a full page; continue with after=<it>' }),
});

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

export const ResendBody = Type.Object({ endpointId: Type.Optional(Uuid) }, { additionalProperties: false });
export const Queued = Type.Object({ queued: Type.Integer() });
