// Browser routes (DESIGN.md §5): no auth; the single-use `state` binds a redirect to its registration or order.
// GET (query string) and POST (form) are both accepted. The answer is a 303 to the returnUrl (or RETURN_URL, or
// the built-in result page) or, with Accept: application/json, JSON: 200 on success, the error shape otherwise.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import { errorBody } from '../../plugins/error-handler.ts';
import { FAILURE_STATUS, type CheckoutResult } from './checkout.result.ts';
import { RedirectFields } from './checkout.schemas.ts';
import { renderResultPage } from './result.page.ts';

export type RedirectHandler = (fields: Record<string, string | undefined>) => Promise<CheckoutResult>;

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
      app.get(path, { schema: { tags: ['browser'], querystring: RedirectFields } }, handler);
      app.post(path, { schema: { tags: ['browser'], querystring: RedirectFields, body: RedirectFields } }, handler);
    }

    app.get('/result', { schema: { tags: ['browser'] } }, async (request, reply) =>
      reply.type('text/html; charset=utf-8').send(renderResultPage(request.query as Record<string, string>)),
    );
  };
}
