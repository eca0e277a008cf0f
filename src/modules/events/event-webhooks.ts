// The events a merchant receives, as the API document's `webhooks` (OpenAPI 3.1) show them: for each type, the event
// POSTed to the merchant's endpoints and the shape of its `data.object` (docs/api.md "Events and webhooks"). Only the
// document reads this: the events themselves are written by the database and rendered by events.render.ts.
import { Type, type TSchema } from 'typebox';
import { named } from '../../lib/api-document.ts';
import type { WebhookDoc } from '../../plugins/docs.ts';
import { OrderResponse } from '../orders/orders.schemas.ts';
import { PaymentResponse } from '../payments/payments.schemas.ts';
import { RegistrationResponse } from '../registrations/registrations.schemas.ts';
import { WindowParams } from '../shared/schemas.ts';
import { SubscriptionResponse } from '../subscriptions/subscriptions.schemas.ts';
import type { EventType } from './event-types.ts';

/** A registration's or order's window as an event shows it: without the URLs that carry the single-use state, or the phone number. */
const WindowInEvent = named(
  'CheckoutWindowInEvent',
  Type.Omit(WindowParams, ['successUrl', 'failUrl', 'url', 'userPhoneNumber'], { description: 'The window’s parameters, without URLs or phone number' }),
);
const checkoutInEvent = (name: string, schema: typeof RegistrationResponse | typeof OrderResponse, description: string) =>
  named(name, Type.Object({ ...Type.Omit(schema, ['state', 'successUrl', 'failUrl', 'window']).properties, window: WindowInEvent }, { description }));
const RegistrationInEvent = checkoutInEvent('RegistrationInEvent', RegistrationResponse, 'A registration as its events show it: without state or URLs');
const OrderInEvent = checkoutInEvent('OrderInEvent', OrderResponse, 'An order as its events show it: without state or URLs');

/** An erasure as its event shows it (never the old userId, the reason or the operator). */
const CustomerErased = named(
  'CustomerErased',
  Type.Object(
    {
      id: Type.String({ format: 'uuid', description: 'the erasure' }),
      pseudonym: Type.String({ description: '`erased_` and 20 random base32 characters: the customer’s userId from now on' }),
      erasedAt: Type.String({ format: 'date-time' }),
      retainUntil: Type.String({ description: 'Korea date (YYYY-MM-DD) until which the sealed identity is kept' }),
    },
    { description: 'A customer’s erasure' },
  ),
);

function eventOf(type: EventType, object: TSchema): TSchema {
  return Type.Object({
    id: Type.String({ format: 'uuid', description: 'the same as the webhook-id header; process each id once' }),
    type: Type.Literal(type),
    sequence: Type.Integer({ minimum: 1, description: 'the order of events: a later change has a greater sequence' }),
    createdAt: Type.String({ format: 'date-time' }),
    data: Type.Object({
      object: object,
      previousAttributes: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The old values of the fields that changed' })),
    }),
  });
}

const AT = '2026-11-28T01:00:00.000Z';
const SUBSCRIPTION_ID = '8c1d2f4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const REGISTRATION_ID = '1b2c3d4e-5f60-4718-829a-3b4c5d6e7f80';
const ORDER_ID = '6e7f8091-a2b3-4c4d-9e5f-60718293a4b5';
const PAYMENT_ID = '2f3a4b5c-6d7e-4f80-9a1b-2c3d4e5f6a7b';

