// Idempotency-Key on every admin POST/PATCH and merchant API POST (docs/api.md "Idempotency"), one mechanism for both: scope is
// method + route + canonical resource id + key; the request (body and query) is compared by hash. The same key with
// the same request answers the stored status and body without acting again; with a different request it is 409
// IDEMPOTENCY_KEY_REUSED; while the first is still running it is 409 IDEMPOTENCY_IN_PROGRESS. Records are kept for
// 24 hours. Coded errors are stored like successes (a replay of a declined charge is the same decline); an
// unexpected failure removes the record so the key can be retried.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import { Type } from 'typebox';
import { codesByStatus, defineError, IDEMPOTENCY_KEY_HEADER, isExposed, isUniqueViolation } from '../../lib/errors.ts';
import { errorBody } from '../../plugins/error-handler.ts';
export const IdempotencyKeyReusedError = defineError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request', 409);
export const IdempotencyInProgressError = defineError('IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still running', 409);

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/** What a route taking an Idempotency-Key can answer besides its own errors (for its documented `errors`). */
export const IDEMPOTENT_ERRORS = codesByStatus(IdempotencyKeyReusedError, IdempotencyInProgressError);

const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'Your key for this action (e.g. a UUID), kept 24 h: the same key with the same request answers the first answer again ' +
    '(header Idempotent-Replayed: true) without acting twice; with another request, 409 IDEMPOTENCY_KEY_REUSED; while the first runs, ' +
    '409 IDEMPOTENCY_IN_PROGRESS. Retry with the same key after a timeout or a network error.',
});

/**
 * The Idempotency-Key header of a route. Required on the routes that can move money (their dry runs included):
 * its absence is 400 IDEMPOTENCY_KEY_REQUIRED (src/plugins/error-handler.ts), before anything runs.
 */
export function idempotencyHeaders(required: boolean) {
  return Type.Object({ [IDEMPOTENCY_KEY_HEADER]: required ? IdempotencyKey : Type.Optional(IdempotencyKey) });
}

export interface Outcome<T = unknown> {
  statusCode: number;
  body: T;
}

/**
 * Method + route + canonical resource id: the same key on `/payments/<ID>/cancel` with the id in upper case is the
 * same request (PostgreSQL compares UUIDs case-insensitively, so it would act on the same row).
 */
function idempotencyScope(request: FastifyRequest): string {
  const id = (request.params as { id?: unknown } | undefined)?.id;
  return scopeOf(request.method, request.routeOptions.url ?? request.url.split('?')[0]!, typeof id === 'string' ? id : undefined);
}

/**
 * The scope of an admin or API route: `scopeOf('POST', '/admin/payments/:id/resolve', id)`. The console's forms run
 * their action under the scope of the admin route that does the same, so both share one idempotency store.
 */
export function scopeOf(method: string, routeUrl: string, id?: string): string {
  return `${method} ${routeUrl} ${id?.toLowerCase() ?? ''}`.trimEnd();
}

/** JSON with object keys sorted, so {a, b} and {b, a} hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * For answers that carry a secret (a webhook endpoint's signing secret): `store` removes it before the answer is
 * kept, and `replay` puts it back from where it is kept encrypted, so the idempotency table never holds a secret.
 */
export interface Sealing<T> {
  store?: (body: T) => unknown;
  replay?: (stored: unknown) => Promise<T>;
}

export interface OnceOptions<T> extends Sealing<T> {
  /**
   * While the first request with the key is still running, wait up to this long (real time: it waits on I/O, not on
   * the business clock) for its outcome and answer that, instead of 409 IDEMPOTENCY_IN_PROGRESS at once. The console
   * uses it: a double click on a form must show what the action did, not an error, when the action in fact acted.
   */
  waitForRunningMs?: number;
}

/** How often a waiting request looks for the first one's outcome. */
const RUNNING_POLL_MS = 100;

