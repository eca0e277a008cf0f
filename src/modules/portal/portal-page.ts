// How a portal page renders and how a form posts a customer's action (docs/portal.md "Customer portal"). Pages are
// Eta templates under views/ (`<%= %>` escapes), wrapped in views/layout.eta: the session's language (`<html lang>`),
// its switch, the link back to the merchant's returnUrl. Every word comes from the catalog (src/modules/i18n): a page
// never shows a raw code nor the API's English message.
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, type TObject, type TProperties, Type } from 'typebox';
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { scopeOf, type Idempotency } from '../idempotency/idempotency.ts';
import { type Locale, isLocale, lookup, CATALOGS, speech, type Speech } from '../i18n/messages.ts';
import { type OwnedSubscriptionId, ownedSubscriptionId as ownedBy, type PortalActor } from './portal-actions.ts';
import type { PortalSession } from './portal-sessions.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The customer's portal session, set by the session guard of the portal's pages. */
    portal?: PortalSession;
  }
}

export const actorOf = (session: PortalSession): PortalActor => ({ userId: session.userId, portalSessionId: session.id });

/** What every template receives besides its own data. */
export interface PortalContext extends Speech {
  title: string;
  csrf?: string;
  path: string;
  /** The other language, for the switch. */
  other: Locale;
  returnUrl?: string | null;
  /** Pages outside a session (a used link) switch language with a query string instead of the session's form. */
  switchHref?: string;
}

/** Renders `views/<template>.eta` inside the layout in `locale` (the session's, else the one given). */
export async function renderPortal(
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  data: { title: string; locale?: Locale; switchHref?: string } & Record<string, unknown>,
  statusCode = 200,
) {
  const session = request.portal;
  const locale = session?.locale ?? data.locale ?? 'ko';
  const context: PortalContext = {
    ...speech(locale),
    title: data.title,
    csrf: session ? reply.generateCsrf() : undefined,
    path: request.url.split('?')[0]!,
    other: locale === 'ko' ? 'en' : 'ko',
    returnUrl: session?.returnUrl,
    switchHref: data.switchHref,
  };
  // A customer's own data: never cached by a browser or a proxy.
  reply.status(statusCode).header('cache-control', 'no-store').type('text/html; charset=utf-8');
  return reply.viewAsync(`${template}.eta`, { ...context, ...data, locale });
}

/**
 * A coded error as the customer reads it: its sentence from the catalog, else a general one (never the API's message).
 * A refused withdrawal says why (its details.reason, as the confirmation page would).
 */
export function errorSentence(locale: Locale, code: string | undefined, details?: { reason?: unknown }): string {
  const errors = CATALOGS[locale].portal.errors as Record<string, string>;
  const withdrawal = CATALOGS[locale].portal.cancel as Record<string, string>;
  if (code === 'WITHDRAWAL_NOT_AVAILABLE' && typeof details?.reason === 'string' && Object.hasOwn(withdrawal, `withdrawal${details.reason}`))
    return withdrawal[`withdrawal${details.reason}`]!;
  if (code && /^[A-Z_]+$/.test(code) && errors[code]) return errors[code];
  if (code?.startsWith('FST_CSRF')) return lookup(CATALOGS[locale], 'common.formExpired')!;
  if (code === 'IDEMPOTENCY_KEY_REUSED') return lookup(CATALOGS[locale], 'common.formExpired')!;
  if (code?.startsWith('GATEWAY_') || code === 'PAYMENT_OUTCOME_UNKNOWN_REFUND') return errors.GATEWAY!;
  return errors.other!;
}

/** The error page: a heading and the sentence, in the session's language, with the way back to the overview. */
export function renderPortalError(request: FastifyRequest, reply: FastifyReply, statusCode: number, code: string | undefined, details?: { reason?: unknown }) {
  const locale = request.portal?.locale ?? 'ko';
  const t = speech(locale).t;
  const notFound = statusCode === 404;
  return renderPortal(
    request,
    reply,
    'error',
    {
      title: t(notFound ? 'portal.errors.notFoundHeading' : 'portal.errors.heading'),
      message: errorSentence(locale, notFound ? 'NOT_FOUND' : code, details),
      back: request.portal ? '/portal' : undefined,
    },
    statusCode,
  );
}

/**
 * The 404 page of a path no page has: in the session's language when the cookie names a live one (set by the caller),
 * else in the language its own switch asks for (`?lang=`, as the other pages without a session).
 */
