// The overview (/portal, heading "구독 관리" / "Your subscriptions") and one subscription's page (/portal/subscriptions/
// :id, where a consent or payment-method link lands): each subscription of the session's customer, current ones first,
// with what it costs, when it charges, its card or phone (masked), a scheduled cancellation, a price increase or a
// trial waiting for consent, and its actions; then the latest payments with their refunds, and the records' link.
// The language switch (POST /portal/language) is here too: it keeps the choice in the session.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { CATALOGS, isLocale, speech } from '../i18n/messages.ts';
import type { PortalDeps } from './portal-deps.ts';
import { ownedSubscriptionId, PortalIdParams, renderPortal, renderPortalError } from './portal-page.ts';
import { cardOf } from './subscription-card.ts';

/** The payments the overview lists; the records CSV has every one. */
export const PAYMENTS_SHOWN = 24;

const DoneQuery = Type.Object({ done: Type.Optional(Type.String({ maxLength: 40 })) });
const LanguageBody = Type.Object(
  { _csrf: Type.Optional(Type.String()), locale: Type.String({ maxLength: 5 }), next: Type.Optional(Type.String({ maxLength: 300 })) },
  { additionalProperties: false },
);

/** The notice of a finished action (`?done=canceled`): only the catalog's own sentences, never the query's text. */
function doneNotice(locale: 'ko' | 'en', done: string | undefined): string | undefined {
  const notices = CATALOGS[locale].portal.done as Record<string, string>;
  return done && Object.hasOwn(notices, done) ? notices[done] : undefined;
}

/** Where the switch goes back to: a portal page of this service only, else the overview. */
function portalPath(next: string | undefined): string {
  if (!next?.startsWith('/portal') || next.includes('\\') || next.includes('//')) return '/portal';
  const url = new URL(next, 'http://portal.invalid');
  return url.origin === 'http://portal.invalid' && (url.pathname === '/portal' || url.pathname.startsWith('/portal/')) ? url.pathname : '/portal';
}

export function overviewPage(deps: PortalDeps) {
  const { actions } = deps;
  const { db } = deps.service;
  return async function overview(scope: App) {
    scope.get('/', { schema: { querystring: DoneQuery } }, async function showOverview(request, reply) {
      const session = request.portal!;
      const { t } = speech(session.locale);
      const [subscriptions, payments, waiting] = await Promise.all([
        actions.subscriptionsOf(session.userId),
        actions.paymentsOf(session.userId, PAYMENTS_SHOWN),
        actions.consentsWaiting(session.userId),
      ]);
      const names = new Map(subscriptions.map((s) => [s.id, s.orderName]));
      return renderPortal(request, reply, 'overview', {
        title: t('portal.overview.heading'),
        cards: subscriptions.map((s) => cardOf(s, waiting, t)),
        payments: payments.map((p) => ({ ...p, item: p.subscriptionId ? (names.get(p.subscriptionId) ?? '') : '' })),
        notice: doneNotice(session.locale, request.query.done),
      });
    });

    scope.get('/subscriptions/:id', { schema: { params: PortalIdParams, querystring: DoneQuery } }, async function showSubscription(request, reply) {
      const session = request.portal!;
      const { t } = speech(session.locale);
      const id = await ownedSubscriptionId(db, session, request.params.id);
      const subscription = id ? (await actions.subscriptionsOf(session.userId)).find((s) => s.id === id) : undefined;
      if (!subscription) return renderPortalError(request, reply, 404, 'NOT_FOUND');
      return renderPortal(request, reply, 'subscription', {
        title: t('portal.subscription.heading'),
        card: cardOf(subscription, await actions.consentsWaiting(session.userId), t),
        notice: doneNotice(session.locale, request.query.done),
      });
    });

    scope.post('/language', { schema: { body: LanguageBody }, preHandler: scope.csrfProtection }, async function switchLanguage(request, reply) {
      const { locale, next } = request.body;
      if (isLocale(locale)) await deps.sessions.setLocale(request.portal!.id, locale);
      return reply.redirect(portalPath(next), 303);
    });
  };
}
