// How a console page renders inside the layout and how a form posts an operator's action (the one helper every
// page module uses; see index.ts for the steps). Pages are Eta templates under views/ (escaping by default:
// `<%= %>` escapes, `<%~ %>` is only for HTML rendered by a template), wrapped in views/layout.eta by @fastify/view.
// Every page speaks the operator's language (request.consoleLocale: the session's choice, else CONSOLE_LOCALE): its
// words from the catalog's `console` section (it.t), codes by it.term, money by it.won, times in Korea time (it.kst).
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox';
import { Value } from 'typebox/value';
import { ValidationError } from '../../lib/errors.ts';
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { scopeOf, type Idempotency } from '../idempotency/idempotency.ts';
import { termFor } from './code-words.ts';
import { formatKst, formatKstDate, isoInstant } from './korea-time.ts';
import { formatWonNumber, refusalInWords } from './money.ts';
import type { Catalog } from '../i18n/catalog.ko.ts';
import { LOCALES, type Locale, type MessageKey, type Params, type Speech, speech } from '../i18n/messages.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The language of a console page: CONSOLE_LOCALE (index.ts), the session's choice (the guard), or the sign-in link's. */
    consoleLocale: Locale;
    /** The console session of a signed-in request (set by the session guard). */
    consoleSessionId?: string;
  }
}

/** A language the console speaks, as a form or query field. */
export const ConsoleLocale = Type.Union(LOCALES.map((locale) => Type.Literal(locale)));

/** How the request's console page speaks (its language's translator and formatters). */
export const speechOf = (request: FastifyRequest): Speech => speech(request.consoleLocale);

/** A code of the service (a status, a reason) and the catalog's group of words for it; none for a gateway's own code. */
export interface Code {
  group?: keyof Catalog['words'];
  code: string;
}

/** A status and codes as the page says them: "MISMATCHED: AMOUNT, DATE" / "불일치: 금액, 날짜"; either may be absent. */
function codesFor(locale: Locale, status: Code | undefined, codes: Code[] = []): string {
  const say = (c: Code) => (c.group ? termFor(locale, c.group, c.code) : c.code);
  const reasons = codes.map(say).join(', ');
  return [status ? say(status) : '', reasons].filter(Boolean).join(': ');
}

/** A kind of row on Needs attention and Search ("Settlement line", also its rows' data-kind) in the page's language. */
const kindKey = (kind: string) => `console.frame.kind.${kind.toLowerCase().replace(/ (\w)/g, (_, c: string) => c.toUpperCase())}` as MessageKey;

/** What every template receives besides its own data (layout: navigation, operator, CSRF token for its forms). */
export interface PageContext extends Speech {
  title: string;
  operator?: string;
  csrf: string;
  path: string;
  /** The page the language switch comes back to: this one (a GET), else the page the form was on. */
  here: string;
  kst: typeof formatKst;
  kstDate: typeof formatKstDate;
  /** Won in the page's language: "9,900원" / "9,900 KRW". */
  won: Speech['money'];
  /** Won without the unit, for columns headed KRW. */
  wonNumber: typeof formatWonNumber;
  iso: typeof isoInstant;
  term: (group: keyof Catalog['words'], code: string | null | undefined) => string;
  codes: (status: Code | undefined, codes?: Code[]) => string;
  kind: (kind: string) => string;
}

/** The actions a record page says it has done after their 303 (`?done=<action>`, views/partials/done.eta). */
const DONE = ['resolve', 'refund', 'refund-outcome', 'external-refund', 'charge', 'pause', 'resume', 'cancel', 'erase'] as const;
const doneSentence = (says: Speech, done: unknown) =>
  DONE.includes(done as (typeof DONE)[number]) ? says.t(`console.frame.done.${done as (typeof DONE)[number]}`) : undefined;

/**
 * Renders `views/<template>.eta` inside the layout, with `data` as `it` (plus PageContext). A `done` in `data` (the
 * action a 303 came back from) reaches the template as the sentence saying it is done, in the page's language.
 */
