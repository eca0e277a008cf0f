// Merchant API: POST /portal-sessions (docs/api.md "Customer portal"): a session of the customer portal for one
// customer, answered with the single-use link to send the browser to. Idempotency-Key honoured; a replay cannot repeat
// the link (only its hash is kept), so it answers the same session with a new link while the first is unused.
import type { App } from '../../app-types.ts';
import { TAGS } from '../../lib/api-document.ts';
import { codesByStatus, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { CustomerNotFoundError } from '../shared/customers.ts';
import { ReturnUrlNotAllowedError, type PortalSessions } from './portal-sessions.ts';
import { CreatePortalSessionBody, PortalSessionResponse } from './portal-sessions.schemas.ts';

type Created = Awaited<ReturnType<PortalSessions['create']>>;

export function portalSessionsRoutes(sessions: PortalSessions, idempotency: Idempotency) {
  return async function portalSessionsApi(app: App) {
    app.post(
      '/portal-sessions',
      {
        schema: {
          operationId: 'createPortalSession',
          summary: 'Create a customer-portal session: a single-use link where the customer manages their subscriptions',
          description:
            'Send the customer’s browser to `url`: its first visit starts a session (a cookie) on the service’s own pages, where the customer ' +
            'sees their subscriptions and payments, cancels, consents to a price increase or a trial’s conversion, changes the payment method ' +
            'and downloads their records. A second visit of the same link, or one after expiresAt, shows a page asking for a new link.',
          tags: [TAGS.portal.name],
          headers: idempotencyHeaders(false),
          body: CreatePortalSessionBody,
          response: { 201: PortalSessionResponse },
          responseDescriptions: { 201: 'The session: redirect the customer’s browser to url' },
          errors: codesByStatus(
            ValidationError,
            CustomerNotFoundError,
            NotFoundError,
            ReturnUrlNotAllowedError,
            StateConflictError,
            IdempotencyKeyReusedError,
            IdempotencyInProgressError,
          ),
        },
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => ({ statusCode: 201, body: await sessions.create(request.body) }), {
          // The link's token is never stored, here either: the replay gives the same session a new one.
          store: ({ id, expiresAt }: Created) => ({ id, expiresAt }),
          replay: async (stored) => sessions.reissue((stored as { id: string }).id),
        }),
    );
  };
}
