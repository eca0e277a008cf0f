import { Type } from 'typebox';
import { Cursor, Limit, Uuid } from '../shared/schemas.ts';

export const PaymentStatus = Type.Union([
  Type.Literal('PENDING'),
  Type.Literal('SUCCEEDED'),
  Type.Literal('FAILED'),
  Type.Literal('UNKNOWN'),
  Type.Literal('CANCELED'),
]);

export const AttemptResponse = Type.Object({
  id: Type.String(),
  attemptNumber: Type.Integer(),
  operation: Type.String(),
  orderId: Type.String(),
  amount: Type.Integer(),
  outcome: Type.String(),
  gatewayCode: Type.Optional(Type.String()),
  gatewayMessage: Type.Optional(Type.String()),
  transactionId: Type.Optional(Type.String()),
  approvedAt: Type.Optional(Type.String({ format: 'date-time' })),
  sentAt: Type.Optional(Type.String({ format: 'date-time' })),
  completedAt: Type.Optional(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
});

export const PaymentResponse = Type.Object({
  id: Type.String(),
  subscriptionId: Type.Optional(Type.String()),
  registrationId: Type.Optional(Type.String()),
  oneTimeOrderId: Type.Optional(Type.String()),
  cycle: Type.Optional(Type.Integer()),
  orderId: Type.String(),
  kind: Type.String(),
  method: Type.String(),
  amount: Type.Integer(),
  status: PaymentStatus,
  transactionId: Type.Optional(Type.String()),
  approvedAt: Type.Optional(Type.String({ format: 'date-time' })),
  failureCode: Type.Optional(Type.String()),
  failureMessage: Type.Optional(Type.String()),
  canceledAmount: Type.Integer(),
  attentionReason: Type.Optional(Type.String()),
  /** An operator must act: the outcome is UNKNOWN, or a refund's outcome is. */
  needsAttention: Type.Boolean(),
  /** A refund of this payment has an unknown outcome: no other refund is sent until an operator settles it. */
  refundOutcomeUnknown: Type.Boolean(),
  attempts: Type.Optional(Type.Array(AttemptResponse)),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const PaymentList = Type.Object({ items: Type.Array(PaymentResponse), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const ListPaymentsQuery = Type.Object(
  { subscriptionId: Type.Optional(Uuid), status: Type.Optional(PaymentStatus), limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
