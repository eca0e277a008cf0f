// The customer portal (/portal, docs/portal.md "Customer portal"): pages the service hosts where the person who
// pays sees and acts on their own subscriptions. Its own scope: CSP (nothing from another host, no inline script or
// style), cookies signed with CONSOLE_SESSION_KEYS, CSRF on every form, RATE_LIMIT_BROWSER per address, errors as pages
// in the session's language. No script at all: every page works with JavaScript off. HOW TO ADD A PAGE:
// 1. `views/<name>.eta` (views/layout.eta wraps it; `<%= x %>` escapes; it.t(key) for words, it.money, it.date,
//    it.word(group, code) for codes; never a raw code or a word written in the template).
// 2. A `<name>.page.ts` here exporting `(deps) => async (scope: App) => { scope.get(...) }`, registered below; read
//    the customer's data only through `request.portal` (the session's userId) and ownedSubscriptionId.
// 3. An action: a form from portalForm() (its key made at render time) and its POST by registerPortalAction.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import view from '@fastify/view';
import { Eta } from 'eta';
import type { App } from '../../app-types.ts';
import { cancelPage } from './cancel.page.ts';
import { consentActions } from './consent.actions.ts';
import { overviewPage } from './overview.page.ts';
import { paymentMethodPage } from './payment-method.page.ts';
import type { PortalDeps } from './portal-deps.ts';
import { portalLinkRoutes, requirePortalSession, sessionOf } from './portal-link.routes.ts';
import { renderPortalError, renderPortalNotFound } from './portal-page.ts';
import { recordsCsv } from './records.csv.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export function portalRoutes(deps: PortalDeps) {
  return async function portal(scope: App) {
    const { config } = deps.service;
    await scope.register(formbody);
    await scope.register(helmet, {
      contentSecurityPolicy: {
        directives: {
          'default-src': ["'self'"],
          'script-src': ["'none'"],
          'style-src': ["'self'"],
          'img-src': ["'self'", 'data:'],
          'connect-src': ["'self'"],
          // The payment-method change posts here and is then sent (303) to the gateway's window.
          'form-action': ["'self'", ...(config.gateway.baseUrl ? [new URL(config.gateway.baseUrl).origin] : [])],
          'frame-ancestors': ["'none'"],
        },
      },
      referrerPolicy: { policy: 'same-origin' },
    });
    // Every page, the link included, per client address (RATE_LIMIT_BROWSER): the scope's own onRequest hook, so it
    // counts before the session guard (a route-level limiter would run after the guard, and never count a refusal).
    await scope.register(rateLimit, { global: false, max: config.rateLimit.browser, timeWindow: 60_000 });
    scope.addHook('onRequest', scope.rateLimit());
    const keys = config.console.sessionKeys.length > 0 ? config.console.sessionKeys : [randomBytes(32)];
    await scope.register(cookie, { secret: keys });
    await scope.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: '_portal_csrf',
      cookieOpts: { path: '/portal', httpOnly: true, sameSite: 'lax', secure: config.console.secureCookies, signed: true },
    });
    await scope.register(view, {
      engine: { eta: new Eta({ views: path.join(HERE, 'views'), cache: true }) },
      root: path.join(HERE, 'views'),
      layout: 'layout.eta',
      production: true,
    });
    await scope.register(fastifyStatic, { root: path.join(HERE, 'public'), prefix: '/static/', decorateReply: false, maxAge: '1h' });

    scope.setErrorHandler(function portalError(error: Error & { statusCode?: number; code?: string; details?: { reason?: unknown } }, request, reply) {
      const statusCode = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
      if (statusCode >= 500) request.log.error({ err: error }, 'portal page failed');
      const code = error.code?.startsWith('FST_CSRF') ? 'FST_CSRF' : statusCode === 429 ? 'RATE_LIMITED' : error.code;
      return renderPortalError(request, reply, statusCode, statusCode >= 500 ? undefined : code, error.details);
    });
    // An unknown path is outside the guarded pages: its 404 page still speaks the session's language when there is one,
    // and has a language switch of its own when there is none.
    scope.setNotFoundHandler(async function portalNotFound(request, reply) {
      request.portal ??= await sessionOf(deps.sessions, request);
      return renderPortalNotFound(request, reply);
    });

    await scope.register(portalLinkRoutes({ sessions: deps.sessions, sessionTtlMs: config.portal.sessionTtlMs, secureCookies: config.console.secureCookies }));
    // Every page below is the session's customer's.
    await scope.register(async function customerPages(pages: App) {
      pages.addHook('onRequest', requirePortalSession(deps.sessions));
      await pages.register(overviewPage(deps));
      await pages.register(cancelPage(deps));
      await pages.register(consentActions(deps));
      await pages.register(paymentMethodPage(deps));
      await pages.register(recordsCsv(deps));
    });
  };
}
