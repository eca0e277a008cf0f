// One error handler for the whole app (docs/architecture.md "House style"): every failure leaves as
// {statusCode, code, error, message[, details]}. Messages of unexpected 5xx errors are hidden from clients and
// logged instead; our coded errors (src/lib/errors.ts) keep theirs.
// What the router refuses before any route runs goes through the same shape, the request log and the guards of its
// path's scope (rate limit, token): a path that is not valid percent-encoded UTF-8 is marked and made routable by
// `markMalformedUrl` (Fastify's rewriteUrl) and refused 400 VALIDATION_ERROR by `refuseBeforeRoute` once the scope's
// onRequest guards have run; a path served with other methods answers 405 METHOD_NOT_ALLOWED with `Allow` there too.
// Path parameters are not cut by the router (MAX_PARAM_LENGTH): each route's schema bounds them (400). Whatever the
// router still refuses by itself (`answerFrameworkError`) answers in the shape and is logged, without the guards.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { defineError, isExposed, MISSING_HEADER_ERRORS, ValidationError } from '../lib/errors.ts';

export const MethodNotAllowedError = defineError('METHOD_NOT_ALLOWED', 'Method %s is not allowed on this path; see the Allow header', 405);

/**
 * The router's limit on one path parameter: above any request line Node accepts (16 KiB of headers by default), so
 * a long parameter reaches its route, whose schema refuses it after the scope's guards (find-my-way's default, 100,
 * answered 414 before authentication, outside the error shape).
 */
export const MAX_PARAM_LENGTH = 16 * 1024;

const MALFORMED_URL = Symbol('merchant-billing.malformed-url');
type MarkedRequest = IncomingMessage & { [MALFORMED_URL]?: true };

/**
 * Fastify's rewriteUrl: a path that is not valid percent-encoded UTF-8 (what find-my-way's decodeURI refuses, e.g.
 * `/api/v1/payments/%E0%A4%A`) is marked, and its `%` escaped so that the router can route it to its scope, where
 * `refuseBeforeRoute` answers 400 after the scope's guards. The query string is left as sent (it is parsed leniently).
 */
export function markMalformedUrl(raw: IncomingMessage): string {
  const url = raw.url ?? '/';
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.includes('%')) return url;
  try {
    decodeURI(path);
    return url;
  } catch {
    (raw as MarkedRequest)[MALFORMED_URL] = true;
    return path.replaceAll('%', '%25') + (end === -1 ? '' : url.slice(end));
  }
}

// The methods a path can be served with; OPTIONS is left out (no route takes it: it stays 404 as before).
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods some route serves this request's path with (HEAD wherever GET is: Fastify exposes it). */
function allowedMethods(app: FastifyInstance, url: string): string[] {
  return ROUTABLE_METHODS.filter((method) => app.findRoute({ method, url }) !== null);
}

const FRAMEWORK_CODES: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

/** The one error shape (docs/api.md "Errors"); the OpenAPI document refers to it as components.schemas.Error. */
export const ErrorBodySchema = Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  code: Type.String({ description: 'stable, SCREAMING_SNAKE: clients switch on it' }),
  error: Type.String({ description: 'the HTTP status text' }),
  message: Type.String(),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'non-secret facts, e.g. paymentId' })),
});
export type ErrorBody = Static<typeof ErrorBodySchema>;

interface ValidationIssue {
  keyword: string;
  params: { missingProperty?: string };
}

/** A header whose absence has a code of its own (IDEMPOTENCY_KEY_REQUIRED), when that is what validation found. */
function missingHeaderError(error: FastifyError & { validationContext?: string }) {
  if (error.validationContext !== 'headers') return undefined;
  const issue = (error.validation as ValidationIssue[] | undefined)?.find((v) => v.keyword === 'required');
  const header = issue?.params.missingProperty;
  return header === undefined ? undefined : MISSING_HEADER_ERRORS[header];
}

export function errorBody(statusCode: number, code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  const body: ErrorBody = { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
  if (details) body.details = details;
  return body;
}

/** The router's own refusals (Fastify's frameworkErrors: a bad URL it still finds, a parameter over MAX_PARAM_LENGTH). */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : error.code === 'FST_ERR_BAD_URL' ? 400 : 500;
  const code = statusCode === 414 ? 'URI_TOO_LONG' : statusCode === 400 ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR';
  // The router's message quotes the path; neither the log nor the answer repeats it (a token may sit in a path).
  request.log.warn({ code: error.code, statusCode }, 'request refused by the router');
  const message =
    statusCode === 500 ? 'Internal Server Error' : statusCode === 414 ? 'A path parameter is too long' : 'The path is not valid percent-encoded UTF-8';
  reply.status(statusCode).send(errorBody(statusCode, code, message));
}

/** Everything the service answers when no route matched: 404 NOT_FOUND (each guarded scope sets it for its prefix). */
export function notFound(request: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send(errorBody(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
}

/**
 * A preParsing hook of the root, so it runs after every onRequest hook of the request's scope (the rate limit and
 * the token guard of /api/v1 and /admin count and authenticate first) and before a body is read (a QUERY or TRACE
 * body is never parsed): a malformed path is 400, a method its path is not served with 405 with Allow.
 */
function refuseBeforeRoute(app: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if ((request.raw as MarkedRequest)[MALFORMED_URL]) throw new ValidationError('the path is not valid percent-encoded UTF-8');
    if (!request.is404 || request.method === 'OPTIONS') return;
    const allow = allowedMethods(app, request.url);
    if (allow.length === 0) return;
    reply.header('allow', allow.join(', '));
    throw new MethodNotAllowedError(request.method);
  };
}

async function errorHandlerPlugin(app: FastifyInstance) {
  app.addHook('preParsing', refuseBeforeRoute(app));

  app.setErrorHandler((error: FastifyError & { details?: Record<string, unknown> }, request, reply) => {
    const missingHeader = missingHeaderError(error);
    if (missingHeader) {
      const coded = new missingHeader();
      const statusCode = coded.statusCode ?? 400;
      return reply.status(statusCode).send(errorBody(statusCode, coded.code, coded.message));
    }
    if (error.validation) {
      const message = error.message.replace(/^(body|querystring|params|headers)\/?/, (m) => m);
      return reply.status(400).send(errorBody(400, 'VALIDATION_ERROR', message));
    }
    const raw = error.statusCode ?? 500;
    const statusCode = raw >= 400 && raw <= 599 ? raw : 500;
    const exposed = isExposed(error);
    if (statusCode >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    if (exposed) {
      return reply.status(statusCode).send(errorBody(statusCode, error.code, error.message, error.details));
    }
    if (statusCode >= 500) {
      return reply.status(statusCode).send(errorBody(statusCode, 'INTERNAL_ERROR', 'Internal Server Error'));
    }
    const code = FRAMEWORK_CODES[statusCode] ?? 'BAD_REQUEST';
    return reply.status(statusCode).send(errorBody(statusCode, code, error.message));
  });

  app.setNotFoundHandler(notFound);
}

export default fp(errorHandlerPlugin, { name: 'error-handler', fastify: '5.x' });
