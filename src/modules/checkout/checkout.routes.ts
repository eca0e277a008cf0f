// What every browser route shares (docs/api.md "Registrations and orders"): no auth; the single-use `state` binds a redirect to its
// registration or order. GET (query string) and POST (form) are both accepted. The answer is a 303 to the returnUrl
// (or RETURN_URL, or the built-in result page) or, with Accept: application/json, JSON: 200 on success, the error
// shape otherwise. Each module registers its own redirect routes with `redirectRoutes` (registrations:
// billing-redirect.routes.ts, orders: payment-redirect.routes.ts); the result page is registered here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { errorBody } from '../../plugins/error-handler.ts';
import { FAILURE_STATUS, type CheckoutFailureCode, type CheckoutResult } from './checkout.result.ts';
import { CheckoutRedirect, CheckoutSuccess, RedirectFields } from '../shared/schemas.ts';
import { renderResultPage } from './result.page.ts';
import { TAGS } from '../../lib/api-document.ts';

export type RedirectHandler = (fields: Record<string, string | undefined>) => Promise<CheckoutResult>;

/** One browser route: its path, what the API document calls it, and what handles it. */
export interface RedirectRoute {
  path: string;
  operationId: string;
  summary: string;
  handle: RedirectHandler;
}

/** JSON-mode failures by status, from the one table of their statuses. */
const FAILURES = Object.entries(FAILURE_STATUS).reduce<Record<number, CheckoutFailureCode[]>>((byStatus, [code, status]) => {
  byStatus[status] ??= [];
  byStatus[status].push(code as CheckoutFailureCode);
  return byStatus;
}, {});

/** A client that asks for JSON and not HTML: browser routes answer it JSON instead of a redirect or a page. */
export function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

function resultUrl(app: App): string {
  return app.config.returnUrl ?? `${app.config.publicBaseUrl}/result`;
}

function respond(app: App, request: FastifyRequest, reply: FastifyReply, result: CheckoutResult) {
  const { returnUrl, status, ...rest } = result;
  if (wantsJson(request)) {
    if (status === 'success') return reply.status(200).send({ status, ...rest });
    const { code, message, ...details } = rest as Extract<CheckoutResult, { status: 'failed' }>;
    const statusCode = FAILURE_STATUS[code];
    return reply.status(statusCode).send(errorBody(statusCode, code, message, details));
  }
  const target = new URL(returnUrl ?? resultUrl(app));
  target.searchParams.set('status', status);
  for (const [key, value] of Object.entries(rest)) {
    if (typeof value === 'string' && key !== 'message' && key !== 'reason') target.searchParams.set(key, value);
  }
  return reply.redirect(target.toString(), 303);
}

/** Registers each route as GET (query string) and POST (form), answering by redirect or JSON. */
export function redirectRoutes(routes: RedirectRoute[]) {
  return async (app: App) => {
    for (const { path, operationId, summary, handle } of routes) {
      const handler = async (request: FastifyRequest, reply: FastifyReply) => {
        const fields = { ...(request.query as object), ...((request.body as object | undefined) ?? {}) } as Record<string, string | undefined>;
        return respond(app, request, reply, await handle(fields));
      };
      // `state` is required: without it (in the query string, or in a form post's fields) the handler answers
      // INVALID_STATE, as a redirect with status=failed or, in JSON mode, 400; the schema leaves it optional so
      // that this stays the handler's answer.
      const schema = {
        tags: [TAGS.browser.name],
        querystring: RedirectFields,
        requiredQuery: ['state'],
        response: { 200: CheckoutSuccess, 303: CheckoutRedirect },
        responseDescriptions: { 200: 'With Accept: application/json (and not text/html): it went through, and these are the ids' },
        errors: FAILURES,
      };
      app.get(path, { schema: { ...schema, operationId: `${operationId}Get`, summary: `${summary} (query string)` } }, handler);
      app.post(
        path,
        {
          schema: {
            ...schema,
            operationId: `${operationId}Post`,
            summary: `${summary} (form post)`,
            consumes: ['application/x-www-form-urlencoded', 'application/json'],
            body: RedirectFields,
          },
        },
        handler,
      );
    }
  };
}

/** The built-in result page, where a redirect goes when neither the checkout's returnUrl nor RETURN_URL is set. */
export async function resultPageRoutes(app: App) {
  const ResultPage = Type.String({ description: 'an HTML page that tells the customer the outcome in plain words' });
  app.get(
    '/result',
    {
      schema: {
        operationId: 'getResultPage',
        summary: 'The built-in result page (when no returnUrl or RETURN_URL is set)',
        tags: [TAGS.browser.name],
        produces: ['text/html'],
        response: { 200: ResultPage },
      },
    },
    async (request, reply) => reply.type('text/html; charset=utf-8').send(renderResultPage(request.query as Record<string, string>)),
  );
}