const subscription = {
  id: SUBSCRIPTION_ID,
  userId: 'u1',
  method: 'CARD',
  status: 'ACTIVE',
  amount: 9900,
  orderName: '프리미엄 월간 구독',
  interval: { unit: 'month', count: 1 },
  currentPeriodStart: AT,
  currentPeriodEnd: '2026-12-28T01:00:00.000Z',
  nextChargeAt: '2026-12-28T01:00:00.000Z',
  usageStartedAt: null,
  cancelAtPeriodEnd: false,
  consents: [],
  needsAttention: false,
  billingKey: { id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', method: 'CARD', status: 'ACTIVE', cardName: '신한카드', cardNumber: '4330-12**-****-123*' },
  createdAt: AT,
  updatedAt: AT,
};
const payment = {
  id: PAYMENT_ID,
  subscriptionId: SUBSCRIPTION_ID,
  registrationId: REGISTRATION_ID,
  cycle: 1,
  orderId: `R${REGISTRATION_ID.replace(/-/g, '')}`,
  kind: 'INITIAL',
  method: 'CARD',
  amount: 9900,
  status: 'SUCCEEDED',
  transactionId: 'T2026112800001234',
  approvedAt: AT,
  canceledAmount: 0,
  needsAttention: false,
  refundOutcomeUnknown: false,
  refunds: [],
  createdAt: AT,
  updatedAt: AT,
};
const window = {
  paymentsMethod: 'CARD',
  merchantId: 'M_SHOP_01',
  orderId: `R${REGISTRATION_ID.replace(/-/g, '')}`,
  orderName: '프리미엄 월간 구독',
  amount: 9900,
  userId: 'u1',
  issueKeyOnly: false,
};
const registration = {
  id: REGISTRATION_ID,
  status: 'COMPLETED',
  orderId: window.orderId,
  expiresAt: '2026-11-28T01:30:00.000Z',
  window,
  purpose: 'SUBSCRIPTION',
  subscriptionId: SUBSCRIPTION_ID,
  createdAt: AT,
};
const order = {
  id: ORDER_ID,
  status: 'COMPLETED',
  orderId: `O${ORDER_ID.replace(/-/g, '')}`,
  amount: 15000,
  expiresAt: '2026-11-28T01:30:00.000Z',
  window: { ...window, orderId: `O${ORDER_ID.replace(/-/g, '')}`, orderName: '추가 저장공간 10GB', amount: 15000 },
  paymentId: PAYMENT_ID,
  createdAt: AT,
};

const example = (type: EventType, sequence: number, object: object, previousAttributes?: object) => ({
  id: '0c9b8a7f-6e5d-4c3b-9a2f-1e0d9c8b7a6f',
  type,
  sequence,
  createdAt: AT,
  data: { object, ...(previousAttributes ? { previousAttributes } : {}) },
});

const failed = { status: 'FAILED', failureCode: 'REJECTED_BY_ISSUER', failureMessage: '카드사에서 승인을 거절했습니다' };

/** Every event type, in the order of docs/api.md "Events and webhooks". */
export const EVENT_WEBHOOKS: readonly WebhookDoc[] = [
  {
    type: 'registration.completed',
    summary: 'A registration completed',
    description: 'The customer approved the window: the billing key is issued and the subscription created (subscriptionId).',
    payload: eventOf('registration.completed', RegistrationInEvent),
    example: example('registration.completed', 101, registration, { status: 'PENDING' }),
  },
  {
    type: 'registration.failed',
    summary: 'A registration failed',
    description: 'The gateway declined, or the customer left the window (failureCode says which).',
    payload: eventOf('registration.failed', RegistrationInEvent),
    example: example('registration.failed', 102, { ...registration, ...failed, subscriptionId: undefined }, { status: 'PENDING' }),
  },
  {
    type: 'registration.expired',
    summary: 'A registration expired',
    description: 'The customer did not come back in time: found by a late redirect or by the sweep.',
    payload: eventOf('registration.expired', RegistrationInEvent),
    example: example('registration.expired', 103, { ...registration, status: 'EXPIRED', subscriptionId: undefined }, { status: 'PENDING' }),
  },
  {
    type: 'order.completed',
    summary: 'An order was paid',
    description: 'The gateway confirmed the one-time payment for the stored amount (paymentId).',
    payload: eventOf('order.completed', OrderInEvent),
    example: example('order.completed', 104, order, { status: 'PENDING' }),
  },
  {
    type: 'order.failed',
    summary: 'An order failed',
    description: 'The gateway declined, or the customer left the window.',
    payload: eventOf('order.failed', OrderInEvent),
    example: example('order.failed', 105, { ...order, ...failed, paymentId: undefined }, { status: 'PENDING' }),
  },
  {
    type: 'subscription.created',
    summary: 'A subscription was created',
    description: 'A registration created it.',
    payload: eventOf('subscription.created', SubscriptionResponse),
    example: example('subscription.created', 106, subscription),
  },
  {
    type: 'subscription.updated',
    summary: 'A subscription changed',
    description: 'A change of status, terms (amount, a pending amount), period, next charge, cancelAtPeriodEnd, attention, trial end or payment method.',
    payload: eventOf('subscription.updated', SubscriptionResponse),
    example: example(
      'subscription.updated',
      107,
      {
        ...subscription,
        currentPeriodStart: '2026-12-28T01:00:00.000Z',
        currentPeriodEnd: '2027-01-28T01:00:00.000Z',
        nextChargeAt: '2027-01-28T01:00:00.000Z',
      },
      { currentPeriodStart: AT, currentPeriodEnd: '2026-12-28T01:00:00.000Z', nextChargeAt: '2026-12-28T01:00:00.000Z' },
    ),
  },
  {
    type: 'subscription.canceled',
    summary: 'A subscription was canceled',
    description:
      'Its status became CANCELED: by the merchant, an operator or the customer, the end of its period, exhausted retries, a trial without consent, or the customer’s withdrawal (WITHDRAWN).',
    payload: eventOf('subscription.canceled', SubscriptionResponse),
    example: example(
      'subscription.canceled',
      108,
      { ...subscription, status: 'CANCELED', nextChargeAt: null, canceledAt: AT, cancelReason: 'REQUESTED' },
      { status: 'ACTIVE', nextChargeAt: '2026-12-28T01:00:00.000Z' },
    ),
  },
  {
    type: 'subscription.trial_will_end',
    summary: 'A trial ends soon without consent',
    description: 'A trial ends within 30 days and no TRIAL_CONVERSION consent is recorded (sent once): record one, or it is canceled.',
    payload: eventOf('subscription.trial_will_end', SubscriptionResponse),
    example: example('subscription.trial_will_end', 109, { ...subscription, status: 'TRIALING', trialEnd: '2026-12-12T15:00:00.000Z' }),
  },
  {
    type: 'payment.succeeded',
    summary: 'A payment was approved',
    description: 'A charge was approved (a renewal is one payment.succeeded and one subscription.updated).',
    payload: eventOf('payment.succeeded', PaymentResponse),
    example: example('payment.succeeded', 110, payment, { status: 'PENDING' }),
  },
  {
    type: 'payment.failed',
    summary: 'A payment was declined',
    description: 'The gateway declined the charge; a declined renewal makes the subscription PAST_DUE and is retried.',
    payload: eventOf('payment.failed', PaymentResponse),
    example: example(
      'payment.failed',
      111,
      { ...payment, kind: 'RECURRING', cycle: 2, ...failed, transactionId: undefined, approvedAt: undefined },
      { status: 'PENDING' },
    ),
  },
  {
    type: 'payment.unknown',
    summary: 'A payment’s outcome is unknown',
    description: 'The gateway’s answer was lost: nothing is charged again until an operator resolves it (needsAttention).',
    payload: eventOf('payment.unknown', PaymentResponse),
    example: example(
      'payment.unknown',
      112,
      { ...payment, status: 'UNKNOWN', needsAttention: true, transactionId: undefined, approvedAt: undefined },
      { status: 'PENDING' },
    ),
  },
  {
    type: 'payment.canceled',
    summary: 'A payment was refunded',
    description: 'Refunded, wholly or in part (canceledAmount, refunds).',
    payload: eventOf('payment.canceled', PaymentResponse),
    example: example(
      'payment.canceled',
      113,
      {
        ...payment,
        status: 'CANCELED',
        canceledAmount: 9900,
        refunds: [
          {
            id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d',
            amount: 9900,
            status: 'SUCCEEDED',
            channel: 'GATEWAY',
            reason: '고객 요청에 의한 환불',
            requestedAt: AT,
            succeededAt: AT,
          },
        ],
      },
      { status: 'SUCCEEDED', canceledAmount: 0 },
    ),
  },
  {
    type: 'customer.erased',
    summary: 'A customer was erased',
    description:
      'An operator erased the customer’s personal data (POST /admin/customers/{userId}/erasure): every object that carried their userId now ' +
      'carries the pseudonym instead, without names, phone numbers or masked card numbers. Replace the userId with the pseudonym in your ' +
      'own records, or delete them. The identity is kept sealed until retainUntil (a Korea date), for the payment records the law keeps.',
    payload: eventOf('customer.erased', CustomerErased),
    example: example('customer.erased', 114, {
      id: '3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7',
      pseudonym: 'erased_k7q2m4x9p3r5t8v6w2ya',
      erasedAt: AT,
      retainUntil: '2031-11-28',
    }),
  },
];
