// GET /billing/toss-window/:state (docs/api.md "Gateways"): the page a Toss registration's `window.url` names when the
// service runs against the real Toss (toss-window.page.ts). Like every browser route it has no auth: the single-use
// `state` binds it to its registration, and it serves only a registration that is still waiting for its window. It
// reads and writes nothing else: an expired registration is expired by its redirect, as always. Errors are pages in
// the reader's language, or the error shape with Accept: application/json. The answer is never stored by a cache, and
// its address (which holds the state) is not sent on as a Referer (helmet's Referrer-Policy: no-referrer).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { TAGS } from '../../lib/api-document.ts';
import { errorBody } from '../../plugins/error-handler.ts';
import { wantsJson } from '../checkout/checkout.routes.ts';
import type { Locale } from '../i18n/messages.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import { StringEnum } from '../shared/schemas.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { checkoutUrls, opensThroughOurPage, TOSS_WINDOW_PATH } from '../shared/terms.ts';
import { registrationByState } from './registrations.read.ts';
import { renderTossWindowPage, renderTossWindowRefusal, TOSS_WINDOW_CSP, type TossWindowRefusal, type TossWindowTerms } from './toss-window.page.ts';

/** Each refusal's status and code, as the JSON answer gives them. */
const REFUSED: Record<TossWindowRefusal, { statusCode: number; code: string; message: string }> = {
  NOT_FOUND: { statusCode: 404, code: 'NOT_FOUND', message: 'No registration waits for a Toss window under this state' },
  EXPIRED: { statusCode: 410, code: 'STATE_EXPIRED', message: 'This registration has expired; ask for a new one' },
  USED: { statusCode: 410, code: 'STATE_USED', message: 'This registration’s window has already answered' },
};

/**
 * What the page shows for a state (decided from the registration as read): the window's terms, or why not. Only a
 * registration whose gateway's window opens through our page (opensThroughOurPage) is served; one still PENDING, with
 * no window answer attached, before its expiresAt (the service's clock).
 */
export async function tossWindowOf(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'gateway' | 'gateways'>,
  state: string,
): Promise<{ terms: TossWindowTerms } | { refusal: TossWindowRefusal }> {
  const row = await registrationByState(deps.db, state);
  const window = row ? gatewayFor(deps, row.gateway).window : undefined;
  if (!row || row.customerKey === null || !window || !opensThroughOurPage(window)) return { refusal: 'NOT_FOUND' };
  const waiting = row.status === 'PENDING' && row.transactionId === null;
  if (row.status === 'EXPIRED' || (waiting && row.expiresAt <= deps.clock.now())) return { refusal: 'EXPIRED' };
  if (!waiting) return { refusal: 'USED' };
  return { terms: { clientKey: window.clientKey, customerKey: row.customerKey, ...checkoutUrls(deps.config, 'billing', row.state) } };
}

const Lang = StringEnum(['ko', 'en'], { description: 'the page’s language: ko (the default) or en' });

export function tossWindowRoutes(deps: ServiceDeps) {
  return async function tossWindowPageRoutes(app: App) {
    app.get(
      `${TOSS_WINDOW_PATH}/:state`,
      {
        schema: {
          operationId: 'getTossWindowPage',
          summary: 'The page that opens Toss’s card window for a TOSS registration (its window.url against the real Toss)',
          description:
            'Loads Toss’s JavaScript SDK and calls requestBillingAuth with the registration’s customerKey, successUrl and failUrl. ' +
            'An unknown or finished registration answers a page in the same language (JSON with Accept: application/json).',
          tags: [TAGS.browser.name],
          params: Type.Object({ state: Type.String({ minLength: 1, maxLength: 200, description: 'the registration’s single-use state' }) }),
          querystring: Type.Object({ lang: Type.Optional(Lang) }),
          produces: ['text/html'],
          response: { 200: Type.String({ description: 'an HTML page (Korean unless lang=en) that opens Toss’s card window' }) },
          errors: { 404: ['NOT_FOUND'], 410: ['STATE_EXPIRED', 'STATE_USED'] },
        },
        helmet: { contentSecurityPolicy: { useDefaults: false, directives: TOSS_WINDOW_CSP } },
      },
      async function tossWindowPage(request: FastifyRequest<{ Params: { state: string }; Querystring: { lang?: Locale } }>, reply: FastifyReply) {
        const locale = request.query.lang ?? 'ko';
        const switchHref = `?lang=${locale === 'ko' ? 'en' : 'ko'}`;
        reply.header('cache-control', 'no-store');
        const found = await tossWindowOf(deps, request.params.state);
        if ('terms' in found) return reply.type('text/html; charset=utf-8').send(renderTossWindowPage(locale, found.terms, switchHref));
        const { statusCode, code, message } = REFUSED[found.refusal];
        if (wantsJson(request)) return reply.status(statusCode).send(errorBody(statusCode, code, message));
        return reply
          .status(statusCode)
          .type('text/html; charset=utf-8')
          .send(renderTossWindowRefusal(locale, found.refusal, switchHref));
      },
    );
  };
}
