// The one place that reads the environment (docs/architecture.md "House style"). Every variable of docs/operating.md "Environment variables" is declared in
// EnvSchema, validated once through @fastify/env, then turned into the typed Config the rest of the code takes:
// the schema types the environment, and Config is the type of what toConfig builds from it (no second declaration).
import { validateDetailed } from 'node-cron';
import Fastify from 'fastify';
import fastifyEnv from '@fastify/env';
import { Type, type Static } from 'typebox';
import { parseDuration, parseDurationList } from './lib/duration.ts';
import type { EncryptionKey } from './lib/crypto.ts';
import { KOREA_ZONE } from './lib/calendar.ts';

const PositiveInt = Type.Integer({ minimum: 1 });
const Text = Type.String({ minLength: 1 });

export const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  HOST: Type.Optional(Text),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  PUBLIC_BASE_URL: Type.Optional(Text),
  DATABASE_URL: Type.Optional(Text),
  DATABASE_READ_URL: Type.Optional(Text),
  READ_REPLICA_WAIT: Type.String({ default: '2s' }),
  READ_REPLICA_MAX_LAG: Type.String({ default: '1s' }),
  PAYMENT_API_BASE_URL: Type.Optional(Text),
  PAYMENT_SECRET_KEY: Type.Optional(Text),
  PAYMENT_MERCHANT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  PAYMENT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 30000 }),
  PAYMENT_MOBILE_ISSUE_KEY_PATH: Type.String({ pattern: '^/', default: '/v1/billing/mobile/issue-key' }),
  PAYMENT_CANCEL_PATH: Type.String({ pattern: '^/', default: '/payments/cancel' }),
  BILLING_KEY_ENCRYPTION_KEYS: Type.Optional(Text),
  API_KEYS: Type.Optional(Text),
  ADMIN_TOKENS: Type.Optional(Text),
  METRICS_TOKENS: Type.Optional(Text),
  TRUST_PROXY: Type.String({ minLength: 1, default: 'false' }),
  RETURN_URL: Type.Optional(Text),
  SCHEDULER_ENABLED: Type.Boolean({ default: true }),
  SCHEDULER_CRON: Type.String({ minLength: 1, default: '* * * * *' }),
  SCHEDULER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 8 }),
  SCHEDULER_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10000, default: 100 }),
  SCHEDULER_LEASE_MS: Type.Optional(PositiveInt),
  RETRY_DELAYS: Type.String({ default: '1d,3d,5d' }),
  BILLING_TIMEZONE: Type.String({ minLength: 1, default: KOREA_ZONE }),
  CLOCK: Type.Union([Type.Literal('system'), Type.Literal('simulated')], { default: 'system' }),
  REGISTRATION_TTL: Type.String({ default: '30m' }),
  AMOUNT_MAX_CARD: Type.Optional(PositiveInt),
  AMOUNT_MAX_MOBILE: Type.Optional(PositiveInt),
  EMBEDDED_DB_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 54329 }),
  SANDBOX_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3100 }),
  RATE_LIMIT_BROWSER: Type.Integer({ minimum: 1, default: 60 }),
  RATE_LIMIT_API: Type.Integer({ minimum: 1, default: 1200 }),
  RATE_LIMIT_ADMIN: Type.Integer({ minimum: 1, default: 600 }),
  RATE_LIMIT_AUTH_FAILURES: Type.Integer({ minimum: 1, default: 20 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 15000 }),
  WEBHOOK_RETRY_DELAYS: Type.String({ default: '5s,5m,30m,2h,5h,10h,24h,30h' }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 8 }),
  WEBHOOK_DISABLE_AFTER: Type.String({ default: '5d' }),
  WEBHOOK_ALLOW_HTTP: Type.Optional(Type.Boolean()),
  EVENT_RETENTION: Type.String({ default: '90d' }),
  CONSENT_REQUIRED: Type.Boolean({ default: true }),
  PORTAL_WITHDRAWAL: Type.String({ default: '7d' }),
  RETENTION_YEARS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  TOSS_API_BASE_URL: Type.Optional(Text),
  TOSS_SECRET_KEY: Type.Optional(Text),
  TOSS_CLIENT_KEY: Type.Optional(Text),
  TOSS_INQUIRY_DELAYS: Type.String({ default: '1m,5m,30m,2h,1d,1d,1d,1d,1d,1d,1d' }),
  TOSS_KEY_DELETION: Type.Optional(Text),
  SETTLEMENT_MAX_BYTES: Type.Integer({ minimum: 1, default: 20_971_520 }),
  CONSOLE_SESSION_KEYS: Type.Optional(Text),
  CONSOLE_SESSION_TTL: Type.String({ default: '8h' }),
  CONSOLE_LOCALE: Type.Union([Type.Literal('en'), Type.Literal('ko')], { default: 'en' }),
  PORTAL_LINK_TTL: Type.String({ default: '1h' }),
  PORTAL_SESSION_TTL: Type.String({ default: '1h' }),
  PORTAL_RETURN_ORIGINS: Type.Optional(Text),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
});
export type Env = Static<typeof EnvSchema>;

