// Coded errors (docs/api.md "Errors"): services throw these; src/plugins/error-handler.ts maps every error to
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
export const IdempotencyKeyRequiredError = defineError('IDEMPOTENCY_KEY_REQUIRED', 'This route moves money: send an Idempotency-Key header', 400);

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** Required headers whose absence answers with a code of its own instead of VALIDATION_ERROR. */
export const MISSING_HEADER_ERRORS: Record<string, FastifyErrorConstructor> = {
  [IDEMPOTENCY_KEY_HEADER]: IdempotencyKeyRequiredError,
};

/** Extra, non-secret fields a coded error carries to the client (e.g. paymentId). */
export function withDetails<E extends Error>(error: E, details: Record<string, unknown>): E {
  (error as E & { details?: Record<string, unknown> }).details = details;
  return error;
}

/** The codes of these errors by HTTP status: what a route's schema documents as its own `errors`. */
export function codesByStatus(...errors: FastifyErrorConstructor[]): Record<number, string[]> {
  const byStatus: Record<number, string[]> = {};
  for (const ErrorType of errors) {
    const error = new ErrorType();
    const status = error.statusCode ?? 500;
    byStatus[status] ??= [];
    byStatus[status].push(error.code);
  }
  return byStatus;
}

/** Prisma's unique-constraint violation: another writer got there first. */
export const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === 'P2002';
