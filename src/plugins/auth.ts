// Bearer tokens (DESIGN.md §5): API_KEYS open the merchant API, ADMIN_TOKENS the admin routes; a token of the
// wrong kind is 401 like a wrong one. Several tokens of each kind may be valid at once so they can be rotated.
// Comparison is constant-time over SHA-256 digests, so neither content nor length leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../lib/errors.ts';

export type TokenKind = 'api' | 'admin';

declare module 'fastify' {
  interface FastifyInstance {
    requireApiKey: (request: FastifyRequest) => Promise<void>;
    requireAdminToken: (request: FastifyRequest) => Promise<void>;
  }
  interface FastifyRequest {
    /** Who called: the token kind and a short fingerprint of the token (never the token). */
    principal?: { kind: TokenKind; fingerprint: string; name?: string };
  }
}

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
  const apiKeys = app.config.apiKeys.map(digest);
  const adminTokens = app.config.adminTokens.map(digest);

  const names = app.config.adminTokenNames;
  const guard = (kind: TokenKind, tokens: Buffer[]) => async (request: FastifyRequest) => {
    const token = bearer(request);
    if (!token || !matchesAny(token, tokens)) throw new UnauthorizedError();
    request.principal = { kind, fingerprint: fingerprint(token), name: kind === 'admin' ? names[token] : undefined };
  };

  app.decorate('requireApiKey', guard('api', apiKeys));
  app.decorate('requireAdminToken', guard('admin', adminTokens));
}

export default fp(authPlugin, { name: 'auth', fastify: '5.x' });

/** Who acted, for the audit trail: the token's configured name, else its fingerprint (never the token). */
export function actorOf(request: FastifyRequest): string {
  const p = request.principal;
  if (!p) return 'unknown';
  return `${p.kind}:${p.name ?? p.fingerprint}`;
}
