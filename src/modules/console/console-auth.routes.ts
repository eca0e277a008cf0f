// Sign-in, sign-out and the session guard of the console (docs/console.md "Operator console"). Sign-in takes an admin
// token once and answers a session cookie (signed, HttpOnly, SameSite=Strict, Secure in production) that carries a
// random secret, never the token. A wrong token is a failed authentication in the same per-address counter as the
// bearer guards (src/plugins/auth.ts): past RATE_LIMIT_AUTH_FAILURES the address is answered 429 on every console
// route until its minute is over (the scope's onRequest hook in index.ts).
// Language: the sign-in page speaks CONSOLE_LOCALE, or the language its link chose (`?lang=`, which the form carries on
// as `lang`, so the session starts in it); once signed in, "한국어" / "English" on any page (POST /console/locale)
// sets the session's language and answers 303 back to that page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Locale } from '../i18n/messages.ts';
import type { ConsoleSessions } from './console-sessions.ts';
import { ConsoleLocale, renderPage, speechOf } from './console-page.ts';

export const SESSION_COOKIE = 'console_session';

const LoginBody = Type.Object(
  {
    _csrf: Type.String(),
    token: Type.String({ maxLength: 500 }),
    next: Type.Optional(Type.String({ maxLength: 2000 })),
    lang: Type.Optional(ConsoleLocale),
  },
  { additionalProperties: false },
);
const LoginQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })), lang: Type.Optional(ConsoleLocale) });
const LocaleBody = Type.Object(
  { _csrf: Type.String(), locale: ConsoleLocale, back: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);

/**
 * Where sign-in goes next: a console page of this service only, as the browser would resolve it (`/console/../admin`
 * is /admin, refused; `//host` and `/\host` are other origins, refused); anything else is Needs attention.
 */
export function safeNext(next: string | undefined): string {
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
    /** The sign-in page, in the language its link chose (`lang`) or CONSOLE_LOCALE; `badToken` after a wrong token. */
    const showLogin = (request: FastifyRequest, reply: FastifyReply, form: { next?: string; lang?: Locale }, badToken = false) => {
      if (form.lang) request.consoleLocale = form.lang;
      const { t, locale } = speechOf(request);
      const next = safeNext(form.next);
      const other: Locale = locale === 'ko' ? 'en' : 'ko';
      return renderPage(
        request,
        reply,
        'login',
        {
          title: t('console.frame.login.heading'),
          next,
          lang: form.lang,
          error: badToken ? t('console.frame.login.badToken') : undefined,
          // The sign-in page has no session to keep a language in: its switch is a link to the page in the other one.
          switchHref: `/console/login?${new URLSearchParams({ lang: other, ...(next === '/console' ? {} : { next }) })}`,
        },
        badToken ? 401 : 200,
      );
    };

    app.get('/login', { schema: { querystring: LoginQuery } }, async (request, reply) => showLogin(request, reply, request.query));

    app.post('/login', { schema: { body: LoginBody }, preHandler: app.csrfProtection }, async (request, reply) => {
      const identity = app.identifyAdminToken(request.body.token.trim());
      if (!identity) {
        app.authFailures.record(request.ip);
        return showLogin(request, reply, request.body, true);
      }
      const { secret } = await sessions.start(identity, request.body.lang);
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
 * The operator of a request with a live session (not ended, not expired, its admin token still in ADMIN_TOKENS): the
 * request becomes theirs (`request.principal`, as the admin token would, so audit entries name the same operator) and
 * speaks their session's language. Answers whether there was one.
 */
export async function identifyOperator(app: App, sessions: ConsoleSessions, request: FastifyRequest): Promise<boolean> {
  const secret = readSecret(request);
  const session = secret ? await sessions.find(secret) : undefined;
  if (!session || !app.isAdminFingerprint(session.tokenFingerprint)) return false;
  request.principal = { kind: 'admin', fingerprint: session.tokenFingerprint, name: session.operatorName ?? undefined };
  request.consoleSessionId = session.id;
  if (session.locale) request.consoleLocale = session.locale;
  return true;
}

/** The guard of every console page but sign-in: the session's operator (identifyOperator), or sign-in first. */
export function requireConsoleSession(app: App, sessions: ConsoleSessions) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (await identifyOperator(app, sessions, request)) return;
    const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
    return reply.redirect(`/console/login${next}`, 303);
  };
}

/**
 * The language switch of every signed-in page (behind the session guard): a form posting `locale` with the page's
 * CSRF token and the page to go back to. It sets the session's language (a value, so a second submit changes nothing
 * and answers the same) and answers 303 to that page (a console page only, as after sign-in), now in that language.
 */
export function consoleLocaleRoutes(sessions: ConsoleSessions) {
  return async (app: App) => {
    app.post('/locale', { schema: { body: LocaleBody }, preHandler: app.csrfProtection }, async (request, reply) => {
      await sessions.setLocale(request.consoleSessionId!, request.body.locale);
      return reply.redirect(safeNext(request.body.back), 303);
    });
  };
}