export type { EncryptionKey };

/** The typed configuration: exactly what toConfig builds from the validated environment (no second declaration). */
export type Config = ReturnType<typeof toConfig>;

/** Variables that have a development default and so must be set explicitly in production. */
export const PRODUCTION_REQUIRED = [
  'PUBLIC_BASE_URL',
  'DATABASE_URL',
  'PAYMENT_API_BASE_URL',
  'PAYMENT_SECRET_KEY',
  'PAYMENT_MERCHANT_ID',
  'BILLING_KEY_ENCRYPTION_KEYS',
  'API_KEYS',
  'ADMIN_TOKENS',
  'CONSOLE_SESSION_KEYS',
] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates the environment through @fastify/env (Ajv, with coercion of numbers and booleans). */
async function validateEnv(source: NodeJS.ProcessEnv): Promise<Env> {
  // Empty strings count as unset, as in most deployment tools.
  const data = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const holder = Fastify({ logger: false });
  try {
    await holder.register(fastifyEnv, { schema: EnvSchema, data, env: false, dotenv: false });
    await holder.ready();
    return (holder as unknown as { config: Env }).config;
  } catch (error) {
    throw new ConfigError(`Invalid environment: ${(error as Error).message}`);
  } finally {
    await holder.close();
  }
}

/** PORTAL_WITHDRAWAL: a duration, or `off` (the portal never offers withdrawal): null. */
function parseWithdrawal(value: string): number | null {
  return value.trim() === 'off' ? null : parseDuration(value, 'PORTAL_WITHDRAWAL');
}

function splitList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

export function parseEncryptionKeys(value: string | undefined): EncryptionKey[] {
  const keys = splitList(value).map((entry) => {
    const separator = entry.indexOf(':');
    if (separator <= 0) {
      throw new ConfigError('BILLING_KEY_ENCRYPTION_KEYS: each entry must be keyId:base64(32 bytes)');
    }
    const id = entry.slice(0, separator);
    const key = Buffer.from(entry.slice(separator + 1), 'base64');
    if (!/^[A-Za-z0-9._-]{1,32}$/.test(id)) {
      throw new ConfigError(`BILLING_KEY_ENCRYPTION_KEYS: key id "${id}" must be 1-32 of A-Z a-z 0-9 . _ -`);
    }
    if (key.length !== 32) {
      throw new ConfigError(`BILLING_KEY_ENCRYPTION_KEYS: key "${id}" must decode to 32 bytes, not ${key.length}`);
    }
    return { id, key };
  });
  const ids = new Set(keys.map((k) => k.id));
  if (ids.size !== keys.length) throw new ConfigError('BILLING_KEY_ENCRYPTION_KEYS: key ids must be unique');
  return keys;
}

function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgresql:' || url.protocol === 'postgres:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** CONSOLE_SESSION_KEYS: base64 32-byte keys, comma-separated; the first signs the console's cookies, all verify. */
export function parseConsoleSessionKeys(value: string | undefined): Buffer[] {
  return splitList(value).map((entry, index) => {
    const key = Buffer.from(entry, 'base64');
    if (key.length !== 32) throw new ConfigError(`CONSOLE_SESSION_KEYS: key ${index + 1} must be base64 of 32 bytes, not ${key.length}`);
    return key;
  });
}

