import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
import { Amount, CheckoutStatus, Gateway, HttpUrl, Method, StringEnum, TermText, TossWindowParams, Utf8Text, WindowParams } from '../shared/schemas.ts';
import { TERM_BYTES } from '../shared/terms.ts';

export const IntervalUnit = StringEnum(['day', 'week', 'month', 'year']);

export const CreateRegistrationBody = Type.Object(
  {
    userId: TermText.userId,
    method: Method,
    amount: Amount,
    orderName: TermText.orderName,
    interval: Type.Optional(
      Type.Object(
        {
          unit: IntervalUnit,
          count: Type.Integer({ minimum: 1, maximum: 120 }),
        },
        { additionalProperties: false, description: 'how often it renews (default: every month); MOBILE: every month only' },
      ),
    ),
    itemCode: Type.Optional(Utf8Text(TERM_BYTES.itemCode, { description: 'required for MOBILE: the item code the gateway bills the phone for' })),
    issueKeyOnly: Type.Optional(
      Type.Boolean({
        description:
          'CARD only: the window only issues the billing key and charges nothing; the subscription is due at once and the next charging pass charges it (default false; with trialDays, true and due when the trial ends)',
      }),
    ),
    trialDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 365, description: 'CARD only: a free trial of this many calendar days (Korea time); implies issueKeyOnly' }),
    ),
    userName: Type.Optional(TermText.userName),
    userPhoneNumber: Type.Optional(TermText.userPhoneNumber),
    returnUrl: Type.Optional(
      Type.String({ ...HttpUrl, description: 'where the browser goes after the window (default RETURN_URL, else the built-in result page)' }),
    ),
    gateway: Type.Optional(Gateway),
  },
  {
    additionalProperties: false,
    description:
      'A subscription’s terms. Rules between fields (400 VALIDATION_ERROR otherwise): MOBILE needs itemCode, renews monthly and takes no ' +
      'issueKeyOnly or trialDays; trialDays implies issueKeyOnly (issueKeyOnly: false with trialDays is refused); amount is at most the ' +
      'method’s AMOUNT_MAX.',
    examples: [{ userId: 'u1', method: 'CARD', amount: 9900, orderName: '프리미엄 월간 구독' }],
  },
);

export const PaymentMethodBody = Type.Object(
  {
    method: Type.Optional(Method),
    amount: Type.Optional(
      Type.Integer({ ...Amount, description: 'MOBILE only: the owed cycle’s amount, charged in the window (default: the subscription’s)' }),
    ),
    itemCode: Type.Optional(Utf8Text(TERM_BYTES.itemCode, { description: 'MOBILE: the item code (default: the subscription’s)' })),
    userName: Type.Optional(TermText.userName),
    userPhoneNumber: Type.Optional(TermText.userPhoneNumber),
    returnUrl: Type.Optional(HttpUrl),
    gateway: Type.Optional(Gateway),
  },
  {
    additionalProperties: false,
    description:
      'A CARD window only verifies the new card (amount is refused: change the price with price-change); a MOBILE window charges the owed ' +
      'cycle at once, so it is taken only while one is owed (PAST_DUE, or the next charge within ±5 days: else 409 NOT_DUE) and only for a ' +
      'monthly subscription. An empty body keeps the method.',
    examples: [{}, { method: 'MOBILE', itemCode: 'PREMIUM01', userPhoneNumber: '010-1234-5678' }],
  },
);

export const RegistrationResponse = named(
  'Registration',
  Type.Object(
    {
      id: Type.String(),
      state: Type.String({ description: 'single-use: binds the gateway’s redirect to this registration' }),
      status: CheckoutStatus,
      orderId: Type.String(),
      successUrl: Type.String(),
      failUrl: Type.String(),
      expiresAt: Type.String({ format: 'date-time' }),
      gateway: Gateway,
      window: Type.Union([WindowParams, TossWindowParams]),
      purpose: StringEnum(['SUBSCRIPTION', 'PAYMENT_METHOD'], {
        description: 'PAYMENT_METHOD: replaces the billing key of subscriptionId',
      }),
      subscriptionId: Type.Optional(Type.String({ description: 'the subscription it created (once COMPLETED) or whose method it replaces' })),
      trialDays: Type.Optional(Type.Integer()),
      failureCode: Type.Optional(Type.String()),
      failureMessage: Type.Optional(Type.String()),
      createdAt: Type.String({ format: 'date-time' }),
    },
    {
      description:
        'A request for the gateway’s window that issues a billing key: PENDING until the customer comes back; then COMPLETED with ' +
        'subscriptionId (and the INITIAL payment unless issueKeyOnly), or FAILED with failureCode.',
    },
  ),
);
