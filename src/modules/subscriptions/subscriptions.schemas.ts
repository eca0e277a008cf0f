import { Type } from 'typebox';
import { Cursor, Limit } from '../checkout/checkout.schemas.ts';

export const SubscriptionStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('PAST_DUE'), Type.Literal('PAUSED'), Type.Literal('CANCELED')]);

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

export const CancelSubscriptionBody = Type.Object({ atPeriodEnd: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
