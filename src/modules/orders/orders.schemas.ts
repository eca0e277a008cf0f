import { Type } from 'typebox';
import { Amount, CheckoutStatus, HttpUrl, Method, TermText, WindowParams } from '../shared/schemas.ts';

export const CreateOrderBody = Type.Object(
  {
    userId: Type.Optional(TermText.userId),
    method: Method,
    amount: Amount,
    orderName: TermText.orderName,
    itemCode: Type.Optional(TermText.itemCode),
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
