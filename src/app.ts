// buildApp(config): the whole service as a Fastify instance (docs/architecture.md "House style"). src/server.ts adds the process
// around it; tests call it directly.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { AjvCompiler } from '@fastify/ajv-compiler';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { Logger } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { App } from './app-types.ts';
import { createSimulatedClock, createSystemClock, type Clock } from './lib/clock.ts';
import { createRedactor, type Redactor } from './lib/redact.ts';
import { createLogger } from './lib/logger.ts';
import errorHandler, { answerFrameworkError, markMalformedUrl, MAX_PARAM_LENGTH, notFound } from './plugins/error-handler.ts';
import dbPlugin from './plugins/db.ts';
import gatewayPlugin from './plugins/gateway.ts';
import authPlugin from './plugins/auth.ts';
import { healthRoutes } from './modules/health/health.routes.ts';
import { createGatewayRefusals } from './modules/health/gateway-refusals.ts';
import { createKeyring } from './lib/crypto.ts';
import { ValidationError } from './lib/errors.ts';
import { containsNul, maxUtf8BytesKeyword } from './lib/input.ts';
import { resultPageRoutes } from './modules/checkout/checkout.routes.ts';
import { registrationsRoutes } from './modules/registrations/registrations.routes.ts';
import { billingRedirectRoutes } from './modules/registrations/billing-redirect.routes.ts';
import { tossWindowRoutes } from './modules/registrations/toss-window.routes.ts';
import { subscriptionsRoutes } from './modules/subscriptions/subscriptions.routes.ts';
import { createPaymentsService } from './modules/payments/payments.service.ts';
import { paymentsRoutes } from './modules/payments/payments.routes.ts';
import { createOrdersService } from './modules/orders/orders.service.ts';
import { ordersRoutes } from './modules/orders/orders.routes.ts';
import { paymentRedirectRoutes } from './modules/orders/payment-redirect.routes.ts';
import { createChargeService } from './modules/payments/charge.service.ts';
import { adminRoutes } from './modules/admin/admin.routes.ts';
import { subscriptionsAdminRoutes } from './modules/subscriptions/subscriptions.admin-routes.ts';
import { paymentsAdminRoutes } from './modules/payments/payments.admin-routes.ts';
import { readCurrentMrr } from './modules/reports/mrr.ts';
import { reportsRoutes } from './modules/reports/reports.routes.ts';
import { createIdempotency } from './modules/idempotency/idempotency.ts';
import { createPaymentActions } from './modules/payments/payment-actions.service.ts';
import { createInquiryPass, INQUIRY_CONCURRENCY } from './modules/payments/inquire-unknowns.ts';
import { createChargeNow } from './modules/payments/charge-now.ts';
import schedulerPlugin from './plugins/scheduler.ts';
import webhooksPlugin from './plugins/webhooks.ts';
import { createDispatcher } from './modules/webhooks/dispatcher.ts';
import { createEventsService } from './modules/events/events.service.ts';
import { eventsRoutes } from './modules/events/events.routes.ts';
import { EVENT_WEBHOOKS } from './modules/events/event-webhooks.ts';
import { createEndpointsService } from './modules/webhooks/endpoints.service.ts';
import { endpointsRoutes } from './modules/webhooks/endpoints.routes.ts';
import docsPlugin from './plugins/docs.ts';
import metricsPlugin from './plugins/metrics.ts';
import { dueWhere } from './modules/ledger/subscription.queries.ts';
import { reconciliationRoutes } from './modules/reconciliation/reconciliation.routes.ts';
import { createSettlementImports } from './modules/reconciliation/import-settlement.ts';
import { createSettlementFinisher } from './modules/reconciliation/finish-settlement.ts';
import { createStatementStore } from './modules/reconciliation/store-statement.ts';
import { createSettlementSync } from './modules/reconciliation/sync-settlements.ts';
import settlementSyncPlugin from './plugins/settlement-sync.ts';
import { auditRoutes } from './modules/audit/audit.routes.ts';
import { createErasure } from './modules/erasure/erase-customer.ts';
import { erasureRoutes } from './modules/erasure/erasure.routes.ts';
import { consoleRoutes } from './modules/console/index.ts';
import { createConsoleSessions } from './modules/console/console-sessions.ts';
import { portalRoutes } from './modules/portal/index.ts';
import { createPortalSessions } from './modules/portal/portal-sessions.ts';
import { portalSessionsRoutes } from './modules/portal/portal-sessions.routes.ts';
import { createPortalActions } from './modules/portal/portal-actions.ts';
import retentionPlugin from './plugins/retention.ts';
import eventPartitionsPlugin from './plugins/event-partitions.ts';
import { createPartitionsPass, readPartitionState } from './modules/events/event-partitions.ts';
import { createIdentityRetention } from './modules/erasure/purge-identities.ts';
import { erasureReadsRoutes } from './modules/erasure/erasure-reads.routes.ts';
import { retentionRoutes } from './modules/erasure/retention.routes.ts';
import { eventPartitionsRoutes } from './modules/events/event-partitions.routes.ts';

