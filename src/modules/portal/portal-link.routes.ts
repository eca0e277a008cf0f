// The portal link and the session guard (docs/portal.md "Customer portal"). GET /portal/session/:token opens a
// session once: it sets the portal cookie (signed with CONSOLE_SESSION_KEYS, HttpOnly, SameSite=Lax so that it comes
// with the redirect from the merchant's site, Secure in production, path /portal) carrying a random secret, never the
// token, and answers 303 to the overview or the flow's page. A used, expired or unknown link is a 410 page in the
// link's language that names nobody. The guard makes every other portal page the session's customer's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { isLocale, speech, type Locale } from '../i18n/messages.ts';
import type { Flow, PortalSessions } from './portal-sessions.ts';
import { renderPortal } from './portal-page.ts';

export const PORTAL_COOKIE = 'portal_session';

/** The cookie's attributes (its path keeps it to the portal's pages). */
export const portalCookieOptions = (secure: boolean) => ({ path: '/portal', httpOnly: true, sameSite: 'lax' as const, secure, signed: true });

/** The page a flow's link opens, for its subscription. */
function landing(flow: Flow | null, subscriptionId: string | null): string {
  if (!flow || !subscriptionId) return '/portal';
  return flow === 'cancel' ? `/portal/subscriptions/${subscriptionId}/cancel` : `/portal/subscriptions/${subscriptionId}`;
}

/** The 410 page of a link that cannot be used (or the 401 page of a session that ended), in `locale`. */
function renderGone(request: FastifyRequest, reply: FastifyReply, locale: Locale, kind: 'linkGone' | 'sessionEnded', switchHref?: string) {
  const { t } = speech(locale);
  return renderPortal(
    request,
    reply,
    'error',
    { title: t(`portal.errors.${kind}Heading`), message: t(`portal.errors.${kind}`), locale, switchHref },
    kind === 'linkGone' ? 410 : 401,
  );
}

export function portalLinkRoutes(deps: { sessions: PortalSessions; sessionTtlMs: number; secureCookies: boolean }) {
  const { sessions } = deps;
  return async function portalLink(app: App) {
    app.get(
      '/session/:token',
      {
        schema: {
          params: Type.Object({ token: Type.String({ maxLength: 200 }) }),
          querystring: Type.Object({ lang: Type.Optional(Type.String({ maxLength: 5 })) }),
        },
      },
      async function openLink(request, reply) {
        // The token is in the address: never sent on as a Referer.
        reply.header('referrer-policy', 'no-referrer');
        const { opened, locale } = await sessions.open(request.params.token);
        if (!opened) {
          // The page's own language switch (there is no session to keep it in).
          const shown = isLocale(request.query.lang) ? request.query.lang : locale;
          const other = shown === 'ko' ? 'en' : 'ko';
          return renderGone(request, reply, shown, 'linkGone', `?lang=${other}`);
        }
        reply.setCookie(PORTAL_COOKIE, opened.secret, { ...portalCookieOptions(deps.secureCookies), maxAge: Math.floor(deps.sessionTtlMs / 1000) });
        reply.header('cache-control', 'no-store');
        return reply.redirect(landing(opened.flow, opened.subscriptionId), 303);
      },
    );
  };
}

function readSecret(request: FastifyRequest): string | undefined {
  const raw = request.cookies[PORTAL_COOKIE];
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}

/** The live session the request's cookie names, if any. */
export async function sessionOf(sessions: PortalSessions, request: FastifyRequest) {
  const secret = readSecret(request);
  return secret ? await sessions.find(secret) : undefined;
}

/** The guard of every portal page but the link: a live session makes the request its customer's; else the 401 page. */
export function requirePortalSession(sessions: PortalSessions) {
  return async function portalSessionGuard(request: FastifyRequest, reply: FastifyReply) {
    const session = await sessionOf(sessions, request);
    if (!session) {
      // No session, so no language but the one the page's own switch asks for.
      const lang = (request.query as { lang?: unknown } | undefined)?.lang;
      const shown: Locale = isLocale(lang) ? lang : 'ko';
      reply.send(await renderGone(request, reply, shown, 'sessionEnded', `?lang=${shown === 'ko' ? 'en' : 'ko'}`));
      return reply;
    }
    request.portal = session;
  };
}
