// One error handler for the whole app (DESIGN.md §7): every failure leaves as
// {statusCode, code, error, message[, details]}. Messages of unexpected 5xx errors are hidden from clients and
// logged instead; our coded errors (src/lib/errors.ts) keep theirs.
import { STATUS_CODES } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isExposed, MISSING_HEADER_ERRORS } from '../lib/errors.ts';

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

/** The one error shape (DESIGN.md §5 "Shapes"); the OpenAPI document refers to it as components.schemas.Error. */
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

async function errorHandlerPlugin(app: FastifyInstance) {
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

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}

export default fp(errorHandlerPlugin, { name: 'error-handler', fastify: '5.x' });
