// Browser routes (DESIGN.md §5): no auth; the single-use `state` binds a redirect to its registration or order.
// GET (query string) and POST (form) are both accepted. The answer is a 303 to the returnUrl (or RETURN_URL, or
// the built-in result page) or, with Accept: application/json, JSON: 200 on success, the error shape otherwise.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { errorBody } from '../../plugins/error-handler.ts';
import { FAILURE_STATUS, type CheckoutFailureCode, type CheckoutResult } from './checkout.result.ts';
import { CheckoutRedirect, CheckoutSuccess, RedirectFields } from '../shared/schemas.ts';
import { renderResultPage } from './result.page.ts';

export type RedirectHandler = (fields: Record<string, string | undefined>) => Promise<CheckoutResult>;

/** What each browser route is, for the API document: its operation name and summary. */
const ROUTE_DOCS: Record<string, { operationId: string; summary: string }> = {
  '/billing/success': {
    operationId: 'billingSuccess',
    summary: 'The gateway’s success redirect of a registration: issues the billing key, creates the subscription',
  },
  '/billing/fail': { operationId: 'billingFail', summary: 'The gateway’s failure redirect of a registration' },
  '/payments/success': { operationId: 'paymentSuccess', summary: 'The gateway’s success redirect of an order: confirms the payment with the stored amount' },
  '/payments/fail': { operationId: 'paymentFail', summary: 'The gateway’s failure redirect of an order' },
};

/** JSON-mode failures by status, from the one table of their statuses. */
const FAILURES = Object.entries(FAILURE_STATUS).reduce<Record<number, CheckoutFailureCode[]>>((byStatus, [code, status]) => {
  byStatus[status] ??= [];
  byStatus[status].push(code as CheckoutFailureCode);
  return byStatus;
}, {});

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export function checkoutRoutes(handlers: Record<string, RedirectHandler>) {
  return async (app: App) => {
    const resultUrl = app.config.returnUrl ?? `${app.config.publicBaseUrl}/result`;

    const respond = (request: FastifyRequest, reply: FastifyReply, result: CheckoutResult) => {
      const { returnUrl, status, ...rest } = result;
      if (wantsJson(request)) {
        if (status === 'success') return reply.status(200).send({ status, ...rest });
        const { code, message, ...details } = rest as Extract<CheckoutResult, { status: 'failed' }>;
        const statusCode = FAILURE_STATUS[code];
        return reply.status(statusCode).send(errorBody(statusCode, code, message, details));
      }
      const target = new URL(returnUrl ?? resultUrl);
      target.searchParams.set('status', status);
      for (const [key, value] of Object.entries(rest)) {
        if (typeof value === 'string' && key !== 'message' && key !== 'reason') target.searchParams.set(key, value);
      }
      return reply.redirect(target.toString(), 303);
    };

    for (const [path, handle] of Object.entries(handlers)) {
      const handler = async (request: FastifyRequest, reply: FastifyReply) => {
        const fields = { ...(request.query as object), ...((request.body as object | undefined) ?? {}) } as Record<string, string | undefined>;
        return respond(request, reply, await handle(fields));
      };
      const docs = ROUTE_DOCS[path] ?? { operationId: path.replace(/\W+(\w)/g, (_m, c: string) => c.toUpperCase()), summary: path };
      const schema = { tags: ['browser'], querystring: RedirectFields, response: { 200: CheckoutSuccess, 303: CheckoutRedirect }, errors: FAILURES };
      app.get(path, { schema: { ...schema, operationId: `${docs.operationId}Get`, summary: `${docs.summary} (query string)` } }, handler);
      app.post(
        path,
        {
          schema: {
            ...schema,
            operationId: `${docs.operationId}Post`,
            summary: `${docs.summary} (form post)`,
            consumes: ['application/x-www-form-urlencoded', 'application/json'],
            body: RedirectFields,
          },
        },
        handler,
      );
    }

    const ResultPage = Type.String({ description: 'an HTML page that tells the customer the outcome in plain words' });
    app.get(
      '/result',
      {
        schema: {
          operationId: 'getResultPage',
          summary: 'The built-in result page (when no returnUrl or RETURN_URL is set)',
          tags: ['browser'],
          produces: ['text/html'],
          response: { 200: ResultPage },
        },
      },
      async (request, reply) => reply.type('text/html; charset=utf-8').send(renderResultPage(request.query as Record<string, string>)),
    );
  };
}
