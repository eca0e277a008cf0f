import { Type } from 'typebox';
import { Amount, Cursor, Instant, Limit, Method, Reason, TermText } from '../shared/schemas.ts';

export const SubscriptionStatus = Type.Union([
  Type.Literal('ACTIVE'),
  Type.Literal('TRIALING'),
  Type.Literal('PAST_DUE'),
  Type.Literal('PAUSED'),
  Type.Literal('CANCELED'),
]);

export const ConsentKind = Type.Union([Type.Literal('TRIAL_CONVERSION'), Type.Literal('PRICE_INCREASE')]);
export const ConsentResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: ConsentKind,
  obtainedAt: Type.String({ format: 'date-time' }),
  channel: Type.Optional(Type.String()),
  reference: Type.Optional(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});

export const SubscriptionResponse = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  method: Type.String(),
  status: SubscriptionStatus,
  amount: Type.Integer(),
  orderName: Type.String(),
  interval: Type.Object({ unit: Type.String(), count: Type.Integer() }),
  itemCode: Type.Optional(Type.String()),
  currentPeriodStart: Type.String({ format: 'date-time' }),
  currentPeriodEnd: Type.String({ format: 'date-time' }),
  nextChargeAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  cancelAtPeriodEnd: Type.Boolean(),
  canceledAt: Type.Optional(Type.String({ format: 'date-time' })),
  cancelReason: Type.Optional(Type.String({ description: 'REQUESTED, CANCELED_BY_OPERATOR, CANCELED_AT_PERIOD_END, RETRIES_EXHAUSTED, CONSENT_MISSING, …' })),
  trialEnd: Type.Optional(Type.String({ format: 'date-time' })),
  pendingAmount: Type.Optional(Type.Integer({ description: 'a price increase waiting for the customer’s consent' })),
  pendingAmountReason: Type.Optional(Type.Literal('CONSENT_REQUIRED')),
  consents: Type.Array(ConsentResponse),
  needsAttention: Type.Boolean(),
  attentionReason: Type.Optional(Type.String()),
  billingKey: Type.Object({
    id: Type.String(),
    method: Type.String(),
    status: Type.String(),
    cardName: Type.Optional(Type.String()),
    cardNumber: Type.Optional(Type.String()),
    carrier: Type.Optional(Type.String()),
    phoneNumber: Type.Optional(Type.String()),
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const SubscriptionList = Type.Object({ items: Type.Array(SubscriptionResponse), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const ListSubscriptionsQuery = Type.Object(
  { userId: Type.Optional(Type.String({ maxLength: 60 })), status: Type.Optional(SubscriptionStatus), limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const ConsentBody = Type.Object(
  {
    kind: ConsentKind,
    obtainedAt: Type.Optional(Instant),
    channel: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'how it was obtained (e.g. email, app, call)' })),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'your reference to the evidence' })),
  },
  { additionalProperties: false },
);
export const PriceChangeBody = Type.Object({ amount: Amount }, { additionalProperties: false });

export const CancelSubscriptionBody = Type.Object({ atPeriodEnd: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

// Admin routes (subscriptions.admin-routes.ts).
export const AdminSubscriptionsQuery = Type.Object(
  {
    status: Type.Optional(SubscriptionStatus),
    needsAttention: Type.Optional(Type.Boolean()),
    userId: Type.Optional(Type.String({ maxLength: 200 })),
    method: Type.Optional(Method),
    createdFrom: Type.Optional(Instant),
    createdTo: Type.Optional(Instant),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const AdminCancelBody = Type.Object({ reason: Reason, atPeriodEnd: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const PatchSubscriptionBody = Type.Object(
  { reason: Reason, amount: Type.Optional(Amount), orderName: Type.Optional(TermText.orderName) },
  { additionalProperties: false },
);
