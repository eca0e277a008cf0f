// Merchant API: webhook endpoints (docs/api.md "Events and webhooks"). The signing secret is answered on create and rotate-secret only;
// an idempotent replay of those answers it again from the encrypted copy (the idempotency table never holds it).
import type { App } from '../../app-types.ts';
import { TAGS } from '../../lib/api-document.ts';
import { codesByStatus, StateConflictError } from '../../lib/errors.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams } from '../shared/schemas.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, IDEMPOTENT_ERRORS, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { Queued } from '../events/events.schemas.ts';
import {
  CreateEndpointBody,
  EndpointList,
  EndpointResponse,
  EndpointWithSecret,
  ListEndpointsQuery,
  RecoverBody,
  RotateSecretBody,
  SecretResponse,
  UpdateEndpointBody,
} from './endpoints.schemas.ts';
import type { EndpointsService } from './endpoints.service.ts';

export function endpointsRoutes(service: EndpointsService, idempotency: Idempotency) {
  return async (app: App) => {
    const tags = [TAGS.webhookEndpoints.name];
    registerCreate(app, service, idempotency, tags);
    registerReads(app, service, tags);
    registerChanges(app, service, idempotency, tags);
    registerRotateSecret(app, service, idempotency, tags);
    registerRecover(app, service, idempotency, tags);
  };
}

/** What the idempotency table stores of an answer that holds the signing secret: the answer without it. */
const withoutSecret = <T extends { secret: string }>(body: T) => ({ ...body, secret: undefined });

/** POST /webhook-endpoints: the one answer (and its replay) that holds the new endpoint's secret. */
function registerCreate(app: App, service: EndpointsService, idempotency: Idempotency, tags: string[]) {
  app.post(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint (answers its signing secret, once)',
        tags,
        headers: idempotencyHeaders(false),
        body: CreateEndpointBody,
        response: { 201: EndpointWithSecret },
        responseDescriptions: { 201: 'The endpoint, ENABLED, with its signing secret: store it now, it is not shown again (but by rotate-secret)' },
        errors: IDEMPOTENT_ERRORS,
      },
      links: {
        201: {
          getWebhookEndpoint: { operationId: 'getWebhookEndpoint', parameters: { id: '$response.body#/id' }, description: 'Read it again' },
          recoverWebhookEndpoint: {
            operationId: 'recoverWebhookEndpoint',
            parameters: { id: '$response.body#/id' },
            description: 'After an outage of the receiver: send again what it missed',
          },
        },
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({ statusCode: 201, body: await service.create(request.body) }), {
        store: withoutSecret,
        replay: async (stored) => ({
          ...(stored as { id: string } & Awaited<ReturnType<EndpointsService['create']>>),
          secret: await service.currentSecret((stored as { id: string }).id),
        }),
      }),
  );
}

/** GET /webhook-endpoints and /webhook-endpoints/:id. */
function registerReads(app: App, service: EndpointsService, tags: string[]) {
  app.get(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints, newest first',
        tags,
        querystring: ListEndpointsQuery,
        response: { 200: EndpointList },
      },
    },
    async (request) => service.list(request.query, await readDb(request)),
  );

  app.get(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        tags,
        params: IdParams,
        response: { 200: EndpointResponse },
        responseDescriptions: { 200: 'The endpoint (without its secret)' },
      },
    },
    async (request) => service.get(request.params.id),
  );
}

/** PATCH and DELETE /webhook-endpoints/:id. */
function registerChanges(app: App, service: EndpointsService, idempotency: Idempotency, tags: string[]) {
  app.patch(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint’s URL, types, description or status',
        tags,
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: UpdateEndpointBody,
        response: { 200: EndpointResponse },
        responseDescriptions: { 200: 'The endpoint with its changes' },
        errors: IDEMPOTENT_ERRORS,
      },
    },
    async (request, reply) => idempotency.run(request, reply, async () => ({ statusCode: 200, body: await service.update(request.params.id, request.body) })),
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its delivery log',
        tags,
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (request, reply) => {
      await service.remove(request.params.id);
      return reply.status(204).send(null);
    },
  );
}

/** POST /webhook-endpoints/:id/rotate-secret: the new secret, answered again on a replay from the encrypted copy. */
function registerRotateSecret(app: App, service: EndpointsService, idempotency: Idempotency, tags: string[]) {
  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret; the old one keeps signing during the overlap',
        tags,
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: RotateSecretBody,
        response: { 200: SecretResponse },
        responseDescriptions: { 200: 'The new secret: deliveries are signed with both until the old one expires' },
        errors: codesByStatus(StateConflictError, IdempotencyKeyReusedError, IdempotencyInProgressError),
      },
    },
    async (request, reply) =>
      idempotency.run(
        request,
        reply,
        async () => ({ statusCode: 200, body: await service.rotateSecret(request.params.id, request.body?.expireOldAfterSeconds ?? 86400) }),
        {
          store: withoutSecret,
          replay: async () => ({ secret: await service.currentSecret(request.params.id) }),
        },
      ),
  );
}

/** POST /webhook-endpoints/:id/recover: queue again what the endpoint missed. */
function registerRecover(app: App, service: EndpointsService, idempotency: Idempotency, tags: string[]) {
  app.post(
    '/webhook-endpoints/:id/recover',
    {
      schema: {
        operationId: 'recoverWebhookEndpoint',
        summary: 'Queue again every event since an instant that the endpoint has not received',
        tags,
        params: IdParams,
        headers: idempotencyHeaders(false),
        body: RecoverBody,
        response: { 202: Queued },
        responseDescriptions: { 202: 'Queued: every event since `since` that this endpoint subscribes to and has not received' },
        errors: IDEMPOTENT_ERRORS,
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({ statusCode: 202, body: await service.recover(request.params.id, new Date(request.body.since)) })),
  );
}