/** TRUST_PROXY: `true`/`false`, a hop count, or the proxies' addresses (comma-separated IPs or CIDRs). */
export function parseTrustProxy(value: string): boolean | number | string {
  const text = value.trim();
  if (text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  const entries = splitList(text);
  const address = /^(\d{1,3}(\.\d{1,3}){3}|[0-9A-Fa-f:]+:[0-9A-Fa-f:.]*)(\/\d{1,3})?$/;
  const bad = entries.filter((entry) => !address.test(entry) && entry !== 'loopback' && entry !== 'linklocal' && entry !== 'uniquelocal');
  if (entries.length === 0 || bad.length > 0) {
    throw new ConfigError(`TRUST_PROXY: "${value}" is not true, false, a hop count or a list of IP addresses/CIDRs`);
  }
  return entries.join(',');
}

/**
 * PORTAL_RETURN_ORIGINS: comma-separated http(s) origins (scheme, host and port; no path); unset, the origin of
 * RETURN_URL, else none (a portal session then takes no returnUrl).
 */
export function parseReturnOrigins(value: string | undefined, returnUrl: string | undefined): string[] {
  if (value === undefined) return returnUrl !== undefined && isHttpUrl(returnUrl) ? [new URL(returnUrl).origin] : [];
  return splitList(value).map((entry) => {
    const url = isHttpUrl(entry) ? new URL(entry) : undefined;
    if (!url || url.origin !== entry.replace(/\/$/, ''))
      throw new ConfigError(`PORTAL_RETURN_ORIGINS: "${entry}" is not an origin (https://host[:port], no path)`);
    return url.origin;
  });
}

/** How Toss runs: against Toss (or another URL) with the keys given, on the built-in sandbox, or not at all. */
export type TossMode = 'API' | 'SANDBOX' | 'OFF';

function tossMode(env: Env): TossMode {
  if (env.TOSS_API_BASE_URL !== undefined) return 'API';
  return env.NODE_ENV === 'production' ? 'OFF' : 'SANDBOX';
}

const TOSS_VARIABLES = ['TOSS_API_BASE_URL', 'TOSS_SECRET_KEY', 'TOSS_CLIENT_KEY'] as const;

/**
 * Toss's keys as Toss issues them: test_ or live_, then sk_ (secret) or ck_ (client); a payment widget's keys carry
 * gsk_/gck_ and do not authenticate the billing API. A live key outside production, a test key in production, a
 * widget key, or a secret key where the client key goes (the client key is handed to the customer's browser) is
 * refused, naming the variable and never repeating the value.
 */
function tossProblems(env: Env): string[] {
  const problems: string[] = [];
  const production = env.NODE_ENV === 'production';
  const given = TOSS_VARIABLES.filter((name) => env[name] !== undefined);
  if (production && given.length > 0 && given.length < TOSS_VARIABLES.length) {
    const missing = TOSS_VARIABLES.filter((name) => env[name] === undefined);
    problems.push(`${given.join(', ')} ${given.length === 1 ? 'is' : 'are'} set, so ${missing.join(' and ')} must be set too (or none: Toss is off)`);
  } else if (!production && env.TOSS_API_BASE_URL !== undefined) {
    const missing = (['TOSS_SECRET_KEY', 'TOSS_CLIENT_KEY'] as const).filter((name) => env[name] === undefined);
    if (missing.length > 0) problems.push(`TOSS_API_BASE_URL is set, so ${missing.join(' and ')} must be set too`);
  }
  const keys = [
    ['TOSS_SECRET_KEY', 'sk'],
    ['TOSS_CLIENT_KEY', 'ck'],
  ] as const;
  for (const [name, kind] of keys) {
    const key = env[name];
    if (key === undefined) continue;
    if (/_g[cs]k_/.test(key)) problems.push(`${name}: a payment widget key (_gck_/_gsk_) is refused; use the API individual-integration keys (_ck_/_sk_)`);
    else if (key.startsWith('live_') && !production) problems.push(`${name}: a live key (live_) is refused unless NODE_ENV=production`);
    else if (key.startsWith('test_') && production) problems.push(`${name}: a test key (test_) is refused when NODE_ENV=production`);
    else if (!new RegExp(`^(test|live)_${kind}_`).test(key))
      problems.push(`${name}: not a Toss ${kind === 'sk' ? 'secret' : 'client'} key (test_${kind}_… or live_${kind}_…)`);
  }
  return problems;
}

/** The call that deletes a Toss billing key: `METHOD /path` with `{billingKey}` in the path (TOSS_KEY_DELETION). */
export interface TossKeyDeletion {
  method: 'DELETE' | 'POST';
  /** The path, `{billingKey}` standing for the key (encoded as a path segment). */
  path: string;
}

function parseKeyDeletion(value: string | undefined): TossKeyDeletion | undefined {
  if (value === undefined) return undefined;
  const match = /^(DELETE|POST)\s+(\/\S*\{billingKey\}\S*)$/.exec(value.trim());
  if (!match)
    throw new ConfigError('TOSS_KEY_DELETION: must be "DELETE /path/{billingKey}" or "POST /path/{billingKey}/…" (a method, then a path holding {billingKey})');
  return { method: match[1] as TossKeyDeletion['method'], path: match[2]! };
}

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Reads and validates the environment. Throws ConfigError naming every problem; in production, names every
 * variable whose development default is refused.
 */
export async function loadConfig(source: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const env = await validateEnv(source);
  const problems: string[] = [];
  const production = env.NODE_ENV === 'production';

  if (production) {
    const missing = PRODUCTION_REQUIRED.filter((name) => env[name] === undefined);
    if (missing.length > 0) {
      problems.push(`NODE_ENV=production refuses development defaults; set ${missing.join(', ')}`);
    }
    if (env.CLOCK === 'simulated') problems.push('CLOCK=simulated is refused when NODE_ENV=production');
  }

  if (env.PAYMENT_API_BASE_URL !== undefined) {
    const missing = (['PAYMENT_SECRET_KEY', 'PAYMENT_MERCHANT_ID'] as const).filter((name) => env[name] === undefined);
    if (missing.length > 0) problems.push(`PAYMENT_API_BASE_URL is set, so ${missing.join(' and ')} must be set too`);
  }

  problems.push(...tossProblems(env));

  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (error) {
      problems.push((error as Error).message);
      return undefined;
    }
  };

  const encryptionKeys = attempt(() => parseEncryptionKeys(env.BILLING_KEY_ENCRYPTION_KEYS)) ?? [];
  const retryDelaysMs = attempt(() => parseDurationList(env.RETRY_DELAYS, 'RETRY_DELAYS')) ?? [];
  const registrationTtlMs = attempt(() => parseDuration(env.REGISTRATION_TTL, 'REGISTRATION_TTL')) ?? 0;
  const webhookRetryDelaysMs = attempt(() => parseDurationList(env.WEBHOOK_RETRY_DELAYS, 'WEBHOOK_RETRY_DELAYS', { gaps: true })) ?? [];
  const webhookDisableAfterMs = attempt(() => parseDuration(env.WEBHOOK_DISABLE_AFTER, 'WEBHOOK_DISABLE_AFTER')) ?? 0;
  const eventRetentionMs = attempt(() => parseDuration(env.EVENT_RETENTION, 'EVENT_RETENTION')) ?? 0;
  const portalWithdrawalMs = attempt(() => parseWithdrawal(env.PORTAL_WITHDRAWAL)) ?? null;
  const consoleSessionKeys = attempt(() => parseConsoleSessionKeys(env.CONSOLE_SESSION_KEYS)) ?? [];
  const tossInquiryDelaysMs = attempt(() => parseDurationList(env.TOSS_INQUIRY_DELAYS, 'TOSS_INQUIRY_DELAYS', { gaps: true })) ?? [];
  const tossKeyDeletion = attempt(() => parseKeyDeletion(env.TOSS_KEY_DELETION));
  const consoleSessionTtlMs = attempt(() => parseDuration(env.CONSOLE_SESSION_TTL, 'CONSOLE_SESSION_TTL')) ?? 0;
  const portal = {
    linkTtlMs: attempt(() => parseDuration(env.PORTAL_LINK_TTL, 'PORTAL_LINK_TTL')) ?? 0,
    sessionTtlMs: attempt(() => parseDuration(env.PORTAL_SESSION_TTL, 'PORTAL_SESSION_TTL')) ?? 0,
    returnOrigins: attempt(() => parseReturnOrigins(env.PORTAL_RETURN_ORIGINS, env.RETURN_URL)) ?? [],
  };
  const cronCheck = validateDetailed(env.SCHEDULER_CRON);
  if (!cronCheck.valid) {
    const why = cronCheck.errors.map((e) => `${e.field}: ${e.message}`).join(', ');
    problems.push(`SCHEDULER_CRON: "${env.SCHEDULER_CRON}" is not a cron expression (${why || 'unparseable'})`);
  }
  if (!isValidTimeZone(env.BILLING_TIMEZONE)) problems.push(`BILLING_TIMEZONE: unknown time zone "${env.BILLING_TIMEZONE}"`);

  for (const name of ['PUBLIC_BASE_URL', 'PAYMENT_API_BASE_URL', 'RETURN_URL', 'TOSS_API_BASE_URL'] as const) {
    const value = env[name];
    if (value !== undefined && !isHttpUrl(value)) problems.push(`${name}: "${value}" is not an http(s) URL`);
  }
  // The value is never repeated: a connection string carries a password.
  if (env.DATABASE_URL !== undefined && !isPostgresUrl(env.DATABASE_URL)) {
    problems.push('DATABASE_URL: not a PostgreSQL connection string (postgresql://user:password@host:port/database)');
  }
  if (env.DATABASE_READ_URL !== undefined && !isPostgresUrl(env.DATABASE_READ_URL)) {
    problems.push('DATABASE_READ_URL: not a PostgreSQL connection string (postgresql://user:password@host:port/database)');
  }
  const readReplica = {
    waitMs: attempt(() => parseDuration(env.READ_REPLICA_WAIT, 'READ_REPLICA_WAIT')) ?? 0,
    maxLagMs: attempt(() => parseDuration(env.READ_REPLICA_MAX_LAG, 'READ_REPLICA_MAX_LAG')) ?? 0,
  };
  const trustProxy = attempt(() => parseTrustProxy(env.TRUST_PROXY)) ?? false;

  const apiKeys = splitList(env.API_KEYS);
  const metricsTokens = splitList(env.METRICS_TOKENS);
  // An admin token may carry a name for the audit trail: `alice:<token>`.
  const adminTokenNames: Record<string, string> = {};
  const adminTokens = splitList(env.ADMIN_TOKENS).map((entry) => {
    const named = /^([A-Za-z0-9_.-]{1,40}):(.+)$/.exec(entry);
    if (!named) return entry;
    adminTokenNames[named[2]!] = named[1]!;
    return named[2]!;
  });
  const shortToken = [...apiKeys, ...adminTokens, ...metricsTokens].some((token) => token.length < 16);
  if (shortToken) problems.push('API_KEYS, ADMIN_TOKENS and METRICS_TOKENS: every token must be at least 16 characters');
  if (apiKeys.some((token) => adminTokens.includes(token))) {
    problems.push('API_KEYS and ADMIN_TOKENS must not share a token');
  }
  if (metricsTokens.some((token) => apiKeys.includes(token) || adminTokens.includes(token))) {
    problems.push('METRICS_TOKENS must not share a token with API_KEYS or ADMIN_TOKENS');
  }

  if (problems.length > 0) throw new ConfigError(problems.join('; '));

  return toConfig(env, {
    encryptionKeys,
    retryDelaysMs,
    registrationTtlMs,
    trustProxy,
    apiKeys,
    adminTokens,
    adminTokenNames,
    metricsTokens,
    webhookRetryDelaysMs,
    webhookDisableAfterMs,
    eventRetentionMs,
    consoleSessionKeys,
    consoleSessionTtlMs,
    portalWithdrawalMs,
    portal,
    toss: { inquiryDelaysMs: tossInquiryDelaysMs, keyDeletion: tossKeyDeletion },
    readReplica,
  });
}

