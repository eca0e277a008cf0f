// What every admin route of an operator's action shares (docs/operating.md "Admin routes"): who acted (the token's
// operator name), and the action route itself: the id in the path, a body with the reason for the audit trail, an
// Idempotency-Key (required where money moves) and the answer 200; and a pass run by hand (passRun). Each domain module registers its own admin
// routes with it (subscriptions.admin-routes.ts, payments.admin-routes.ts); app.ts mounts them under /admin behind the
// admin token.
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import { codesByStatus, StateConflictError } from '../../lib/errors.ts';
import { actorOf } from '../../plugins/auth.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { IdParams } from './schemas.ts';
import { Type, type Static, type TSchema } from 'typebox';

export const IDEMPOTENT = [IdempotencyKeyReusedError, IdempotencyInProgressError];
/** What a state-changing action may answer besides 200: a stale state, or an idempotency conflict. */
export const ACTION_ERRORS = codesByStatus(StateConflictError, ...IDEMPOTENT);
export const IdempotencyHeader = idempotencyHeaders(false);
export const RequiredIdempotencyHeader = idempotencyHeaders(true);

/** Who acted and why, for the audit trail. */
export const who = (request: FastifyRequest, reason: string) => ({ actor: actorOf(request), reason, requestId: request.id });

export function adminActions(app: App, idempotency: Idempotency, tags: string[]) {
  /**
   * An operator's action on one subscription or payment: the id in the path, a body with the reason for the audit
   * trail, an Idempotency-Key (required where money moves), answered 200 with `response`.
   */
  const action = <B extends TSchema>(
    method: 'POST' | 'PATCH',
    url: string,
    doc: {
      operationId: string;
      summary: string;
      body: B;
      response: TSchema;
      /** What the answer 200 is, in words (the API document's description of it). */
      answer: string;
      errors: Record<number, readonly string[]>;
      moneyMoves?: boolean;
      links?: Record<string, { operationId: string; parameters: Record<string, string>; description: string }>;
    },
    act: (id: string, body: Static<B>, request: FastifyRequest) => Promise<unknown>,
  ) =>
    app.route({
      method,
      url,
      schema: {
        operationId: doc.operationId,
        summary: doc.summary,
        tags,
        params: IdParams,
        headers: doc.moneyMoves ? RequiredIdempotencyHeader : IdempotencyHeader,
        body: doc.body,
        response: { 200: doc.response },
        responseDescriptions: { 200: doc.answer },
        errors: doc.errors,
      },
      ...(doc.links ? { links: { 200: doc.links } } : {}),
      handler: async (request, reply) =>
        idempotency.run(request, reply, async () => ({
          statusCode: 200,
          body: await act((request.params as { id: string }).id, request.body as Static<B>, request),
        })),
    });

  return action;
}

/** The audit entry of a pass run by hand. */
export interface PassRunEntry {
  actor: string;
  reason: string;
  requestId: string;
  action: string;
  entityType: 'scheduler';
  entityId: string;
  after: unknown;
}

/**
 * A pass run by hand (POST /admin/<pass>/run): the same pass its timer runs, now, also with SCHEDULER_ENABLED=false
 * (operators and tests drive passes by hand). An optional reason and Idempotency-Key; the pass's report is the answer
 * 200 and the `after` of the run's audit entry (`action`, entity `scheduler`/`entityId`), written once the pass is done.
 * `run` is told who asked, for passes whose own records name the operator. `audit` writes the entry (audit/audit.ts
 * auditAlone: this module sits below the audit module).
 */
export function passRun(
  app: App,
  deps: { idempotency: Idempotency; audit: (entry: PassRunEntry) => Promise<void> },
  spec: {
    url: string;
    operationId: string;
    summary: string;
    tags: string[];
    /** The optional body's schema (optionalReasonBody). */
    body: TSchema;
    response: TSchema;
    /** What the answer 200 is, in words. */
    answer: string;
    action: string;
    entityId: string;
    run: (by: { actor: string; reason?: string; requestId: string }) => Promise<unknown>;
  },
) {
  app.post(
    spec.url,
    {
      schema: {
        operationId: spec.operationId,
        summary: spec.summary,
        tags: spec.tags,
        headers: IdempotencyHeader,
        body: Type.Optional(spec.body),
        response: { 200: spec.response },
        responseDescriptions: { 200: spec.answer },
        errors: codesByStatus(...IDEMPOTENT),
      },
    },
    async function runPassByHand(request, reply) {
      return deps.idempotency.run(request, reply, async () => {
        const reason = (request.body as { reason?: string } | null | undefined)?.reason;
        const report = await spec.run({ actor: actorOf(request), reason, requestId: request.id });
        await deps.audit({ ...who(request, reason ?? '(none given)'), action: spec.action, entityType: 'scheduler', entityId: spec.entityId, after: report });
        return { statusCode: 200, body: report };
      });
    },
  );
}
