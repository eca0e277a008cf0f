// Merchant API: subscriptions (docs/api.md "Routes").
import type { App } from '../../app-types.ts';
import { codesByStatus, StateConflictError } from '../../lib/errors.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams } from '../shared/schemas.ts';
import {
  CancelSubscriptionBody,
  ConsentBody,
  ConsentResponse,
  ListSubscriptionsQuery,
  PriceChangeBody,
  SubscriptionList,
  SubscriptionResponse,
  UsageBody,
} from './subscriptions.schemas.ts';
import { actorOf } from '../../plugins/auth.ts';
import { TAGS } from '../../lib/api-document.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { Db } from '../../db/prisma.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { createCancel } from './cancel.ts';
import { createPriceChange } from './change-price.ts';
import { createConsents } from './consents.ts';
import { createUsage } from './usage.ts';
import { pageSubscriptionsJson, readSubscription } from './subscriptions.read.ts';
import { serializeSubscription } from './subscriptions.shape.ts';

export function subscriptionsRoutes(deps: ServiceDeps, idempotency: Idempotency) {
  return async (app: App) => {
    registerReads(app, deps.db);
    registerCancel(app, deps, idempotency);
    registerConsent(app, deps, idempotency);
    registerPriceChange(app, deps, idempotency);
    registerUsage(app, deps, idempotency);
  };
}

/** GET /subscriptions and /subscriptions/:id. */
function registerReads(app: App, db: Db) {
  app.get(
    '/subscriptions',
    {
      schema: {
        operationId: 'listSubscriptions',
        summary: 'List subscriptions, newest first',
        tags: [TAGS.subscriptions.name],
        querystring: ListSubscriptionsQuery,
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
        operationId: 'getSubscription',
        summary: 'Get a subscription',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        response: { 200: SubscriptionResponse },
        responseDescriptions: { 200: 'The subscription as it is now' },
      },
      links: {
        200: {
          listPayments: {
            operationId: 'listPayments',
            parameters: { 'query.subscriptionId': '$response.body#/id' },
            description: 'Its payments, newest first',
          },
        },
      },
    },
    async (request) => serializeSubscription(await readSubscription(db, request.params.id)),
  );
}

/** POST /subscriptions/:id/cancel. */
function registerCancel(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  const { cancelForMerchant } = createCancel(deps);
  app.post(
    '/subscriptions/:id/cancel',
    {
      schema: {
        operationId: 'cancelSubscription',
        summary: 'Cancel a subscription now or at the end of its period',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: CancelSubscriptionBody,
        response: { 200: SubscriptionResponse },
        responseDescriptions: { 200: 'The subscription: CANCELED, or with cancelAtPeriodEnd until its period ends' },
        errors: codesByStatus(StateConflictError, IdempotencyKeyReusedError, IdempotencyInProgressError),
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as { atPeriodEnd?: boolean };
      return idempotency.run(request, reply, async () => ({
        statusCode: 200,
        body: serializeSubscription(await cancelForMerchant(request.params.id, { atPeriodEnd: body.atPeriodEnd ?? false })),
      }));
    },
  );
}

/** POST /subscriptions/:id/consents. */
function registerConsent(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  const { recordConsent } = createConsents(deps);
  app.post(
    '/subscriptions/:id/consents',
    {
      schema: {
        operationId: 'recordConsent',
        summary: 'Record the customer’s consent to a trial’s conversion or a price increase (the consent rule)',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: ConsentBody,
        response: { 201: ConsentResponse },
        responseDescriptions: { 201: 'The consent, recorded (immutable): charges that need one of its kind may now go ahead' },
        errors: codesByStatus(ValidationError, NotFoundError, StateConflictError, IdempotencyKeyReusedError, IdempotencyInProgressError),
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({
        statusCode: 201,
        body: await recordConsent(request.params.id, request.body, actorOf(request), request.id),
      })),
  );
}

/** POST /subscriptions/:id/price-change. */
function registerPriceChange(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  const { changePrice } = createPriceChange(deps);
  app.post(
    '/subscriptions/:id/price-change',
    {
      schema: {
        operationId: 'changePrice',
        summary: 'Change a CARD subscription’s amount: lower at once, higher after the customer’s consent',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: PriceChangeBody,
        response: { 200: SubscriptionResponse },
        responseDescriptions: { 200: 'The subscription: its new amount, or the increase held as pendingAmount (pendingAmountReason CONSENT_REQUIRED)' },
        errors: codesByStatus(
          ValidationError,
          NotFoundError,
          StateConflictError,
          RULE_ERRORS.MOBILE_AMOUNT_MISMATCH,
          IdempotencyKeyReusedError,
          IdempotencyInProgressError,
        ),
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({
        statusCode: 200,
        body: await changePrice(request.params.id, request.body.amount, actorOf(request), request.id),
      })),
  );
}

/** POST /subscriptions/:id/usage. */
function registerUsage(app: App, deps: ServiceDeps, idempotency: Idempotency) {
  const { recordUsage } = createUsage(deps);
  app.post(
    '/subscriptions/:id/usage',
    {
      schema: {
        operationId: 'recordUsage',
        summary: 'Record the customer’s first use, which ends the right of withdrawal (청약철회)',
        tags: [TAGS.subscriptions.name],
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: UsageBody,
        response: { 200: SubscriptionResponse },
        responseDescriptions: { 200: 'The subscription with usageStartedAt (the first time recorded)' },
        errors: codesByStatus(ValidationError, NotFoundError, IdempotencyKeyReusedError, IdempotencyInProgressError),
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({
        statusCode: 200,
        body: await recordUsage(request.params.id, request.body ?? {}, actorOf(request), request.id),
      })),
  );
}