export type { App } from './app-types.ts';

export interface BuildOptions {
  logger?: Logger;
  redactor?: Redactor;
  clock?: Clock;
}

/** TRUST_PROXY as a hop count: the client is the address that many hops in front of us (as Fastify does). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops;
}

const validators = AjvCompiler();
// Strict bodies (docs/api.md "Errors"): unknown fields are refused, never silently dropped or applied.
// `x-max-utf8-bytes`: the gateway's byte limits, checked with the rest of the schema (src/lib/input.ts).
const AJV_OPTIONS = { removeAdditional: false, useDefaults: true, allErrors: false as const, keywords: [maxUtf8BytesKeyword] };

/**
 * Bodies are validated as sent: `true`, `"9900"`, `[9900]` or `"1e3"` is not an amount (400 VALIDATION_ERROR), since
 * JSON has numbers. Query strings, path parameters and headers are text by nature and are coerced to their
 * schema's types (`?limit=20`, `?dryRun=true`).
 */
function buildStrictBodyValidator(externalSchemas: unknown, options: unknown) {
  const ajv = (options ?? {}) as { customOptions?: object };
  const strict = validators(externalSchemas as never, { ...ajv, customOptions: { ...ajv.customOptions, ...AJV_OPTIONS, coerceTypes: false } });
  const coercing = validators(externalSchemas as never, { ...ajv, customOptions: { ...ajv.customOptions, ...AJV_OPTIONS, coerceTypes: 'array' } });
  return (route: { httpPart?: string }) => (route.httpPart === 'body' ? strict : coercing)(route as never);
}

/**
 * What the service's own routes accept (the mounted sandbox is not the service): no NUL character in any string of
 * a body, query string or path (PostgreSQL cannot store one); and on the merchant API and the admin routes, JSON
 * bodies only (anything else is 415 UNSUPPORTED_MEDIA_TYPE).
 */
function guardInput(scope: FastifyInstance, options: { jsonOnly: boolean }): void {
  scope.addHook('preValidation', async (request) => {
    if (containsNul(request.body) || containsNul(request.query) || containsNul(request.params)) {
      throw new ValidationError('strings must not contain NUL characters');
    }
  });
  if (options.jsonOnly) scope.removeContentTypeParser('text/plain');
}

/**
 * The request limit of a scope whose routes take a token (the merchant API, the admin routes), counted before the
 * token is checked, so a request refused 401 is counted too (against its address, see `rateLimitKey`). The limiter is
 * the scope's own onRequest hook, and a scope's hooks run before those of the route plugins registered in it, where
 * the token guards are. (@fastify/rate-limit's default hook is added to each route, and route-level hooks run after
 * every instance-level one: after the guard, which ends a 401 before it is counted.)
 */
