// Shared TypeBox pieces of the merchant API and browser routes.
import { Type, type TSchema, type TSchemaOptions } from 'typebox';
import { REFUND_REASON_BYTES } from '../../gateway/gateway.ts';
import { named } from '../../lib/api-document.ts';
import { INSTANT_PATTERN, MAX_UTF8_BYTES, UUID_PATTERN } from '../../lib/input.ts';
import { PHONE_NUMBER_PATTERN, TERM_BYTES } from './terms.ts';

/**
 * A string that is one of `values`, as JSON Schema's `enum` (what client generators and the API document read as an
 * enumeration; a TypeBox Union of Literals is an `anyOf` of constants). Ajv and TypeBox accept the same values.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: TSchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

export const Method = named('Method', StringEnum(['CARD', 'MOBILE'], { description: 'CARD: a card; MOBILE: the customer’s mobile phone bill' }));
export const Amount = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'KRW, a whole number of won', examples: [9900] });
export const Uuid = Type.String({ pattern: UUID_PATTERN });
/** An ISO-8601 instant a client sends (filters, resolve's approvedAt). */
export const Instant = Type.String({ format: 'date-time', pattern: INSTANT_PATTERN });
export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const HttpUrl = Type.String({ pattern: '^https?://', maxLength: 2000 });
/**
 * Text the gateway limits in bytes of UTF-8 (docs/api.md "Registrations and orders": a Hangul syllable is 3 bytes). `maxLength` is the same
 * number (no string of more characters fits) and `x-max-utf8-bytes` the limit itself, which Ajv enforces (400
 * VALIDATION_ERROR). The OpenAPI document shows a schema a client generator can trust (src/plugins/docs.ts).
 */
export const Utf8Text = (maxBytes: number, options: { minLength?: number; pattern?: string; description?: string } = {}) =>
  Type.String({
    minLength: 1,
    ...options,
    maxLength: maxBytes,
    [MAX_UTF8_BYTES]: maxBytes,
    description:
      `${options.description ? `${options.description}; ` : ''}at most ${maxBytes} bytes of UTF-8: ${maxBytes} ASCII characters, ` +
      `or ${Math.floor(maxBytes / 3)} Hangul syllables (3 bytes each)`,
  });

/** The terms a merchant gives a registration or an order, limited as the gateway limits them (src/modules/shared/terms.ts). */
export const TermText = {
  userId: Utf8Text(TERM_BYTES.userId),
  orderName: Utf8Text(TERM_BYTES.orderName, { pattern: '\\S', description: 'not blank' }),
  itemCode: Utf8Text(TERM_BYTES.itemCode),
  userName: Utf8Text(TERM_BYTES.userName),
  userPhoneNumber: Type.String({
    minLength: 1,
    maxLength: TERM_BYTES.userPhoneNumber,
    pattern: PHONE_NUMBER_PATTERN,
    description: 'digits, spaces or hyphens',
  }),
};

export const Limit = Type.Integer({ minimum: 1, maximum: 100, default: 20 });
export const Cursor = Type.String({ maxLength: 200, description: 'opaque: the nextCursor of the previous page, as given' });
/** What a list's `nextCursor` means when it is a cursor to pass back (the feed's, an event sequence, says its own). */
const NEXT_CURSOR = 'pass as cursor for the next page; null on the last';

/** A page of a list route: `{items, nextCursor}`, named for the API document (every list answers this shape). */
export function pageOf<T extends TSchema>(name: string, item: T, description: string, nextCursor: string = NEXT_CURSOR) {
  return named(
    name,
    Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()], { description: nextCursor }) }, { description }),
  );
}

export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const CheckoutStatus = named(
  'CheckoutStatus',
  StringEnum(['PENDING', 'COMPLETED', 'FAILED', 'EXPIRED', 'NEEDS_ATTENTION'], {
    description:
      'PENDING until the gateway sends the customer back; COMPLETED; FAILED (declined or abandoned); EXPIRED (not finished in time); ' +
      'NEEDS_ATTENTION (its outcome is unknown: an operator resolves it)',
  }),
);

export const WindowParams = named(
  'CheckoutWindow',
  Type.Object(
    {
      paymentsMethod: Method,
      merchantId: Type.String(),
      orderId: Type.String(),
      orderName: Type.String(),
      amount: Type.Integer(),
      userId: Type.Optional(Type.String()),
      successUrl: Type.String(),
      failUrl: Type.String(),
      issueKeyOnly: Type.Boolean(),
      itemCode: Type.Optional(Type.String()),
      userName: Type.Optional(Type.String()),
      userPhoneNumber: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
    },
    {
      description:
        'What the gateway’s JavaScript SDK takes to open its window for the customer (`url`: the sandbox’s window page, in sandbox mode only). ' +
        'userPhoneNumber is masked.',
    },
  ),
);

/** What the gateway sends the browser back with: strings from a query string or a form; extra fields allowed. */
export const RedirectFields = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 200 })),
    transactionId: Type.Optional(Type.String({ maxLength: 200 })),
    code: Type.Optional(Type.String({ maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 1000 })),
    orderId: Type.Optional(Type.String({ maxLength: 200 })),
    method: Type.Optional(Type.String({ maxLength: 20 })),
    amount: Type.Optional(Type.String({ maxLength: 20 })),
  },
  {
    additionalProperties: true,
    examples: [{ state: 'b3JkZXItc3RhdGUtZXhhbXBsZS10b2tlbi0wMDAwMDAwMQ', transactionId: 'T2026112800001234', orderId: 'R1b2c3d4e5f604718829a3b4c5d6e7f80' }],
  },
);

export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  code: Type.String(),
  error: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

/** A browser route's answer in JSON mode (Accept: application/json) when it succeeded. */
export const CheckoutSuccess = named(
  'CheckoutSuccess',
  Type.Object(
    {
      status: Type.Literal('success'),
      registrationId: Type.Optional(Type.String()),
      subscriptionId: Type.Optional(Type.String()),
      orderId: Type.Optional(Type.String()),
      paymentId: Type.Optional(Type.String()),
    },
    { description: 'With Accept: application/json, the outcome as JSON instead of the redirect: the ids of what was created' },
  ),
);

/** A browser route's answer otherwise: the customer's browser is sent on. */
export const CheckoutRedirect = Type.Null({
  description: 'See Other: to the returnUrl (or RETURN_URL, or the built-in result page) with status=success and the ids, ' + 'or status=failed and the code',
  headers: { location: { type: 'string', description: 'where the browser goes next' } },
});

/** Every admin action says why; the reason goes to the audit trail (and to the gateway for a refund). */
export const Reason = Type.String({ minLength: 1, maxLength: 500 });

export const ReasonBody = Type.Object({ reason: Reason }, { additionalProperties: false, examples: [{ reason: '고객 요청 (상담 #4821)' }] });

/** The body of a pass run by hand (charging, retention): no arguments; a reason for the audit trail is welcome. */
export const optionalReasonBody = (example: string) =>
  Type.Union([Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false }), Type.Null()], { examples: [{ reason: example }] });

/** A refund's reason goes to the gateway as its cancellation reason (src/gateway/gateway.ts): bytes of UTF-8. */
export const RefundReason = Utf8Text(REFUND_REASON_BYTES, { description: 'sent to the gateway as the cancellation reason' });