export async function renderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  data: { title: string } & Record<string, unknown>,
  statusCode = 200,
) {
  const p = request.principal;
  const says = speechOf(request);
  const context: PageContext = {
    ...says,
    title: data.title,
    operator: p ? (p.name ?? `admin ${p.fingerprint}`) : undefined,
    csrf: reply.generateCsrf(),
    path: request.url.split('?')[0]!,
    here: request.method === 'GET' ? request.url : (backLink(request) ?? '/console'),
    kst: formatKst,
    kstDate: formatKstDate,
    won: says.money,
    wonNumber: formatWonNumber,
    iso: isoInstant,
    term: (group, code) => termFor(says.locale, group, code),
    codes: (status, codes) => codesFor(says.locale, status, codes),
    kind: (kind) => says.t(kindKey(kind)),
  };
  // Pages show operators' data: never cached by a browser or a proxy.
  reply.status(statusCode).header('cache-control', 'no-store').type('text/html; charset=utf-8');
  const done = 'done' in data ? { done: doneSentence(says, data.done) } : {};
  return reply.viewAsync(`${template}.eta`, { ...context, ...data, ...done });
}

/**
 * Words a template writes from the catalog: a message key, or a key with its placeholders; an amount in `money` is
 * written by the page's own money formatter (it.money: "9,900 KRW" / "9,900원"), never formatted here.
 */
export type Words = MessageKey | { key: MessageKey; params?: Params; money?: Record<string, number> };

/** One field of an action form besides the ones every action has (`_csrf`, `idempotencyKey`, "Reason"). */
export type FormField =
  | { name: string; label: MessageKey; kind: 'text' | 'number'; required?: boolean; hint?: Words }
  | { name: string; label: MessageKey; kind: 'choice'; choices: ReadonlyArray<{ value: string; label: MessageKey }> };

/**
 * An action form as views/partials/action-form.eta renders it: a box with its heading (h3) and a sentence of what it
 * does, its fields, a required Reason and its button; `danger` marks what cannot be undone (cancel, refund, charge)
 * with the destructive style. Its idempotency key is made now, when the page is rendered: submitting the same
 * rendered form twice (a double click, a resent POST) acts once.
 */
export interface ActionForm {
  action: string;
  heading: MessageKey;
  description: Words;
  button: MessageKey;
  fields: FormField[];
  idempotencyKey: string;
  danger?: boolean;
}

/** The actions the catalog words (console.records.actions.<name>: heading, description, button). */
export type ActionName = Exclude<keyof Catalog['console']['records']['actions'], 'wholeWonTitle'>;

/** The form of action `name` posting to `action`, its heading, sentence and button the catalog's words for `name`. */
export function actionForm(action: string, name: ActionName, fields: FormField[] = [], options: { danger?: boolean } = {}): ActionForm {
  const words = `console.records.actions.${name}` as const;
  return {
    action,
    heading: `${words}.heading`,
    description: `${words}.description`,
    button: `${words}.button`,
    fields,
    idempotencyKey: randomUUID(),
    danger: options.danger,
  };
}

/** The fields every action form posts besides its own (all text, as a form sends them). */
const FormBase = { _csrf: Type.String(), idempotencyKey: Type.String({ minLength: 1, maxLength: 200 }), reason: Type.String({ maxLength: 500 }) };

/**
 * How long a second submit of a form (a double click) waits for the first one's outcome: longer than one gateway call
 * may take (PAYMENT_TIMEOUT_MS, 30 s by default), so it answers what the first did; past it, the page says the action
 * is still running (409 IDEMPOTENCY_IN_PROGRESS) and the operator reloads the page to see it.
 */
const SECOND_SUBMIT_WAIT_MS = 45_000;

