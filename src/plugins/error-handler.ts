// One error handler for the whole app (DESIGN.md §7): every failure leaves as
// {statusCode, code, error, message[, details]}. Messages of unexpected 5xx errors are hidden from clients and
// logged instead; our coded errors (src/lib/errors.ts) keep theirs.
import { STATUS_CODES } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance } from 'fastify';
import { isExposed } from '../lib/errors.ts';

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

export interface ErrorBody {
  statusCode: number;
  code: string;
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

export function errorBody(statusCode: number, code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  const body: ErrorBody = { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
  if (details) body.details = details;
  return body;
}

async function errorHandlerPlugin(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError & { details?: Record<string, unknown> }, request, reply) => {
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
