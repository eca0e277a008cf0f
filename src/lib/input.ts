// What the service accepts as an id, an instant and a string, in one place for the route schemas, the cursor
// decoder and the app. Anything else is a 400 before it reaches PostgreSQL (a 36-character non-UUID, a year-0000 date
// or a NUL character used to be a 500).

/** A UUID in its canonical 8-4-4-4-12 form, any case. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** ISO-8601 instants from year 0001 to 9999: PostgreSQL has no year 0, and JavaScript writes years past 9999 oddly. */
export const INSTANT_PATTERN = '^(?!0000)\\d{4}-';

export function isStorableInstant(date: Date): boolean {
  const year = date.getUTCFullYear();
  return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
}

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