export function renderPortalNotFound(request: FastifyRequest, reply: FastifyReply) {
  if (request.portal) return renderPortalError(request, reply, 404, 'NOT_FOUND');
  const lang = (request.query as { lang?: unknown } | undefined)?.lang;
  const locale: Locale = isLocale(lang) ? lang : 'ko';
  const { t } = speech(locale);
  const page = {
    title: t('portal.errors.notFoundHeading'),
    message: errorSentence(locale, 'NOT_FOUND'),
    locale,
    switchHref: `?lang=${locale === 'ko' ? 'en' : 'ko'}`,
  };
  return renderPortal(request, reply, 'error', page, 404);
}

/** An action form: its idempotency key is made now, when the page is rendered, so a double submit acts once. */
export interface PortalForm {
  action: string;
  button: string;
  idempotencyKey: string;
  /**
   * `danger` for what ends or refunds (cancel, withdraw); otherwise a plain button. There is no "primary" tone: no
   * choice is drawn more prominently than its opposite (subscription-card.ts says why).
   */
  tone?: 'danger';
  /** An optional text field (the cancellation's reason). */
  field?: { name: string; label: string; hint?: string };
}

export const portalForm = (action: string, button: string, options: Omit<PortalForm, 'action' | 'button' | 'idempotencyKey'> = {}): PortalForm => ({
  action,
  button,
  idempotencyKey: randomUUID(),
  ...options,
});

/** `:id` of a portal page: any text; a subscription id that is not one of this customer's is a 404 like a missing one. */
export const PortalIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** The session's customer's subscription `id`, or undefined (malformed, missing or another customer's: all alike). */
export const ownedSubscriptionId = (db: Db, session: PortalSession, id: string): Promise<OwnedSubscriptionId | undefined> => ownedBy(db, session.userId, id);

/** `_csrf` is checked by the CSRF guard (a missing one is its 403, like a wrong one), not by the schema. */
const FormBase = { _csrf: Type.Optional(Type.String()), idempotencyKey: Type.String({ minLength: 1, maxLength: 200 }) };

/**
 * How long a second submit of a form (a double tap) waits for the first one's outcome: longer than a gateway call may
 * take (a withdrawal refunds through the gateway), so it answers what the first did.
 */
const SECOND_SUBMIT_WAIT_MS = 45_000;

/**
 * Registers `POST /portal/subscriptions/:id/<name>` for one customer action: CSRF, the subscription checked to be the
 * session's customer's (else the 404 page), then `act` once per rendered form (the key made at render time, under
 * this route's own idempotency scope): a second submit does not act again and answers like the first. Success
 * answers 303 to `done(id)`; a coded error (and its replay) renders the error page in words.
 */
export function registerPortalAction<P extends TProperties>(
  scope: App,
  deps: { db: Db; idempotency: Idempotency },
  spec: {
    name: string;
    fields?: P;
    act: (who: PortalActor, id: OwnedSubscriptionId, form: Static<TObject<P>>) => Promise<unknown>;
    /** Where the browser goes after it: a portal page, or (a payment method's) the gateway's window the result names. */
    done: (id: string, result: unknown) => string | undefined;
  },
) {
  const url = `/subscriptions/:id/${spec.name}`;
  const body = Type.Object({ ...FormBase, ...(spec.fields ?? ({} as P)) }, { additionalProperties: false });
  scope.post(url, { schema: { params: PortalIdParams, body }, preHandler: scope.csrfProtection }, async function portalAction(request, reply) {
    const session = request.portal!;
    const id = await ownedSubscriptionId(deps.db, session, (request.params as { id: string }).id);
    if (!id) return renderPortalError(request, reply, 404, 'NOT_FOUND');
    const { _csrf, idempotencyKey, ...fields } = request.body as Record<string, string>;
    const { outcome } = await deps.idempotency.once(
      scopeOf('POST', `/portal${url}`, id),
      idempotencyKey!,
      { body: fields },
      async () => ({ statusCode: 200, body: (await spec.act(actorOf(session), id, fields as Static<TObject<P>>)) ?? null }),
      { waitForRunningMs: SECOND_SUBMIT_WAIT_MS },
    );
    if (outcome.statusCode >= 400) {
      const stored = outcome.body as { code?: string; details?: { reason?: unknown } };
      return renderPortalError(request, reply, outcome.statusCode, stored.code, stored.details);
    }
    const next = spec.done(id, outcome.body);
    return next ? reply.redirect(next, 303) : renderPortalError(request, reply, 409, undefined);
  });
}