/** The form's words for a body the admin route's schema refuses: "Amount must be >= 1". */
function describeInvalid(schema: TSchema, body: unknown, labels: Record<string, string>, says: Speech): string {
  const [first] = Value.Errors(schema, body);
  if (!first) return says.t('console.frame.error.formInvalid');
  const field = first.instancePath.replace(/^\//, '') || String((first.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '');
  return `${labels[field] ?? field} ${first.message}`;
}

/**
 * Registers `POST <url>` in the console scope (under /console, behind the session guard) with CSRF, for one
 * operator action:
 * - the form's text fields (`fields`, plus `_csrf`, `idempotencyKey` and `reason`) become the admin route's body
 *   (`toBody`: "" for an optional field means absent) and are checked against the admin route's own body schema
 *   (`adminBody`), so a value the admin route refuses is refused here in the same terms;
 * - `act` runs the admin route's service under the admin route's idempotency scope (`adminRoute`, e.g.
 *   '/admin/payments/:id/resolve') with the key the form was rendered with: a second submit of the same form does not
 *   act again and answers like the first, waiting for it while it still runs;
 * - success (and its replay) answers 303 to `redirect(id)`; a coded error (and its replay) renders the error page
 *   with its status, in words.
 */
export function registerAction<P extends TProperties, B extends TSchema>(
  scope: App,
  idempotency: Idempotency,
  spec: {
    url: string;
    adminRoute: string;
    fields: P;
    labels: Record<string, string>;
    adminBody: B;
    toBody: (form: Static<TObject<P>> & { reason: string }) => Record<string, unknown>;
    /** What the admin route answers on success: 201 for the routes that create (a charge, an external refund). */
    adminStatus?: 200 | 201;
    act: (id: string, body: Static<B>, request: FastifyRequest) => Promise<unknown>;
    redirect: (id: string) => string;
  },
) {
  const form = Type.Object({ ...FormBase, ...spec.fields }, { additionalProperties: false });
  const labels = { reason: 'Reason', ...spec.labels };
  scope.post(spec.url, { schema: { params: IdParams, body: form }, preHandler: scope.csrfProtection }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const { _csrf, idempotencyKey, ...fields } = request.body as Record<string, string>;
    const body = spec.toBody({ ...fields, reason: fields.reason!.trim() } as never);
    checkAdminBody(request, spec.adminBody, body, labels);
    const outcome = await actOnce(idempotency, {
      scope: scopeOf('POST', spec.adminRoute, id),
      idempotencyKey: idempotencyKey!,
      // What the admin route's key compares (its query is empty) and what it would store: the same request with the
      // same key answers the same there (test/modules/console/action-idempotency.test.ts).
      payload: { query: {}, body },
      adminStatus: spec.adminStatus,
      act: () => spec.act(id, body as Static<B>, request),
    });
    if (outcome.statusCode >= 400) return renderError(request, reply, outcome.statusCode, outcome.body as Parameters<typeof renderError>[3]);
    return reply.redirect(spec.redirect(id), 303);
  });
}

/** Refuses (400, in the form's words) a body the admin route's own schema refuses: the same rules, the same terms. */
export function checkAdminBody(request: FastifyRequest, schema: TSchema, body: unknown, labels: Record<string, string>): void {
  if (!Value.Check(schema, body)) throw new ValidationError(describeInvalid(schema, body, labels, speechOf(request)));
}

/**
 * Runs an operator's action once under its admin route's idempotency `scope` (scopeOf of the admin route) with the
 * key the form was rendered with, the request identified as the admin route identifies it (`payload`, hashed), storing
 * what the admin route would answer (`adminStatus`, 200 unless it creates):
 * a second submit of the same form does not act again and answers like the first, waiting for it while it still
 * runs; a coded error is stored and answered the same way. Answers the outcome (the admin route's status and body).
 */
export async function actOnce(
  idempotency: Idempotency,
  spec: { scope: string; idempotencyKey: string; payload: unknown; adminStatus?: 200 | 201; act: () => Promise<unknown> },
): Promise<{ statusCode: number; body: unknown }> {
  const { outcome } = await idempotency.once(
    spec.scope,
    spec.idempotencyKey,
    spec.payload,
    async () => ({ statusCode: spec.adminStatus ?? 200, body: await spec.act() }),
    { waitForRunningMs: SECOND_SUBMIT_WAIT_MS },
  );
  return outcome;
}

/** "" (a field left empty) as absent. */
export const optional = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/** A whole number typed in a form ("12,900" or "12900"), or the text itself when it is not one (the schema then refuses it). */
export const wholeNumber = (value: string | undefined): number | string | undefined => {
  const text = optional(value)?.replace(/,/g, '');
  return text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : text;
};

/** The error page: the status and the service's message in words, with a way back. */
export function renderError(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: number,
  error: { code?: string; message?: string; details?: Record<string, unknown> },
) {
  const says = speechOf(request);
  return renderPage(
    request,
    reply,
    'error',
    {
      title: says.t(statusCode === 404 ? 'common.notFound' : 'console.frame.error.notDone'),
      statusCode,
      code: error.code ?? 'ERROR',
      message: error.message === undefined ? says.t('console.frame.error.somethingWrong') : refusalInWords({ ...error, message: error.message }, says),
      back: backLink(request),
    },
    statusCode,
  );
}

/** Where "Back" goes from an error: the console page the form was on (never another origin). */
function backLink(request: FastifyRequest): string | undefined {
  const referer = request.headers.referer;
  if (!referer) return undefined;
  try {
    const url = new URL(referer);
    return url.host === request.host && url.pathname.startsWith('/console') ? `${url.pathname}${url.search}` : undefined;
  } catch {
    return undefined;
  }
}
