import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Amount, Cursor, Gateway, Instant, Limit, Method, Reason, RefundReason, StringEnum, Uuid, pageOf } from '../shared/schemas.ts';

export const PaymentStatus = named(
  'PaymentStatus',
  StringEnum(['PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'CANCELED'], {
    description:
      'PENDING: being charged; SUCCEEDED: approved; FAILED: declined; UNKNOWN: the gateway’s answer was lost (an operator resolves it); ' +
      'CANCELED: refunded in full',
  }),
);
export const PaymentKind = named(
  'PaymentKind',
  StringEnum(['INITIAL', 'RECURRING', 'MANUAL', 'ONE_TIME'], {
    description: 'INITIAL: charged in the registration’s window; RECURRING: a renewal; MANUAL: charged by an operator; ONE_TIME: an order',
  }),
);
const Outcome = StringEnum(['SUCCEEDED', 'FAILED']);

export const AttemptResponse = named(
  'Attempt',
  Type.Object(
    {
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
    },
    { description: 'One call to the gateway for a payment (a charge or a cancellation) and what came of it' },
  ),
);

export const RefundResponse = named(
  'Refund',
  Type.Object(
    {
      id: Type.String(),
      amount: Type.Integer(),
      status: StringEnum(['PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN']),
      /** GATEWAY: through the gateway's cancellation (a CANCEL attempt); EXTERNAL: made outside it and recorded by an operator. */
      channel: StringEnum(['GATEWAY', 'EXTERNAL'], {
        description: 'GATEWAY: through the gateway’s cancellation; EXTERNAL: made outside it, recorded by an operator',
      }),
      reason: Type.String(),
      reference: Type.Optional(Type.String()),
      requestedAt: Type.String({ format: 'date-time' }),
      succeededAt: Type.Optional(Type.String({ format: 'date-time' })),
    },
    { description: 'A refund of part or all of a payment' },
  ),
);

export const PaymentResponse = named(
  'Payment',
  Type.Object(
    {
      id: Type.String(),
      subscriptionId: Type.Optional(Type.String()),
      registrationId: Type.Optional(Type.String()),
      oneTimeOrderId: Type.Optional(Type.String()),
      cycle: Type.Optional(Type.Integer()),
      orderId: Type.String(),
      kind: Type.String({ description: 'INITIAL, RECURRING, MANUAL or ONE_TIME (PaymentKind)' }),
      method: Type.String({ description: 'CARD or MOBILE' }),
      gateway: Gateway,
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
    },
    { description: 'One charge of a subscription’s cycle or of an order, with its refunds and, when read alone, its attempts' },
  ),
);

export const PaymentList = pageOf('PaymentPage', PaymentResponse, 'A page of payments, newest first');

export const ListPaymentsQuery = Type.Object(
  { subscriptionId: Type.Optional(Uuid), status: Type.Optional(PaymentStatus), limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

// Admin routes (payments.admin-routes.ts).
export const AdminPaymentsQuery = Type.Object(
  {
    status: Type.Optional(PaymentStatus),
    needsAttention: Type.Optional(Type.Boolean()),
    kind: Type.Optional(PaymentKind),
    method: Type.Optional(Method),
    gateway: Type.Optional(Gateway),
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
    outcome: Outcome,
    transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'SUCCEEDED: the gateway’s transaction id, as its records show' })),
    approvedAt: Type.Optional(Instant),
    reason: Reason,
  },
  {
    additionalProperties: false,
    description: 'Settle an UNKNOWN payment with what the gateway’s records say: SUCCEEDED (with its transactionId) or FAILED.',
    examples: [
      { outcome: 'SUCCEEDED', transactionId: 'T2026112800001234', approvedAt: '2026-11-28T01:15:00.000Z', reason: '가맹점 관리자 화면에서 승인 확인' },
    ],
  },
);
export const RefundBody = Type.Object(
  { amount: Type.Optional(Type.Integer({ ...Amount, description: 'at most what is left to refund (default: all of it)' })), reason: RefundReason },
  {
    additionalProperties: false,
    description:
      'A MOBILE payment is refunded only in full and only within its calendar month, Korea time (422 otherwise); a refund whose outcome is ' +
      'unknown blocks the next until it is resolved.',
    examples: [{ amount: 9900, reason: '고객 요청에 의한 환불' }],
  },
);
export const ExternalRefundBody = Type.Object(
  {
    amount: Amount,
    reason: Reason,
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'your reference, e.g. the transfer’s' })),
  },
  { additionalProperties: false, examples: [{ amount: 9900, reason: '계좌이체로 환불', reference: 'TRF-20261128-0007' }] },
);
export const RefundResolveBody = Type.Object(
  { outcome: Outcome, reason: Reason },
  { additionalProperties: false, examples: [{ outcome: 'SUCCEEDED', reason: '게이트웨이 취소 내역 확인' }] },
);
export const ChargeQuery = Type.Object({ dryRun: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const ChargeDryRun = named(
  'ChargeDryRun',
  Type.Object(
    {
      dryRun: Type.Literal(true),
      allowed: Type.Boolean(),
      cycle: Type.Optional(Type.Integer()),
      amount: Type.Optional(Type.Integer()),
      dueAt: Type.Optional(Type.String()),
      refusal: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
      rules: Type.Array(Type.Object({ rule: Type.String(), passed: Type.Boolean(), code: Type.Optional(Type.String()), detail: Type.Optional(Type.String()) })),
    },
    { description: 'What a charge now would do, rule by rule, without charging' },
  ),
);
