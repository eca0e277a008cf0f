// The operator console (/console, docs/console.md "Operator console"). HOW TO ADD A PAGE:
// 1. Write `views/<name>.eta` (no <html>/<nav>: views/layout.eta wraps it). `<%= x %>` escapes; use it.kst(date)
//    for times (Korea time; the layout names KST once), it.won(amount), it.term(group, code) for a status or reason,
//    it.t('console.…') for every word (both catalogs, src/modules/i18n), and `<h1>` starting with the page's heading.
// 2. In a `<name>.page.ts` beside this file, export `(deps) => async (scope: App) => { scope.get('/path', …) }` whose
//    handler reads with one or two queries (keyset pages, no N+1) and ends `return renderPage(request, reply, '<name>',
//    { title, ...data })` (the title from speechOf(request).t). Register it below in the `pages` scope (behind the session
//    guard), and link it in layout.eta's list of navigation items.
// 3. A form that changes something: build it with `actionForm(url, button, fields)` in the handler, render it with
//    `<%~ include('./partials/action-form', { form: it.forms.x, csrf: it.csrf }) %>`, and register its POST with
//    `registerAction(scope, idempotency, { url, adminRoute, fields, labels, adminBody, toBody, act, redirect })`: CSRF,
//    a required "Reason", the key made at render time, the admin route's body schema and service (no rule of its own).
// 4. GET-only forms (search, filters) need no CSRF; write them as plain <form method="get">. No inline script or style.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
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
import { TooManyAuthFailuresError } from '../../plugins/auth.ts';
import { consoleAuthRoutes, consoleLocaleRoutes, identifyOperator, requireConsoleSession } from './console-auth.routes.ts';
import { renderError, speechOf } from './console-page.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { listPages } from './lists.page.ts';
import { needsAttentionPage } from './needs-attention.page.ts';
import { paymentPage } from './payment.page.ts';
import { reconciliationPage } from './reconciliation.page.ts';
import { reportsPage } from './reports.page.ts';
import { searchPage } from './search.page.ts';
import { subscriptionPage } from './subscription.page.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HTMX_DIR = path.dirname(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'));

export function consoleRoutes(deps: ConsoleDeps) {
  const { sessions } = deps;
  return async (scope: App) => {
    const { config } = deps.service;
    await scope.register(formbody);
    // Every console request speaks CONSOLE_LOCALE until the session (the guard) or the sign-in link says otherwise.
    scope.decorateRequest('consoleLocale', config.console.locale);
    // Nothing from another host, no inline script or style: every script and stylesheet is a file of this service.
    await scope.register(helmet, {
      contentSecurityPolicy: {
        directives: {
          'default-src': ["'self'"],
          'script-src': ["'self'"],
          'style-src': ["'self'"],
          'img-src': ["'self'", 'data:'],
          'connect-src': ["'self'"],
          'form-action': ["'self'"],
          'frame-ancestors': ["'none'"],
        },
      },
      referrerPolicy: { policy: 'same-origin' },
    });
    // Outside production the keys are generated under .data/ (dev-secrets.ts); a bare buildApp without them (a
    // benchmark) signs with a key of this process only: its sign-ins end with the process.
    const keys = config.console.sessionKeys.length > 0 ? config.console.sessionKeys : [randomBytes(32)];
    await scope.register(cookie, { secret: keys });
    await scope.register(csrf, {
      sessionPlugin: '@fastify/cookie',
      cookieOpts: { path: '/console', httpOnly: true, sameSite: 'strict', secure: config.console.secureCookies, signed: true },
    });
    // An address past RATE_LIMIT_AUTH_FAILURES is answered 429 whatever it sends, until its minute is over (after the
    // cookie plugin's own hook, so the refusal renders as a page like any other error).
    scope.addHook('onRequest', async (request) => {
      if (scope.authFailures.exceeded(request.ip)) throw new TooManyAuthFailuresError();
    });
    await scope.register(view, {
      engine: { eta: new Eta({ views: path.join(HERE, 'views'), cache: true }) },
      root: path.join(HERE, 'views'),
      layout: 'layout.eta',
      production: true,
    });
    await scope.register(fastifyStatic, { root: path.join(HERE, 'public'), prefix: '/static/', decorateReply: false, maxAge: '1h' });
    await scope.register(fastifyStatic, {
      root: HTMX_DIR,
      prefix: '/vendor/htmx/',
      decorateReply: false,
      allowedPath: (file) => file === '/htmx.min.js',
      maxAge: '1h',
    });

    scope.setErrorHandler((error: Error & { statusCode?: number; code?: string; details?: Record<string, unknown> }, request, reply) => {
      const statusCode = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500;
      if (statusCode >= 500) request.log.error({ err: error }, 'console page failed');
      const { t } = speechOf(request);
      const message =
        error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET'
          ? t('common.formExpired')
          : statusCode >= 500
            ? t('console.frame.error.serverError')
            : error.message;
      return renderError(request, reply, statusCode, { code: error.code, message, details: statusCode < 500 ? error.details : undefined });
    });
    // A page no route has, shown to a signed-in operator as their page (their name, language and its switch); it
    // reveals nothing a visitor without a session could not see.
    scope.setNotFoundHandler(async (request, reply) => {
      await identifyOperator(scope, sessions, request);
      return renderError(request, reply, 404, { code: 'NOT_FOUND', message: speechOf(request).t('console.frame.error.noSuchPage') });
    });

    // Sign-in and sign-out: limited per client address like the other browser routes (RATE_LIMIT_BROWSER).
    await scope.register(async (auth) => {
      await auth.register(rateLimit, { max: config.rateLimit.browser, timeWindow: 60_000 });
      await auth.register(consoleAuthRoutes({ sessions, ttlMs: config.console.sessionTtlMs, secureCookies: config.console.secureCookies }));
    });

    // Every page below is the signed-in operator's. Limited per client address at the admin routes' rate
    // (RATE_LIMIT_ADMIN), counted before the session is looked up, so forged cookies are counted too.
    await scope.register(async (pages) => {
      await pages.register(rateLimit, { global: false, max: config.rateLimit.admin, timeWindow: 60_000 });
      pages.addHook('onRequest', pages.rateLimit());
      pages.addHook('onRequest', requireConsoleSession(pages, sessions));
      await pages.register(consoleLocaleRoutes(sessions));
      await pages.register(needsAttentionPage(deps));
      await pages.register(searchPage(deps));
      await pages.register(subscriptionPage(deps));
      await pages.register(paymentPage(deps));
      await pages.register(listPages(deps));
      await pages.register(reconciliationPage(deps));
      await pages.register(reportsPage(deps));
      await pages.register((await import('./audit.page.ts')).auditPage(deps));
    });
  };
}