async function limitRequests(scope: FastifyInstance, max: number, keyGenerator: (request: FastifyRequest) => string): Promise<void> {
  await scope.register(rateLimit, { global: false, max, timeWindow: 60_000, keyGenerator });
  scope.addHook('onRequest', scope.rateLimit());
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  if (!config.databaseUrl) throw new Error('buildApp needs config.databaseUrl (src/server.ts starts the embedded database)');
  const redactor = options.redactor ?? createRedactor([config.gateway.secretKey]);
  const logger = options.logger ?? createLogger({ level: config.logLevel, redactor });
  const clock = options.clock ?? (config.clock === 'simulated' ? createSimulatedClock() : createSystemClock());

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Client addresses (rate limits, logs) come from X-Forwarded-For only behind a configured proxy (TRUST_PROXY).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: 64 * 1024,
    // Typed by @fastify/ajv-compiler for its own factory's signature; Fastify calls it with the route schema.
    schemaController: { compilersFactory: { buildValidator: buildStrictBodyValidator as never } },
    // What the router refuses by itself answers in the service's error shape, through the guards of the path's scope
    // (src/plugins/error-handler.ts).
    rewriteUrl: markMalformedUrl,
    frameworkErrors: answerFrameworkError,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('clock', clock);
  app.decorate('redactor', redactor);

  await app.register(errorHandler);
  await app.register(authPlugin);
  await app.register(docsPlugin, { webhooks: EVENT_WEBHOOKS });
  // Sized from the concurrency: every charge in flight may hold a connection at once, plus the API, the webhook
  // dispatcher, the scheduler's own claims and the inquiry pass's lookups (each finish holds one).
  await app.register(dbPlugin, {
    connectionString: config.databaseUrl,
    poolSize: config.scheduler.concurrency + Math.ceil(config.webhooks.concurrency / 2) + 4 + INQUIRY_CONCURRENCY,
    readReplica: config.readReplica,
  });
  // Which gateways refuse our configuration: learnt from every call (the metrics' gateway observer), told by /ready.
  const gatewayRefusals = createGatewayRefusals(clock);
  await app.register(metricsPlugin, {
    countDue: () => app.db.subscription.count({ where: dueWhere(clock.now()) }),
    readMrr: () => readCurrentMrr(app.db),
    readEventPartitions: () => readPartitionState(app.db, clock.now()),
    gatewayCalls: gatewayRefusals,
  });
  await app.register(gatewayPlugin);
  await app.register(healthRoutes, { gatewayRefusals });

  const keyring = createKeyring(config.encryptionKeys);
  const deps = { db: app.db, gateway: app.gateway, gateways: app.gateways, clock, config, keyring, log: app.log };
  const payments = createPaymentsService(deps);
  const orders = createOrdersService(deps);
  const charges = createChargeService(deps);
  const idempotency = createIdempotency(deps);
  app.decorate('charges', charges);
  // The operators' payment actions: their resolve is also the one path by which the inquiry pass and a settlement
  // file finish an unknown outcome (docs/architecture.md, invariant 14).
  const paymentActions = createPaymentActions(deps);
  const inquiries = createInquiryPass({ ...deps, payments: paymentActions, observer: app.metrics.inquiries, yieldTo: charges });
  await app.register(schedulerPlugin, { charges, inquiries });
  const dispatcher = createDispatcher({ db: app.db, clock, config, keyring, log: app.log, observer: app.metrics.webhooks });
  app.decorate('webhooks', dispatcher);
  await app.register(webhooksPlugin, { dispatcher });
  // The erasure vaults' retention pass: on its own timer, and by hand through POST /admin/retention/run.
  const purgeExpiredIdentities = createIdentityRetention({ db: app.db, clock, log: app.log, observer: app.metrics.erasures });
  await app.register(retentionPlugin, { purgeExpiredIdentities: () => purgeExpiredIdentities() });
  // The monthly partitions of events and deliveries: made ahead, dropped past EVENT_RETENTION, on their own timer, and
  // by hand through POST /admin/event-partitions/run.
  const keepEventPartitions = createPartitionsPass({ db: app.db, clock, retentionMs: config.eventRetentionMs, log: app.log });
  await app.register(eventPartitionsPlugin, { keepEventPartitions });
  // Customer-portal links and sessions expire in real time (PORTAL_LINK_TTL, PORTAL_SESSION_TTL), whatever the
  // billing clock says; the console's sessions likewise (below).
  const realClock = createSystemClock();
  const portalSessions = createPortalSessions({
    db: app.db,
    now: () => realClock.now(),
    publicBaseUrl: config.publicBaseUrl,
    linkTtlMs: config.portal.linkTtlMs,
    sessionTtlMs: config.portal.sessionTtlMs,
    returnOrigins: config.portal.returnOrigins,
  });
  if (!config.consentRequired)
    app.log.warn('CONSENT_REQUIRED=false: trials convert and price increases apply without the customer’s recorded consent (the consent rule is off)');

  // Browser routes and pages: rate limited per client address, with security headers (CSP allows the pages'
  // inline styles only).
  await app.register(async (pages) => {
    // Only these routes take form posts (the gateway may redirect with one); everything else is JSON.
    guardInput(pages, { jsonOnly: false });
    await pages.register(formbody);
    await pages.register(helmet, { contentSecurityPolicy: { directives: { 'style-src': ["'self'", "'unsafe-inline'"] } } });
    await pages.register(rateLimit, { max: config.rateLimit.browser, timeWindow: 60_000 });
    await pages.register(billingRedirectRoutes(deps));
    await pages.register(tossWindowRoutes(deps));
    await pages.register(paymentRedirectRoutes(deps));
    await pages.register(resultPageRoutes);
  });
  // The merchant API and the admin routes: rate limited per valid token (a caller without one by address).
  await app.register(
    async (api) => {
      guardInput(api, { jsonOnly: true });
      await limitRequests(api, config.rateLimit.api, app.rateLimitKey('api'));
      // After the limiter (a refused key is counted), before every merchant API route: one guard for the scope,
      // unknown paths and methods under the prefix included (the scope's own 404).
      api.addHook('onRequest', app.requireApiKey);
      api.setNotFoundHandler(notFound);
      await api.register(ordersRoutes(orders, idempotency));
      await api.register(registrationsRoutes(deps, idempotency));
      await api.register(subscriptionsRoutes(deps, idempotency));
      await api.register(paymentsRoutes(payments));
      await api.register(eventsRoutes(createEventsService(deps), idempotency));
      await api.register(endpointsRoutes(createEndpointsService(deps), idempotency));
      await api.register(portalSessionsRoutes(portalSessions, idempotency));
    },
    { prefix: '/api/v1' },
  );
  // The operators' payment actions, shared by the admin routes and the console (one service, one set of rules).
  const chargeNow = createChargeNow({ db: app.db, charges });
  // One erasure service for POST /admin/customers/:userId/erasure and the console's Erase customer page.
  const erasure = createErasure(deps);
  // A settlement file finishes unknown outcomes through the operators' own resolve (the same code, its actor the
  // import); the admin route and the console's Reconciliation page import through this one service.
  const finisher = createSettlementFinisher({ db: app.db, payments: paymentActions, log: app.log });
  const imports = createSettlementImports({ db: app.db, log: app.log, finisher, observer: app.metrics.settlements });
  // A gateway's settlements read by API are stored by the same code as a file (store-statement.ts): by hand through
  // POST /admin/settlement-imports/toss, and yesterday's on the daily pass's own timer.
  const sync = createSettlementSync({ ...deps, store: createStatementStore({ db: app.db, log: app.log, finisher, observer: app.metrics.settlements }) });
  await app.register(settlementSyncPlugin, { syncYesterday: () => sync.syncYesterday() });
  await app.register(
    async (admin) => {
      guardInput(admin, { jsonOnly: true });
      await limitRequests(admin, config.rateLimit.admin, app.rateLimitKey('admin'));
      // After the limiter (a refused token is counted), before every admin route and the scope's own 404.
      admin.addHook('onRequest', app.requireAdminToken);
      admin.setNotFoundHandler(notFound);
      await admin.register(adminRoutes({ charges, inquiries, idempotency }));
      await admin.register(subscriptionsAdminRoutes(deps, idempotency));
      await admin.register(paymentsAdminRoutes({ chargeNow, payments: paymentActions, idempotency }));
      await admin.register(reconciliationRoutes({ db: app.db, clock, imports, sync, idempotency, maxBytes: config.settlementMaxBytes }));
      await admin.register(auditRoutes({ db: app.db }));
      await admin.register(reportsRoutes());
      await admin.register(erasureRoutes({ erasure, idempotency }));
      await admin.register(erasureReadsRoutes({ db: app.db, keyring, clock }));
      await admin.register(retentionRoutes({ purgeExpiredIdentities, idempotency }));
      await admin.register(eventPartitionsRoutes({ keepEventPartitions, idempotency }));
    },
    { prefix: '/admin' },
  );

  // The operator console: its own CSP, cookies, CSRF and session guard (src/modules/console/index.ts). Sessions last
  // CONSOLE_SESSION_TTL of real time, whatever the billing clock says.
  const sessions = createConsoleSessions({ db: app.db, now: () => realClock.now(), ttlMs: config.console.sessionTtlMs });
  await app.register(
    async (scope) => {
      guardInput(scope, { jsonOnly: false });
      await scope.register(consoleRoutes({ service: deps, sessions, idempotency, payments: paymentActions, chargeNow, settlementImports: imports, erasure }));
    },
    { prefix: '/console' },
  );

  // The customer portal: its own CSP, cookies, CSRF and session guard (src/modules/portal/index.ts).
  await app.register(
    async (scope) => {
      guardInput(scope, { jsonOnly: false });
      await scope.register(
        portalRoutes({
          service: deps,
          sessions: portalSessions,
          idempotency,
          actions: createPortalActions(deps),
          payments: paymentActions,
        }),
      );
    },
    { prefix: '/portal' },
  );

  return app;
}
