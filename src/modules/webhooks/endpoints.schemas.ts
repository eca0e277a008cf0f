import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Cursor, Instant, Limit, StringEnum, pageOf } from '../shared/schemas.ts';

const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: 'event types, or ["*"] for all (the default)',
});
const Url = Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://', description: 'https:// (http:// where WEBHOOK_ALLOW_HTTP), no credentials' });
const Description = Type.String({ maxLength: 500 });
const EndpointStatus = named('WebhookEndpointStatus', StringEnum(['ENABLED', 'DISABLED']));

export const EndpointResponse = named(
  'WebhookEndpoint',
  Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      url: Type.String(),
      eventTypes: Type.Array(Type.String()),
      description: Type.Optional(Type.String()),
      status: EndpointStatus,
      disabledReason: Type.Optional(
        Type.String({ description: 'GONE (the endpoint answered 410), FAILING (every delivery failed for WEBHOOK_DISABLE_AFTER) or DISABLED_BY_MERCHANT' }),
      ),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Type.String({ format: 'date-time' }),
    },
    { description: 'Where events of the types it subscribes to are POSTed' },
  ),
);

const Secret = Type.String({ description: 'whsec_ + base64 of 32 random bytes; shown only here and by rotate-secret' });
export const EndpointWithSecret = Type.Intersect([EndpointResponse, Type.Object({ secret: Secret })]);
export const EndpointList = pageOf('WebhookEndpointPage', EndpointResponse, 'A page of webhook endpoints, newest first');

export const CreateEndpointBody = Type.Object(
  { url: Url, eventTypes: Type.Optional(EventTypes), description: Type.Optional(Description) },
  {
    additionalProperties: false,
    examples: [
      { url: 'https://shop.example.com/hooks/billing', eventTypes: ['payment.succeeded', 'payment.failed', 'subscription.canceled'], description: '결제 알림' },
    ],
  },
);
export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    eventTypes: Type.Optional(EventTypes),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(EndpointStatus),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ status: 'ENABLED' }] },
);
export const RotateSecretBody = Type.Object(
  {
    expireOldAfterSeconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 7 * 86400, default: 86400, description: 'how long the old secret still signs (both signatures are sent)' }),
    ),
  },
  { additionalProperties: false, examples: [{ expireOldAfterSeconds: 3600 }] },
);
export const SecretResponse = Type.Object({ secret: Secret });
export const RecoverBody = Type.Object({ since: Instant }, { additionalProperties: false, examples: [{ since: '2026-11-27T15:00:00.000Z' }] });
export const ListEndpointsQuery = Type.Object({ limit: Limit, cursor: Type.Optional(Cursor) }, { additionalProperties: false });
