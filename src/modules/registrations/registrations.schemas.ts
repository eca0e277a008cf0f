import { Type } from 'typebox';
import { Amount, CheckoutStatus, HttpUrl, Method, TermText, WindowParams } from '../shared/schemas.ts';

export const CreateRegistrationBody = Type.Object(
  {
    userId: TermText.userId,
    method: Method,
    amount: Amount,
    orderName: TermText.orderName,
    interval: Type.Optional(
      Type.Object(
        {
          unit: Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('year')]),
          count: Type.Integer({ minimum: 1, maximum: 120 }),
        },
        { additionalProperties: false },
      ),
    ),
    itemCode: Type.Optional(TermText.itemCode),
    issueKeyOnly: Type.Optional(Type.Boolean()),
    trialDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 365, description: 'CARD only: a free trial of this many calendar days (Korea time); implies issueKeyOnly' }),
    ),
    userName: Type.Optional(TermText.userName),
    userPhoneNumber: Type.Optional(TermText.userPhoneNumber),
    returnUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);

export const PaymentMethodBody = Type.Object(
  {
    method: Type.Optional(Method),
    amount: Type.Optional(Amount),
    itemCode: Type.Optional(TermText.itemCode),
    userName: Type.Optional(TermText.userName),
    userPhoneNumber: Type.Optional(TermText.userPhoneNumber),
    returnUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);

export const RegistrationResponse = Type.Object({
  id: Type.String(),
  state: Type.String(),
  status: CheckoutStatus,
  orderId: Type.String(),
  successUrl: Type.String(),
  failUrl: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  window: WindowParams,
  purpose: Type.Union([Type.Literal('SUBSCRIPTION'), Type.Literal('PAYMENT_METHOD')], {
    description: 'PAYMENT_METHOD: replaces the billing key of subscriptionId',
  }),
  subscriptionId: Type.Optional(Type.String()),
  trialDays: Type.Optional(Type.Integer()),
  failureCode: Type.Optional(Type.String()),
  failureMessage: Type.Optional(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});
