import { Type } from 'typebox';
import { Amount, CheckoutStatus, HttpUrl, Method, WindowParams } from '../shared/schemas.ts';

export const CreateOrderBody = Type.Object(
  {
    userId: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
    method: Method,
    amount: Amount,
    orderName: Type.String({ minLength: 1, maxLength: 100 }),
    itemCode: Type.Optional(Type.String({ minLength: 1, maxLength: 10 })),
    returnUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);

export const OrderResponse = Type.Object({
  id: Type.String(),
  state: Type.String(),
  status: CheckoutStatus,
  orderId: Type.String(),
  amount: Type.Integer(),
  successUrl: Type.String(),
  failUrl: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  window: WindowParams,
  paymentId: Type.Optional(Type.String()),
  failureCode: Type.Optional(Type.String()),
  failureMessage: Type.Optional(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});
