// Bearer tokens (docs/api.md "Routes"): API_KEYS open the merchant API, ADMIN_TOKENS the admin routes; a token of the
// wrong kind is 401 like a wrong one. Where internal routes are protected (production), /metrics takes a
// METRICS_TOKENS or an admin token (what a Prometheus scraper sends), and /docs any token of the service. Several tokens of each kind may be valid at once so they can be rotated.
// Comparison is constant-time over SHA-256 digests, so neither content nor length leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defineError, UnauthorizedError } from '../lib/errors.ts';

export const TooManyAuthFailuresError = defineError('RATE_LIMITED', 'Too many failed authentications from this address; try again in a minute', 429);

export type TokenKind = 'api' | 'admin' | 'metrics';

declare module 'fastify' {
  interface FastifyInstance {
    requireApiKey: (request: FastifyRequest) => Promise<void>;
    requireAdminToken: (request: FastifyRequest) => Promise<void>;
    /** Guards of /metrics and /docs: a no-op unless config.protectInternalRoutes. */
    requireMetricsReader: (request: FastifyRequest) => Promise<void>;
    requireDocsReader: (request: FastifyRequest) => Promise<void>;
    /** The rate-limit bucket of a request: its token when it is a valid one of `kind`, else its client address. */
    rateLimitKey: (kind: TokenKind) => (request: FastifyRequest) => string;
    /** The failed authentications per client address that every guard counts (the console's sign-in too). */
    authFailures: FailureCounter;
    /** The operator an admin token stands for, when it is one of ADMIN_TOKENS (the console's sign-in). */
    identifyAdminToken: (token: string) => AdminIdentity | undefined;
    /** Whether a token fingerprint is still one of ADMIN_TOKENS' (a console session ends when its token is removed). */
    isAdminFingerprint: (fingerprint: string) => boolean;
  }
  interface FastifyRequest {
    /** Who called: the token kind and a short fingerprint of the token (never the token). */
    principal?: { kind: TokenKind; fingerprint: string; name?: string };
  }
}

export interface AdminIdentity {
  fingerprint: string;
  name?: string;
}

export type FailureCounter = ReturnType<typeof createFailureCounter>;

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export function fingerprint(token: string): string {
  return digest(token).toString('hex').slice(0, 12);
}

/** True when `given` equals one of `tokens`; every candidate is compared, in constant time. */
export function matchesAny(given: string, tokens: Buffer[]): boolean {
  const candidate = digest(given);
  let found = false;
  for (const token of tokens) found = timingSafeEqual(candidate, token) || found;
  return found;
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function authPlugin(app: FastifyInstance) {
  const tokens: Record<TokenKind, Buffer[]> = {
    api: app.config.apiKeys.map(digest),
    admin: app.config.adminTokens.map(digest),
    metrics: app.config.metricsTokens.map(digest),
  };
  const names = app.config.adminTokenNames;

  const failures = createFailureCounter(app.config.rateLimit.authFailures, 60_000);
  const kindOf = (token: string | undefined, kinds: TokenKind[]) => (token === undefined ? undefined : kinds.find((k) => matchesAny(token, tokens[k])));

  const guard = (kinds: TokenKind[]) => async (request: FastifyRequest) => {
    // An address that keeps failing is refused whatever token it tries next: guessing costs a minute per few tries.
    if (failures.exceeded(request.ip)) throw new TooManyAuthFailuresError();
    const token = bearer(request);
    const kind = kindOf(token, kinds);
    if (!token || !kind) {
      failures.record(request.ip);
      throw new UnauthorizedError();
    }
    request.principal = { kind, fingerprint: fingerprint(token), name: kind === 'admin' ? names[token] : undefined };
  };
  const open = async () => {};
  const internal = app.config.protectInternalRoutes;

  const adminFingerprints = new Set(app.config.adminTokens.map(fingerprint));
  app.decorate('authFailures', failures);
  app.decorate('identifyAdminToken', (token: string) => (kindOf(token, ['admin']) ? { fingerprint: fingerprint(token), name: names[token] } : undefined));
  app.decorate('isAdminFingerprint', (value: string) => adminFingerprints.has(value));
  app.decorate('requireApiKey', guard(['api']));
  app.decorate('requireAdminToken', guard(['admin']));
  app.decorate('requireMetricsReader', internal ? guard(['metrics', 'admin']) : open);
  app.decorate('requireDocsReader', internal ? guard(['api', 'admin', 'metrics']) : open);
  // Spelling "Bearer" differently or sending a new wrong token each time lands in the address's bucket.
  app.decorate('rateLimitKey', (kind: TokenKind) => (request: FastifyRequest) => {
    const token = bearer(request);
    return kindOf(token, [kind]) ? `token:${fingerprint(token!)}` : `ip:${request.ip}`;
  });
}

/**
 * Failed authentications per client address in fixed windows. Written here because @fastify/rate-limit counts
 * requests, not outcomes; in memory, per process (replicas each count their own).
 */
function createFailureCounter(max: number, windowMs: number) {
  const windows = new Map<string, { start: number; count: number }>();
  const current = (address: string, now: number) => {
    const window = windows.get(address);
    return window && now - window.start < windowMs ? window : undefined;
  };
  return {
    exceeded: (address: string) => (current(address, Date.now())?.count ?? 0) >= max,
    record(address: string) {
      const now = Date.now();
      const window = current(address, now);
      if (window) window.count += 1;
      else {
        // Forget closed windows once there are many, so the map stays as small as the last minute's attackers.
        if (windows.size >= 10_000) for (const [key, value] of windows) if (now - value.start >= windowMs) windows.delete(key);
        windows.set(address, { start: now, count: 1 });
      }
    },
  };
}

export default fp(authPlugin, { name: 'auth', fastify: '5.x' });

/** Who acted, for the audit trail: the token's configured name, else its fingerprint (never the token). */
export function actorOf(request: FastifyRequest): string {
  const p = request.principal;
  if (!p) return 'unknown';
  return `${p.kind}:${p.name ?? p.fingerprint}`;
}
