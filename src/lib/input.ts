// What the service accepts as an id, an instant and a string, in one place for the route schemas, the cursor
// decoder and the app. Anything else is a 400 before it reaches PostgreSQL (a 36-character non-UUID, a year-0000 date
// or a NUL character used to be a 500).

/** A UUID in its canonical 8-4-4-4-12 form, any case. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * A string limit in bytes of UTF-8 (the gateway's unit, docs/api.md "Registrations and orders"), as a JSON Schema keyword of our own: Ajv
 * enforces it on the routes (400 VALIDATION_ERROR, "body/orderName is 102 bytes of UTF-8; at most 100 are allowed") and the OpenAPI
 * document states it (src/plugins/docs.ts).
 */
/** The length of `text` in bytes of UTF-8 (a Hangul syllable is 3): the gateways' limits count these. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export const MAX_UTF8_BYTES = 'x-max-utf8-bytes';

function validateUtf8Bytes(max: number, data: unknown): boolean {
  const bytes = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : 0;
  if (bytes <= max) return true;
  validateUtf8Bytes.errors = [{ keyword: MAX_UTF8_BYTES, message: `is ${bytes} bytes of UTF-8; at most ${max} are allowed`, params: { limit: max } }];
  return false;
}
validateUtf8Bytes.errors = [] as Array<{ keyword: string; message: string; params: Record<string, unknown> }>;

/** The keyword's definition for Ajv's `keywords` option. */
export const maxUtf8BytesKeyword = {
  keyword: MAX_UTF8_BYTES,
  type: 'string' as const,
  schemaType: 'number' as const,
  errors: true,
  validate: validateUtf8Bytes,
};

/** ISO-8601 instants from year 0001 to 9999: PostgreSQL has no year 0, and JavaScript writes years past 9999 oddly. */
export const INSTANT_PATTERN = '^(?!0000)\\d{4}-';

export function isStorableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

// Exactly the calendar's months and dates of years 0001-9999 (the reports and reconciliation parse them; PostgreSQL has no year 0):
// 2026-13, 0000-01 and 2026-02-29 are refused by the pattern itself, 2028-02-29 and 2000-02-29 are dates.
const YEAR = '(?!0000)[0-9]{4}';
const MONTH = '(?:0[1-9]|1[0-2])';
const DAY_OF_MONTH = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))';
const LEAP_YEAR = '(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)';
export const MONTH_PATTERN = `^${YEAR}-${MONTH}$`;
export const DAY_PATTERN = `^(?:${YEAR}-${DAY_OF_MONTH}|(?!0000)${LEAP_YEAR}-02-29)$`;

/** A copy without NUL characters in any string or key: what a gateway answers must be storable all the same. */
export function withoutNul<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return value.replaceAll('\u0000', '') as T;
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => withoutNul(item, depth + 1)) as T;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replaceAll('\u0000', ''), withoutNul(item, depth + 1)])) as T;
}

/** True when any string in a parsed body, query or params holds a NUL character, which PostgreSQL text cannot store. */
export function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000') || containsNul(item, depth + 1)) return true;
  }
  return false;
}
