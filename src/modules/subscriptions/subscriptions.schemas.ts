import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Amount, Cursor, Gateway, Instant, Limit, Method, Reason, StringEnum, TermText, pageOf } from '../shared/schemas.ts';

export const SubscriptionStatus = named(
  'SubscriptionStatus',
  StringEnum(['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED', 'CANCELED'], {
    description:
      'ACTIVE: charged each period; TRIALING: free until trialEnd; PAST_DUE: a renewal was declined and is retried; PAUSED: nothing is ' +
      'charged until an operator resumes it; CANCELED: final',
  }),
);

export const ConsentKind = named(
  'ConsentKind',
  StringEnum(['TRIAL_CONVERSION', 'PRICE_INCREASE'], {
    description: 'TRIAL_CONVERSION: to be charged when the trial ends; PRICE_INCREASE: to pay the pendingAmount',
  }),
);
export const ConsentResponse = named(
  'Consent',
  Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      kind: ConsentKind,
      obtainedAt: Type.String({ format: 'date-time' }),
      channel: Type.Optional(Type.String()),
      reference: Type.Optional(Type.String()),
      createdAt: Type.String({ format: 'date-time' }),
    },
    { description: 'The customer’s consent, as the merchant recorded it' },
  ),
);

export const SubscriptionResponse = named(
  'Subscription',
  Type.Object(
    {
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
      usageStartedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'when the merchant recorded the customer’s first use (POST …/usage); the right of withdrawal ends then',
      }),
      cancelAtPeriodEnd: Type.Boolean(),
      canceledAt: Type.Optional(Type.String({ format: 'date-time' })),
      cancelReason: Type.Optional(
        Type.String({
          description:
            'REQUESTED, CANCELED_BY_OPERATOR, CANCELED_BY_CUSTOMER, CANCELED_AT_PERIOD_END, RETRIES_EXHAUSTED, CONSENT_MISSING, WITHDRAWN, ERASED (the customer’s personal data was erased), …',
        }),
      ),
      trialEnd: Type.Optional(Type.String({ format: 'date-time' })),
      pendingAmount: Type.Optional(Type.Integer({ description: 'a price increase waiting for the customer’s consent' })),
      pendingAmountReason: Type.Optional(Type.Literal('CONSENT_REQUIRED')),
      consents: Type.Array(ConsentResponse),
      needsAttention: Type.Boolean(),
      attentionReason: Type.Optional(Type.String()),
      refundDue: Type.Optional(Type.Integer({ description: 'what a withdrawn subscription still owes the customer (attentionReason WITHDRAWAL_REFUND_DUE)' })),
      billingKey: named(
        'BillingKey',
        Type.Object(
          {
            id: Type.String(),
            method: Type.String(),
            /** The gateway that issued the key; absent only in an event of a key we no longer hold. */
            gateway: Type.Optional(Gateway),
            status: Type.String(),
            cardName: Type.Optional(Type.String()),
            cardNumber: Type.Optional(Type.String()),
            carrier: Type.Optional(Type.String()),
            phoneNumber: Type.Optional(Type.String()),
          },
          { description: 'The card or phone the subscription is charged on, masked (the key itself never leaves the service)' },
        ),
      ),
      createdAt: Type.String({ format: 'date-time' }),
      updatedAt: Type.String({ format: 'date-time' }),
    },
    { description: 'Recurring charges of `amount` on a billing key, every `interval`, from a completed registration' },
  ),
);

export const SubscriptionList = pageOf('SubscriptionPage', SubscriptionResponse, 'A page of subscriptions, newest first');

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
  {
    additionalProperties: false,
    description:
      'A trial’s conversion or a price increase is charged only with a consent of its kind obtained within the 30 days before the charge. ' +
      'obtainedAt defaults to now and must not be in the future; a CANCELED subscription takes no consent (409).',
    examples: [{ kind: 'PRICE_INCREASE', obtainedAt: '2026-11-02T05:30:00.000Z', channel: 'email', reference: 'consent-2026-11-0042' }],
  },
);
export const PriceChangeBody = Type.Object(
  { amount: Amount },
  {
    additionalProperties: false,
    description:
      'CARD only (a MOBILE amount changes through a new payment method: 422 MOBILE_AMOUNT_MISMATCH). Lower: applies at once. Higher: held as ' +
      'pendingAmount until a PRICE_INCREASE consent is recorded (CONSENT_REQUIRED).',
    examples: [{ amount: 12900 }],
  },
);

export const UsageBody = Type.Object(
  { at: Type.Optional(Instant) },
  {
    additionalProperties: false,
    description:
      'When the customer started using what they subscribed to (default now; not in the future): the portal then no longer offers ' +
      'withdrawal (청약철회). A second call keeps the first time.',
    examples: [{ at: '2026-11-03T01:00:00.000Z' }],
  },
);

export const CancelSubscriptionBody = Type.Object(
  {
    atPeriodEnd: Type.Optional(
      Type.Boolean({ description: 'true: it runs until currentPeriodEnd (nothing more is charged), then ends; false (default): it ends now' }),
    ),
  },
  { additionalProperties: false, examples: [{ atPeriodEnd: true }] },
);

// Admin routes (subscriptions.admin-routes.ts).
export const AdminSubscriptionsQuery = Type.Object(
  {
    status: Type.Optional(SubscriptionStatus),
    needsAttention: Type.Optional(Type.Boolean()),
    userId: Type.Optional(Type.String({ maxLength: 200 })),
    method: Type.Optional(Method),
    gateway: Type.Optional(Gateway),
    createdFrom: Type.Optional(Instant),
    createdTo: Type.Optional(Instant),
    limit: Limit,
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const AdminCancelBody = Type.Object(
  { reason: Reason, atPeriodEnd: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, examples: [{ reason: '고객 요청: 환불 없이 해지', atPeriodEnd: false }] },
);
export const PatchSubscriptionBody = Type.Object(
  { reason: Reason, amount: Type.Optional(Amount), orderName: Type.Optional(TermText.orderName) },
  {
    additionalProperties: false,
    description: 'A higher CARD amount waits for the customer’s consent, as the merchant’s price change does; a MOBILE amount does not change here.',
    examples: [{ reason: '가격 정책 변경', amount: 12900, orderName: '프리미엄 월간 구독 (개정)' }],
  },
);
