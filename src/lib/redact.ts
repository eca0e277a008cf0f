// Secrets never leave the process (docs/architecture.md, invariant 8): the secret key, Authorization headers, billing keys,
// phone numbers and names are replaced wherever they appear in a log line or a stored gateway response,
// at any depth, and known secret values are scrubbed from free text as well.
export const REDACTED = '[REDACTED]';

const SENSITIVE_KEYS = new Set(
  [
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'secretkey',
    'paymentsecretkey',
    'payment_secret_key',
    'password',
    'billingkey',
    'billing_key',
    'userphonenumber',
    'phonenumber',
    'phone',
    'username',
    'customername',
    'encryptionkeys',
    'billing_key_encryption_keys',
    'apikeys',
    'admintokens',
    'keyciphertext',
  ].map((key) => key.toLowerCase()),
);

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(key.toLowerCase());
}

export interface Redactor {
  /** Returns a copy with sensitive keys and known secret values replaced. Never mutates its input. */
  redact<T>(value: T): T;
  /** Adds a secret of the configuration (a gateway's secret key): scrubbed from any text for the process's life. */
  addSecret(secret: string | undefined): void;
  /**
   * Adds a secret learned from the work served (a billing key just issued): scrubbed from any text while it is one of
   * the last ISSUED_SECRETS_KEPT learned. A key is plain text in the process only while the work that issued it runs
   * (its storing, encrypted, and the registration's first charge); every later call that sends it scrubs it as its
   * own secret (redactorForCall), and fields named like a billing key are redacted wherever they are.
   */
  addIssuedSecret(secret: string | undefined): void;
}

/**
 * How many issued secrets a redactor keeps. Bounded because every text redacted (each string of every log line and
 * of every stored gateway answer) is scanned for each secret kept: kept for good, each registration a process served
 * made every later log line dearer and its memory larger (docs/benchmarks.md "Memory").
 */
export const ISSUED_SECRETS_KEPT = 64;

/** Very short values would scrub ordinary words; real secrets are long. */
const isSecretLike = (secret: string | undefined): secret is string => secret !== undefined && secret.length >= 6;

export function createRedactor(initialSecrets: Array<string | undefined> = []): Redactor {
  const secrets = new Set<string>();
  const addSecret = (secret: string | undefined) => {
    if (isSecretLike(secret)) secrets.add(secret);
  };
  initialSecrets.forEach(addSecret);
  // In the order learned: the oldest is dropped first.
  const issued = new Set<string>();
  const addIssuedSecret = (secret: string | undefined) => {
    if (!isSecretLike(secret) || secrets.has(secret)) return;
    issued.delete(secret);
    issued.add(secret);
    if (issued.size > ISSUED_SECRETS_KEPT) issued.delete(issued.values().next().value!);
  };

  const scrubText = (text: string): string => {
    let out = text;
    for (const secret of secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    for (const secret of issued) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  };

  const walk = (value: unknown, seen: WeakMap<object, unknown>, depth: number): unknown => {
    if (typeof value === 'string') return scrubText(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > 12) return '[depth]';
    if (seen.has(value)) return seen.get(value);
    if (value instanceof Date) return value;
    if (Buffer.isBuffer(value)) return '[buffer]';
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      seen.set(value, out);
      for (const item of value) out.push(walk(item, seen, depth + 1));
      return out;
    }
    const out: Record<string, unknown> = {};
    seen.set(value, out);
    const source = value as Record<string, unknown>;
    // Errors keep their message and stack, which are not own-enumerable.
    if (value instanceof Error) {
      out.type = value.name;
      out.message = scrubText(value.message);
      if (value.stack) out.stack = scrubText(value.stack);
    }
    for (const key of Object.keys(source)) {
      out[key] = isSensitiveKey(key) && source[key] !== undefined && source[key] !== null ? REDACTED : walk(source[key], seen, depth + 1);
    }
    return out;
  };

  return {
    redact: <T>(value: T) => walk(value, new WeakMap(), 0) as T,
    addSecret,
    addIssuedSecret,
  };
}

/** Korean mobile and landline numbers as they appear in free text (010-1234-5678, 01012345678, 02 123 4567). */
const PHONE_IN_TEXT = /(?<!\d)0\d{1,2}[-. ]?\d{3,4}[-. ]?\d{4}(?!\d)/g;

/** Replaces phone numbers in free text (a gateway's message may quote the customer's). */
export function scrubPhoneNumbers(text: string): string {
  return text.replace(PHONE_IN_TEXT, REDACTED);
}

/**
 * A redactor for one call: the shared one (known secrets, sensitive keys), then this call's own secrets (the billing
 * key it sent, which the shared one may never have seen: keys issued by an earlier process) and phone numbers in
 * any text.
 */
export function redactorForCall(shared: Redactor, callSecrets: Array<string | undefined>): Redactor {
  const own = createRedactor(callSecrets);
  const scrub = <T>(value: T): T => {
    if (typeof value === 'string') return scrubPhoneNumbers(value) as T;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(scrub) as T;
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, scrub(v)])) as T;
  };
  return {
    redact: (value) => scrub(own.redact(shared.redact(value))),
    addSecret: (secret) => shared.addSecret(secret),
    addIssuedSecret: (secret) => shared.addIssuedSecret(secret),
  };
}

/** Masks a Korean phone number for display: 010-****-1234 (docs/api.md "Shapes"). */
export function maskPhoneNumber(phone: string | null | undefined): string | undefined {
  if (!phone) return undefined;
  const digits = phone.replace(/\D/g, '');
  if (digits.length < 8) return '****';
  return `${digits.slice(0, 3)}-****-${digits.slice(-4)}`;
}
