// Coded errors (DESIGN.md §5 "Shapes"): services throw these; src/plugins/error-handler.ts maps every error to
// {statusCode, code, error, message}. Codes are stable: clients switch on them. Errors defined here are ours,
// so their messages are shown to clients even for 5xx; any other 5xx message is hidden.
import createError, { type FastifyErrorConstructor } from '@fastify/error';

export const EXPOSE = Symbol.for('merchant-billing.expose');

export function defineError(code: string, message: string, statusCode: number): FastifyErrorConstructor {
  const Ctor = createError(code, message, statusCode);
  (Ctor.prototype as unknown as Record<symbol, boolean>)[EXPOSE] = true;
  return Ctor;
}

export function isExposed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[EXPOSE] === true;
}

export const NotFoundError = defineError('NOT_FOUND', '%s not found', 404);
export const ValidationError = defineError('VALIDATION_ERROR', '%s', 400);
export const UnauthorizedError = defineError('UNAUTHORIZED', 'Missing or invalid bearer token', 401);
export const StateConflictError = defineError('STATE_CONFLICT', '%s', 409);

/** Extra, non-secret fields a coded error carries to the client (e.g. paymentId). */
export function withDetails<E extends Error>(error: E, details: Record<string, unknown>): E {
  (error as E & { details?: Record<string, unknown> }).details = details;
  return error;
}
