import { Type } from 'typebox';
import { Amount, Cursor, Instant, Limit, Method, Reason, RefundReason, Uuid } from '../shared/schemas.ts';

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

export const RefundResponse = Type.Object({
  id: Type.String(),
  amount: Type.Integer(),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED'), Type.Literal('UNKNOWN')]),
  /** GATEWAY: through the gateway's cancellation (a CANCEL attempt); EXTERNAL: made outside it and recorded by an operator. */
  channel: Type.Union([Type.Literal('GATEWAY'), Type.Literal('EXTERNAL')]),
  reason: Type.String(),
  reference: Type.Optional(Type.String()),
  requestedAt: Type.String({ format: 'date-time' }),
  succeededAt: Type.Optional(Type.String({ format: 'date-time' })),
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
  /** Its refunds, oldest first, through the gateway and made outside it (an event's object shows them as of the change). */
  refunds: Type.Optional(Type.Array(RefundResponse)),
  attempts: Type.Optional(Type.Array(AttemptResponse)),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const PaymentList = Type.Object({ items: Type.Array(PaymentResponse), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const ListPaymentsQuery = Type.Object(
  { subscriptionId: Type.Optional(Uuid), status: Type.Optional(PaymentStatus), limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

// Admin routes (payments.admin-routes.ts).
export const AdminPaymentsQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatus),
    needsAttention: Type.Optional(Type.Boolean()),
    kind: Type.Optional(Type.Union([Type.Literal('INITIAL'), Type.Literal('RECURRING'), Type.Literal('MANUAL'), Type.Literal('ONE_TIME')])),
    method: Type.Optional(Method),
    subscriptionId: Type.Optional(Uuid),
    userId: Type.Optional(Type.String({ maxLength: 200, description: 'every payment of this customer: their subscriptions’ and their one-time orders’' })),
    createdFrom: Type.Optional(Instant),
    createdTo: Type.Optional(Instant),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const ResolveBody = Type.Object(
  {
    outcome: Type.Union([Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]),
    transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    approvedAt: Type.Optional(Instant),
    reason: Reason,
  },
  { additionalProperties: false },
);
export const RefundBody = Type.Object({ amount: Type.Optional(Amount), reason: RefundReason }, { additionalProperties: false });
export const ExternalRefundBody = Type.Object(
  { amount: Amount, reason: Reason, reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
export const RefundResolveBody = Type.Object(
  { outcome: Type.Union([Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]), reason: Reason },
  { additionalProperties: false },
);
export const ChargeQuery = Type.Object({ dryRun: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const ChargeDryRun = Type.Object({
  dryRun: Type.Literal(true),
  allowed: Type.Boolean(),
  cycle: Type.Optional(Type.Integer()),
  amount: Type.Optional(Type.Integer()),
  dueAt: Type.Optional(Type.String()),
  refusal: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  rules: Type.Array(Type.Object({ rule: Type.String(), passed: Type.Boolean(), code: Type.Optional(Type.String()), detail: Type.Optional(Type.String()) })),
});