export function createIdempotency(deps: { db: Db; clock: Clock; ttlMs?: number }) {
  const { db, clock } = deps;
  const ttlMs = deps.ttlMs ?? IDEMPOTENCY_TTL_MS;

  async function claim(scope: string, key: string, requestHash: string): Promise<{ id: string } | { replay: Outcome }> {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const now = clock.now();
      try {
        const created = await db.idempotencyRecord.create({ data: { scope, key, requestHash, expiresAt: new Date(now.getTime() + ttlMs) } });
        return { id: created.id };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const existing = await db.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
      if (!existing) continue;
      if (existing.expiresAt <= now) {
        await db.idempotencyRecord.deleteMany({ where: { id: existing.id, expiresAt: { lte: now } } });
        continue;
      }
      if (existing.requestHash !== requestHash) throw new IdempotencyKeyReusedError();
      if (existing.status === 'IN_PROGRESS') throw new IdempotencyInProgressError();
      return { replay: { statusCode: existing.responseStatus!, body: existing.responseBody } };
    }
    throw new IdempotencyInProgressError();
  }

  /** `claim`, retried while the first request is running, for up to `waitMs`; then its 409 IN_PROGRESS stands. */
  async function claimWaiting(scope: string, key: string, requestHash: string, waitMs: number) {
    const giveUpAt = performance.now() + waitMs;
    for (;;) {
      try {
        return await claim(scope, key, requestHash);
      } catch (error) {
        if (!(error instanceof IdempotencyInProgressError) || performance.now() + RUNNING_POLL_MS > giveUpAt) throw error;
      }
      await sleep(RUNNING_POLL_MS);
    }
  }

  /**
   * Runs `handler` at most once per (scope, key), the request identified by the hash of `payload`; a replay answers
   * the stored outcome (`replayed`). A coded error is stored, then thrown; a replay of it is its stored outcome.
   */
  async function once<T>(
    scope: string,
    key: string,
    payload: unknown,
    handler: () => Promise<Outcome<T>>,
    options: OnceOptions<T> = {},
  ): Promise<{ outcome: Outcome<T>; replayed: boolean }> {
    const requestHash = createHash('sha256').update(canonical(payload)).digest('hex');
    const claimed = await claimWaiting(scope, key, requestHash, options.waitForRunningMs ?? 0);
    if ('replay' in claimed) {
      const { statusCode, body } = claimed.replay;
      return { outcome: { statusCode, body: options.replay && statusCode < 300 ? await options.replay(body) : (body as T) }, replayed: true };
    }
    let outcome: Outcome<T>;
    try {
      outcome = await handler();
    } catch (error) {
      if (isExposed(error)) {
        const e = error as Error & { statusCode: number; code: string; details?: Record<string, unknown> };
        await complete(claimed.id, { statusCode: e.statusCode, body: errorBody(e.statusCode, e.code, e.message, e.details) });
      } else {
        await db.idempotencyRecord.delete({ where: { id: claimed.id } }).catch(() => undefined);
      }
      throw error;
    }
    await complete(claimed.id, options.store ? { statusCode: outcome.statusCode, body: options.store(outcome.body) } : outcome);
    return { outcome, replayed: false };
  }

  /**
   * Runs `handler` at most once per (method, path, key) and returns the body to send (the status is set on the
   * reply); a replay returns the stored status and body.
   */
  async function run<T>(request: FastifyRequest, reply: FastifyReply, handler: () => Promise<Outcome<T>>, options: Sealing<T> = {}): Promise<T> {
    // The route's header schema (idempotencyHeaders) has already required it where it must be, and bounded it.
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) {
      const outcome = await handler();
      reply.status(outcome.statusCode);
      return outcome.body;
    }
    const { outcome, replayed } = await once(idempotencyScope(request), key, { query: request.query, body: request.body }, handler, options);
    reply.status(outcome.statusCode);
    if (replayed) reply.header('idempotent-replayed', 'true');
    return outcome.body;
  }

  async function complete(id: string, outcome: Outcome) {
    await db.idempotencyRecord.update({
      where: { id },
      data: { status: 'COMPLETED', responseStatus: outcome.statusCode, responseBody: JSON.parse(JSON.stringify(outcome.body ?? null)) },
    });
  }

  return { run, once };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
