// Sign-in, sign-out and the session guard of the console (docs/operating.md "Operator console"). Sign-in takes an admin
// token once and answers a session cookie (signed, HttpOnly, SameSite=Strict, Secure in production) that carries a
// random secret, never the token. A wrong token is a failed authentication in the same per-address counter as the
// bearer guards (src/plugins/auth.ts): past RATE_LIMIT_AUTH_FAILURES the address is answered 429 on every console
// route until its minute is over (the scope's onRequest hook in index.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { ConsoleSessions } from './console-sessions.ts';
import { renderPage } from './console-page.ts';

export const SESSION_COOKIE = 'console_session';

const LoginBody = Type.Object(
  { _csrf: Type.String(), token: Type.String({ maxLength: 500 }), next: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
const LoginQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) });

/**
 * Where sign-in goes next: a console page of this service only, as the browser would resolve it (`/console/../admin`
 * is /admin, refused; `//host` and `/\host` are other origins, refused); anything else is Needs attention.
 */
function safeNext(next: string | undefined): string {
  const base = 'http://console.invalid';
  if (!next?.startsWith('/') || next.includes('\\')) return '/console';
  const url = new URL(next, base);
  const onConsole = url.origin === base && (url.pathname === '/console' || url.pathname.startsWith('/console/'));
  return onConsole ? `${url.pathname}${url.search}` : '/console';
}

export function consoleAuthRoutes(deps: { sessions: ConsoleSessions; ttlMs: number; secureCookies: boolean }) {
  const { sessions, ttlMs, secureCookies } = deps;
  const cookieOptions = { path: '/console', httpOnly: true, sameSite: 'strict' as const, secure: secureCookies, signed: true };

  return async (app: App) => {
    const showLogin = (request: FastifyRequest, reply: FastifyReply, next: string | undefined, error?: string, statusCode = 200) =>
      renderPage(request, reply, 'login', { title: 'Sign in', next: safeNext(next), error }, statusCode);

    app.get('/login', { schema: { querystring: LoginQuery } }, async (request, reply) => showLogin(request, reply, request.query.next));

    app.post('/login', { schema: { body: LoginBody }, preHandler: app.csrfProtection }, async (request, reply) => {
      const identity = app.identifyAdminToken(request.body.token.trim());
      if (!identity) {
        app.authFailures.record(request.ip);
        return showLogin(request, reply, request.body.next, 'That admin token is not valid.', 401);
      }
      const { secret } = await sessions.start(identity);
      reply.setCookie(SESSION_COOKIE, secret, { ...cookieOptions, maxAge: Math.floor(ttlMs / 1000) });
      return reply.redirect(safeNext(request.body.next), 303);
    });

    app.post('/logout', { schema: { body: Type.Object({ _csrf: Type.String() }) }, preHandler: app.csrfProtection }, async (request, reply) => {
      const secret = readSecret(request);
      if (secret) await sessions.end(secret);
      reply.clearCookie(SESSION_COOKIE, cookieOptions);
      return reply.redirect('/console/login', 303);
    });
  };
}

function readSecret(request: FastifyRequest): string | undefined {
  const raw = request.cookies[SESSION_COOKIE];
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}

/**
 * The guard of every console page but sign-in: a live session (not ended, not expired, its admin token still in
 * ADMIN_TOKENS) makes the request the operator's (`request.principal`, as the admin token would, so audit entries
 * name the same operator); anything else goes to sign-in.
 */
export function requireConsoleSession(app: App, sessions: ConsoleSessions) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const secret = readSecret(request);
    const session = secret ? await sessions.find(secret) : undefined;
    if (!session || !app.isAdminFingerprint(session.tokenFingerprint)) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
      return reply.redirect(`/console/login${next}`, 303);
    }
    request.principal = { kind: 'admin', fingerprint: session.tokenFingerprint, name: session.operatorName ?? undefined };
  };
}
