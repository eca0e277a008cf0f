// Admin route shapes (DESIGN.md §5 "Admin routes").
import { Type } from 'typebox';
import { Amount, Cursor, Instant, Limit, Method, Uuid } from '../shared/schemas.ts';
import { SubscriptionStatus } from '../subscriptions/subscriptions.schemas.ts';
import { PaymentStatus } from '../payments/payments.schemas.ts';

export const PassReport = Type.Object({
  claimed: Type.Integer(),
  succeeded: Type.Integer(),
  declined: Type.Integer(),
  unknown: Type.Integer(),
  skipped: Type.Integer(),
});

export const ClockResponse = Type.Object({
  now: Type.String({ format: 'date-time' }),
  kind: Type.Union([Type.Literal('system'), Type.Literal('simulated')]),
  /** A set simulated clock stays where it was set. */
  frozen: Type.Boolean(),
});

export const SetClockBody = Type.Object(
  {
    now: Type.String({ ...Instant, description: 'ISO-8601 instant the simulated clock is set to' }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

/** Every admin action says why; the reason goes to the audit trail (and to the gateway for a refund). */
export const Reason = Type.String({ minLength: 1, maxLength: 500 });

export const ReasonBody = Type.Object({ reason: Reason }, { additionalProperties: false });
export const AdminCancelBody = Type.Object({ reason: Reason, atPeriodEnd: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const PatchSubscriptionBody = Type.Object(
  { reason: Reason, amount: Type.Optional(Amount), orderName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
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
export const RefundBody = Type.Object({ amount: Type.Optional(Amount), reason: Reason }, { additionalProperties: false });
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

export const AdminPaymentsQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatus),
    needsAttention: Type.Optional(Type.Boolean()),
    kind: Type.Optional(Type.Union([Type.Literal('INITIAL'), Type.Literal('RECURRING'), Type.Literal('MANUAL'), Type.Literal('ONE_TIME')])),
    method: Type.Optional(Method),
    subscriptionId: Type.Optional(Uuid),
    userId: Type.Optional(Type.String({ maxLength: 200 })),
    createdFrom: Type.Optional(Instant),
    createdTo: Type.Optional(Instant),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

/** A pass takes no arguments; a reason for the audit trail is welcome. */
export const RunPassBody = Type.Union([Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false }), Type.Null()]);