/** The environment, validated and cross-checked, as the rest of the code takes it. */
function toConfig(
  env: Env,
  parsed: {
    encryptionKeys: EncryptionKey[];
    retryDelaysMs: number[];
    registrationTtlMs: number;
    trustProxy: boolean | number | string;
    apiKeys: string[];
    adminTokens: string[];
    adminTokenNames: Record<string, string>;
    metricsTokens: string[];
    webhookRetryDelaysMs: number[];
    webhookDisableAfterMs: number;
    eventRetentionMs: number;
    consoleSessionKeys: Buffer[];
    consoleSessionTtlMs: number;
    portalWithdrawalMs: number | null;
    portal: { linkTtlMs: number; sessionTtlMs: number; returnOrigins: string[] };
    toss: { inquiryDelaysMs: number[]; keyDeletion: TossKeyDeletion | undefined };
    readReplica: { waitMs: number; maxLagMs: number };
  },
) {
  const production = env.NODE_ENV === 'production';
  return {
    env: env.NODE_ENV,
    // Development listens on loopback only: a bare `npm start` prints its generated tokens and serves the sandbox.
    host: env.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    port: env.PORT,
    /** How customers' browsers reach the service; never a trailing slash. */
    publicBaseUrl: stripTrailingSlash(env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`),
    databaseUrl: env.DATABASE_URL,
    /**
     * A streaming replica for what only reads (docs/production.md "Read replica"); url undefined: every read goes to
     * DATABASE_URL. A read waits up to waitMs for the replica to replay the primary's position; a replica lagging
     * more than maxLagMs is bypassed.
     */
    readReplica: { url: env.DATABASE_READ_URL, waitMs: parsed.readReplica.waitMs, maxLagMs: parsed.readReplica.maxLagMs },
    gateway: {
      /** Unset means the built-in sandbox, mounted under /sandbox (development only). */
      baseUrl: env.PAYMENT_API_BASE_URL ? stripTrailingSlash(env.PAYMENT_API_BASE_URL) : undefined,
      secretKey: env.PAYMENT_SECRET_KEY,
      merchantId: env.PAYMENT_MERCHANT_ID,
      timeoutMs: env.PAYMENT_TIMEOUT_MS,
      mobileIssueKeyPath: env.PAYMENT_MOBILE_ISSUE_KEY_PATH,
      cancelPath: env.PAYMENT_CANCEL_PATH,
    },
    /**
     * Toss Payments, the second gateway (docs/operating.md "Environment variables"). No baseUrl: the built-in Toss
     * sandbox outside production (its development keys unless keys are given), Toss off in production (tossMode).
     */
    toss: {
      mode: tossMode(env),
      baseUrl: env.TOSS_API_BASE_URL ? stripTrailingSlash(env.TOSS_API_BASE_URL) : undefined,
      secretKey: env.TOSS_SECRET_KEY,
      clientKey: env.TOSS_CLIENT_KEY,
      /** Waits before each lookup of an UNKNOWN Toss attempt, each counted from the one before. */
      inquiryDelaysMs: parsed.toss.inquiryDelaysMs,
      /** The call that deletes a billing key at Toss; undefined: Toss's keyDeletion capability is off. */
      keyDeletion: parsed.toss.keyDeletion,
    },
    /** First encrypts, all decrypt. Empty until development defaults are applied. */
    encryptionKeys: parsed.encryptionKeys,
    apiKeys: parsed.apiKeys,
    adminTokens: parsed.adminTokens,
    /** Names given to admin tokens (`name:token` in ADMIN_TOKENS), by token; audit events show them. */
    adminTokenNames: parsed.adminTokenNames,
    /** Bearer tokens that read /metrics (and /docs) where those are protected, i.e. in production. */
    metricsTokens: parsed.metricsTokens,
    /** In production /docs and /metrics need a bearer token; in development and tests they are open. */
    protectInternalRoutes: production,
    /** Fastify's trustProxy: false, true, a hop count, or the proxies' addresses (comma-separated IPs or CIDRs). */
    trustProxy: parsed.trustProxy,
    returnUrl: env.RETURN_URL,
    scheduler: {
      enabled: env.SCHEDULER_ENABLED,
      cron: env.SCHEDULER_CRON,
      concurrency: env.SCHEDULER_CONCURRENCY,
      batchSize: env.SCHEDULER_BATCH_SIZE,
      leaseMs: env.SCHEDULER_LEASE_MS ?? 2 * env.PAYMENT_TIMEOUT_MS + 30000,
    },
    retryDelaysMs: parsed.retryDelaysMs,
    timezone: env.BILLING_TIMEZONE,
    clock: env.CLOCK,
    registrationTtlMs: parsed.registrationTtlMs,
    amountMax: { CARD: env.AMOUNT_MAX_CARD, MOBILE: env.AMOUNT_MAX_MOBILE },
    embeddedDbPort: env.EMBEDDED_DB_PORT,
    sandboxPort: env.SANDBOX_PORT,
    /**
     * Requests per minute: browser routes per client address, the merchant API and the admin routes per token, and
     * failed authentications per client address (whatever the token) before that address is refused for the minute.
     */
    rateLimit: { browser: env.RATE_LIMIT_BROWSER, api: env.RATE_LIMIT_API, admin: env.RATE_LIMIT_ADMIN, authFailures: env.RATE_LIMIT_AUTH_FAILURES },
    webhooks: {
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      /** Delay before each retry, counted from the failed attempt: n delays allow n + 1 attempts. */
      retryDelaysMs: parsed.webhookRetryDelaysMs,
      concurrency: env.WEBHOOK_CONCURRENCY,
      disableAfterMs: parsed.webhookDisableAfterMs,
      allowHttp: env.WEBHOOK_ALLOW_HTTP ?? !production,
      /** How often an idle dispatcher looks for work (not an environment variable; tests shorten it). */
      pollMs: 500,
      /** Run the dispatcher in this process (tests that drive it by hand turn it off). */
      enabled: true,
    },
    eventRetentionMs: parsed.eventRetentionMs,
    /** docs/architecture.md, invariant 13 (consent before more money); false only for a merchant exempt from it. */
    consentRequired: env.CONSENT_REQUIRED,
    /** How long after a subscription's first payment the customer may withdraw (청약철회) in the portal; null: never. */
    portalWithdrawalMs: parsed.portalWithdrawalMs,
    /**
     * How many years an erased customer's identity stays in the vault after the Korea date of their latest payment or
     * refund record (docs/operating.md "A customer asks to be forgotten").
     */
    retentionYears: env.RETENTION_YEARS,
    /** The largest settlement file an import accepts (413 beyond). */
    settlementMaxBytes: env.SETTLEMENT_MAX_BYTES,
    logLevel: env.LOG_LEVEL,
    console: {
      /** Signing keys of the console's cookies: the first signs, all verify. Empty until development defaults are applied. */
      sessionKeys: parsed.consoleSessionKeys,
      /** How long a sign-in lasts, in real time (the simulated billing clock never ends a session). */
      sessionTtlMs: parsed.consoleSessionTtlMs,
      /** Cookies are Secure in production (served over HTTPS there). */
      secureCookies: production,
      /** The console's language until an operator chooses another for their session (and on the sign-in page). */
      locale: env.CONSOLE_LOCALE,
    },
    /** The customer portal (docs/portal.md "Customer portal"); its cookies are signed with the console's keys. */
    portal: {
      /** How long an unused portal link stays valid, in real time. */
      linkTtlMs: parsed.portal.linkTtlMs,
      /** How long a portal session lasts once its link was opened, in real time. */
      sessionTtlMs: parsed.portal.sessionTtlMs,
      /** The origins (`https://shop.example`) a portal session's returnUrl may point at. */
      returnOrigins: parsed.portal.returnOrigins,
    },
  };
}
