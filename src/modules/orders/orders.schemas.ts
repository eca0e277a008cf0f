import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';
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
  {
    additionalProperties: false,
    description: 'A one-time payment’s terms: amount is at most the method’s AMOUNT_MAX (400 VALIDATION_ERROR otherwise).',
    examples: [{ userId: 'u1', method: 'CARD', amount: 15000, orderName: '추가 저장공간 10GB' }],
  },
);

export const OrderResponse = named(
  'Order',
  Type.Object(
    {
      id: Type.String(),
      state: Type.String({ description: 'single-use: binds the gateway’s redirect to this order' }),
      status: CheckoutStatus,
      orderId: Type.String(),
      amount: Type.Integer(),
      successUrl: Type.String(),
      failUrl: Type.String(),
      expiresAt: Type.String({ format: 'date-time' }),
      window: WindowParams,
      paymentId: Type.Optional(Type.String({ description: 'its payment, once the gateway confirmed it' })),
      failureCode: Type.Optional(Type.String()),
      failureMessage: Type.Optional(Type.String()),
      createdAt: Type.String({ format: 'date-time' }),
    },
    {
      description:
        'A one-time payment through the gateway’s window: PENDING until the customer comes back; COMPLETED with paymentId once the payment is ' +
        'confirmed for the stored amount, or FAILED.',
    },
  ),
);
