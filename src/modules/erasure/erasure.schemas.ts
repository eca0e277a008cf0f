// The erasure route's shapes (docs/operating.md "A customer asks to be forgotten"); the reason is bounded as every operator's reason (shared/schemas.ts Reason).
import { Type } from 'typebox';
import { named } from '../../lib/api-document.ts';

export const CustomerParams = Type.Object(
  { userId: Type.String({ minLength: 1, maxLength: 200, description: 'the merchant’s userId of the customer' }) },
  { additionalProperties: false },
);

export const ErasureBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'why (e.g. the request’s ticket): kept with the erasure and in the audit trail; the userId in it is replaced by the pseudonym',
    }),
    cancelOpenSubscriptions: Type.Optional(
      Type.Boolean({ description: 'cancel the customer’s subscriptions that are not CANCELED now (cancelReason ERASED) instead of refusing' }),
    ),
  },
  { additionalProperties: false, examples: [{ reason: '개인정보 삭제 요청 (상담 #4821)', cancelOpenSubscriptions: true }] },
);

export const ErasureCountsShape = Type.Object(
  {
    subscriptions: Type.Integer(),
    payments: Type.Integer(),
    registrations: Type.Integer(),
    orders: Type.Integer(),
    billingKeys: Type.Integer(),
    events: Type.Integer({ description: 'events of the customer’s objects rewritten' }),
  },
  { description: 'How many of the customer’s rows the erasure rewrote' },
);

export const ErasureResponse = named(
  'Erasure',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    pseudonym: Type.String({ description: '`erased_` and 20 random base32 characters: what every row of the customer carries instead of the userId' }),
    status: Type.Literal('COMPLETED'),
    erasedAt: Type.String({ format: 'date-time' }),
    retainUntil: Type.String({ description: 'Korea date (YYYY-MM-DD): the sealed identity is destroyed after it' }),
    counts: ErasureCountsShape,
  }),
);
