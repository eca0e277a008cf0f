// The admin routes of subscriptions (docs/operating.md "Admin routes"): list, read, pause, resume, cancel and change terms,
// each with a reason for the audit trail; the rules are in the operations' files (pause-resume.ts, cancel.ts,
// change-price.ts).
import type { App } from '../../app-types.ts';
import type { Db } from '../../db/prisma.ts';
import { TAGS } from '../../lib/api-document.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { ACTION_ERRORS, adminActions, who } from '../shared/admin-actions.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams, ReasonBody } from '../shared/schemas.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { createCancel } from './cancel.ts';
import { createPriceChange } from './change-price.ts';
import { createPauseResume } from './pause-resume.ts';
import { pageSubscriptionsJson, readSubscription } from './subscriptions.read.ts';
import { serializeSubscription } from './subscriptions.shape.ts';
import { AdminCancelBody, AdminSubscriptionsQuery, PatchSubscriptionBody, SubscriptionList, SubscriptionResponse } from './subscriptions.schemas.ts';

export function subscriptionsAdminRoutes(deps: ServiceDeps, idempotency: Idempotency) {
  return async (app: App) => {
    const tags = [TAGS.adminSubscriptions.name];
    registerReads(app, deps.db, tags);
    registerActions(adminActions(app, idempotency, tags), deps);
  };
}

/** GET /subscriptions (filters include needsAttention) and /subscriptions/:id. */
function registerReads(app: App, db: Db, tags: string[]) {
  app.get(
    '/subscriptions',
    {
      schema: {
        operationId: 'adminListSubscriptions',
        summary: 'List subscriptions (filters include needsAttention)',
        tags,
        querystring: AdminSubscriptionsQuery,
        response: { 200: SubscriptionList },
      },
    },
    // The page's JSON is written by PostgreSQL in the public shape (pageSubscriptionsJson), so it is sent as it is (a
    // string with a JSON content type skips the serializer; the typed reply expects the object, hence the cast).
    async (request, reply) => reply.type('application/json; charset=utf-8').send((await pageSubscriptionsJson(await readDb(request), request.query)) as never),
  );
  app.get(
    '/subscriptions/:id',
    {
      schema: {
        operationId: 'adminGetSubscription',
        summary: 'Get a subscription',
        tags,
        params: IdParams,
        response: { 200: SubscriptionResponse },
        responseDescriptions: { 200: 'The subscription as it is now' },
      },
    },
    async (request) => serializeSubscription(await readSubscription(db, request.params.id)),
  );
}

/** The operator's actions: pause, resume, cancel, change terms. */
function registerActions(action: ReturnType<typeof adminActions>, deps: ServiceDeps) {
  const subscriptions = { ...createPauseResume({ ...deps, timezone: deps.config.timezone }), ...createCancel(deps), ...createPriceChange(deps) };
  for (const verb of ['pause', 'resume'] as const) {
    action(
      'POST',
      `/subscriptions/:id/${verb}`,
      {
        operationId: `${verb}Subscription`,
        summary: verb === 'pause' ? 'Pause a subscription: nothing is charged until it is resumed' : 'Resume a paused subscription',
        body: ReasonBody,
        response: SubscriptionResponse,
        answer: verb === 'pause' ? 'The subscription, PAUSED' : 'The subscription, resumed: its schedule starts again, and the paused time is never charged',
        errors: ACTION_ERRORS,
      },
      (id, body, request) => subscriptions[verb](id, who(request, body.reason)),
    );
  }

  action(
    'POST',
    '/subscriptions/:id/cancel',
    {
      operationId: 'adminCancelSubscription',
      summary: 'Cancel a subscription now or at the end of its period',
      body: AdminCancelBody,
      response: SubscriptionResponse,
      answer: 'The subscription: CANCELED, or with cancelAtPeriodEnd until its period ends',
      errors: ACTION_ERRORS,
    },
    (id, body, request) => subscriptions.cancelForOperator(id, { atPeriodEnd: body.atPeriodEnd ?? false }, who(request, body.reason)),
  );

  action(
    'PATCH',
    '/subscriptions/:id',
    {
      operationId: 'updateSubscription',
      summary: 'Change a subscription’s amount or order name',
      body: PatchSubscriptionBody,
      response: SubscriptionResponse,
      answer: 'The subscription with its new terms (an increase held as pendingAmount until the customer consents)',
      errors: ACTION_ERRORS,
    },
    (id, { reason, amount, orderName }, request) => subscriptions.update(id, { amount, orderName }, who(request, reason)),
  );
}
