// How a console page renders inside the layout and how a form posts an operator's action (the one helper every
// page module uses; see index.ts for the steps). Pages are Eta templates under views/ (escaping by default:
// `<%= %>` escapes, `<%~ %>` is only for HTML rendered by a template), wrapped in views/layout.eta by @fastify/view.
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, type TObject, type TProperties, Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { IdParams } from '../shared/schemas.ts';
import { scopeOf, type Idempotency } from '../idempotency/idempotency.ts';
import { formatKst, formatKstDate, formatWon, isoInstant } from './korea-time.ts';

/** What every template receives besides its own data (layout: navigation, operator, CSRF token for its forms). */
export interface PageContext {
  title: string;
  operator?: string;
  csrf: string;
  path: string;
  kst: typeof formatKst;
  kstDate: typeof formatKstDate;
  won: typeof formatWon;
  iso: typeof isoInstant;
}

/** Renders `views/<template>.eta` inside the layout, with `data` as `it` (plus PageContext). */
export async function renderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  data: { title: string } & Record<string, unknown>,
  statusCode = 200,
) {
  const p = request.principal;
  const context: PageContext = {
    title: data.title,
    operator: p ? (p.name ?? `admin ${p.fingerprint}`) : undefined,
    csrf: reply.generateCsrf(),
    path: request.url.split('?')[0]!,
    kst: formatKst,
    kstDate: formatKstDate,
    won: formatWon,
    iso: isoInstant,
  };
  // Pages show operators' data: never cached by a browser or a proxy.
  reply.status(statusCode).header('cache-control', 'no-store').type('text/html; charset=utf-8');
  return reply.viewAsync(`${template}.eta`, { ...context, ...data });
}

/** One field of an action form besides the ones every action has (`_csrf`, `idempotencyKey`, "Reason"). */
export type FormField =
  | { name: string; label: string; kind: 'text' | 'number'; required?: boolean; hint?: string }
  | { name: string; label: string; kind: 'choice'; choices: Array<{ value: string; label: string }> };

/**
 * An action form as views/partials/action-form.eta renders it. Its idempotency key is made now, when the page is
 * rendered: submitting the same rendered form twice (a double click, a resent POST) acts once.
 */
export interface ActionForm {
  action: string;
  button: string;
  fields: FormField[];
  idempotencyKey: string;
  danger?: boolean;
}

export function actionForm(action: string, button: string, fields: FormField[] = [], options: { danger?: boolean } = {}): ActionForm {
  return { action, button, fields, idempotencyKey: randomUUID(), danger: options.danger };
}

/** The fields every action form posts. */
const ActionBase = {
  _csrf: Type.String(),
  idempotencyKey: Type.String({ minLength: 1, maxLength: 200 }),
  reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }),
};

/**
 * Registers `POST <url>` (in the console scope, so under /console and behind the session and CSRF guards): the
 * operator's action `act` runs through the admin route's own service, under the admin route's idempotency scope
 * (`adminRoute`, e.g. '/admin/payments/:id/resolve') with the form's key. Success (and its replay) answers 303 to
 * `redirect(id)`; a coded error (and its replay) renders the error page with its status, in words.
 */
export function registerAction<P extends TProperties>(
  scope: App,
  idempotency: Idempotency,
  spec: {
    url: string;
    adminRoute: string;
    fields: P;
    act: (id: string, body: Static<TObject<P>> & { reason: string }, request: FastifyRequest) => Promise<unknown>;
    redirect: (id: string) => string;
  },
) {
  const body = Type.Object({ ...ActionBase, ...spec.fields }, { additionalProperties: false });
  scope.post(spec.url, { schema: { params: IdParams, body }, preHandler: scope.csrfProtection }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const { _csrf, idempotencyKey, ...input } = request.body as Record<string, string>;
    const { outcome } = await idempotency.once(scopeOf('POST', spec.adminRoute, id), idempotencyKey!, { body: input }, async () => ({
      statusCode: 200,
      body: await spec.act(id, input as never, request),
    }));
    if (outcome.statusCode >= 400) return renderError(request, reply, outcome.statusCode, outcome.body as { code?: string; message?: string });
    return reply.redirect(spec.redirect(id), 303);
  });
}

/** The error page: the status and the service's message in words, with a way back. */
export function renderError(request: FastifyRequest, reply: FastifyReply, statusCode: number, error: { code?: string; message?: string }) {
  return renderPage(
    request,
    reply,
    'error',
    {
      title: statusCode === 404 ? 'Not found' : 'Not done',
      statusCode,
      code: error.code ?? 'ERROR',
      message: error.message ?? 'Something went wrong',
      back: request.headers.referer,
    },
    statusCode,
  );
}
