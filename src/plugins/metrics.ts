// Prometheus metrics (prom-client) at GET /metrics: gateway calls by gateway, operation and outcome with their
// latency, the gateways refusing our configuration, the due backlog and the subscriptions waiting for an operator (counted from the database at scrape time), HTTP
// requests by route and status, and the process's default metrics. One registry per app, so several apps in one
// process (tests) do not collide. Open in development; in production it takes a bearer token (METRICS_TOKENS or an
// admin token; src/plugins/auth.ts), and should still be exposed to the scraper's network only (docs/production.md "Running in production").
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GatewayAdapter, GatewayName, GatewayResult } from '../gateway/gateway.ts';
import type { ReadReason, ReadServer } from '../db/read-router.ts';
import { TAGS } from '../lib/api-document.ts';

/** How a webhook delivery attempt ended, as the dispatcher reports it. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

/** What the webhook dispatcher reports to the metrics (src/modules/webhooks/outcomes.ts calls it). */
export interface WebhookObserver {
  delivery(outcome: DeliveryOutcome, seconds: number): void;
  endpointDisabled(reason: string): void;
}

/**
 * What learns of every gateway call beside the metrics, and what the metrics read back: which gateways refuse our
 * configuration (src/modules/health/gateway-refusals.ts; passed in by app.ts, as plugins import no module).
 */
export interface GatewayCallObserver {
  /** Notes one call's answer; true when the gateway refused our configuration on it. */
  observe(gateway: GatewayName, result: GatewayResult): boolean;
  /** The gateways refusing our configuration now. */
  refused(): ReadonlyArray<{ gateway: GatewayName }>;
}

export interface Metrics {
  registry: Registry;
  /** One call of `gateway` answered (instrumentGateway calls it for every operation of every adapter). */
  observeGateway(gateway: GatewayName, result: GatewayResult): void;
  /** The webhook dispatcher's observer (src/modules/webhooks/dispatcher.ts). */
  webhooks: WebhookObserver;
  /** What each settlement import reports (src/modules/reconciliation/import-settlement.ts): its lines by status, what it resolved. */
  settlements: { imported(summary: Record<string, number>, resolved: number): void };
  /** What the retention pass reports (src/modules/erasure/purge-identities.ts): the erasure vaults it destroyed. */
  erasures: { identitiesPurged(count: number): void };
  /** What the inquiry pass reports (src/modules/payments/inquire-unknowns.ts): each lookup's result, each outcome it found. */
  inquiries: { inquiry(gateway: string, result: string): void; outcome(gateway: string, outcome: string): void };
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

/** The same adapter, recording every call's outcome and duration under the adapter's name. */
export function instrumentGateway(adapter: GatewayAdapter, metrics: Metrics): GatewayAdapter {
  const observe =
    <A extends unknown[]>(fn: (...args: A) => Promise<GatewayResult>) =>
    async (...args: A) => {
      const result = await fn(...args);
      metrics.observeGateway(adapter.name, result);
      return result;
    };
  return {
    name: adapter.name,
    ...(adapter.window ? { window: adapter.window } : {}),
    capabilities: adapter.capabilities,
    outcomes: adapter.outcomes,
    confirmPayment: observe(adapter.confirmPayment.bind(adapter)),
    issueBillingKey: observe(adapter.issueBillingKey.bind(adapter)),
    chargeBillingKey: observe(adapter.chargeBillingKey.bind(adapter)),
    refundPayment: observe(adapter.refundPayment.bind(adapter)),
    ...(adapter.inquire ? { inquire: observe(adapter.inquire.bind(adapter)) } : {}),
    ...(adapter.deleteBillingKey ? { deleteBillingKey: observe(adapter.deleteBillingKey.bind(adapter)) } : {}),
    ...(adapter.fetchSettlements ? { fetchSettlements: adapter.fetchSettlements.bind(adapter) } : {}),
    close: () => adapter.close(),
  };
}

/** What the metrics read from the domain, passed in by app.ts (plugins import no module). */
export interface MetricsOptions {
  /** Subscriptions due now (the ledger's due predicate, ledger/subscription.queries.ts). */
  countDue(): Promise<number>;
  /** The MRR now and the subscriptions counting in it (ACTIVE or PAST_DUE; reports/mrr.ts). */
  readMrr(): Promise<{ mrr: number; subscriptions: number }>;
  /** Told of every gateway call; says which gateways refuse our configuration. */
  gatewayCalls: GatewayCallObserver;
  /** The event partitions (events/event-partitions.ts): months made in a row after the current one, events waiting in the default partition. */
  readEventPartitions(): Promise<{ monthsAhead: number; defaultRows: number }>;
}

async function metricsPlugin(app: FastifyInstance, options: MetricsOptions) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const gatewayCalls = new Counter({
    name: 'billing_gateway_calls_total',
    help: 'Gateway calls by gateway, operation and outcome',
    labelNames: ['gateway', 'operation', 'outcome'],
    registers: [registry],
  });
  const gatewayLatency = new Histogram({
    name: 'billing_gateway_call_duration_seconds',
    help: 'Gateway call duration by gateway and operation',
    labelNames: ['gateway', 'operation'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const configurationRefused = new Counter({
    name: 'billing_gateway_configuration_refused_total',
    help: 'Gateway calls the gateway refused for our configuration (secret key, authentication, a call it does not take): nothing was processed',
    labelNames: ['gateway'],
    registers: [registry],
  });
  // The gateways called since the start: each has a 0 or a 1 below, so an alert sees the series before it turns 1.
  const called = new Set<GatewayName>();
  new Gauge({
    name: 'billing_gateway_configuration_refused',
    help: 'Whether the gateway refuses our configuration now (1) or answered normally since its last refusal (0); GET /ready says why',
    labelNames: ['gateway'],
    registers: [registry],
    collect() {
      this.reset();
      for (const gateway of called) this.set({ gateway }, 0);
      for (const { gateway } of options.gatewayCalls.refused()) this.set({ gateway }, 1);
    },
  });
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'billing_due_subscriptions',
    help: 'Subscriptions due now and not yet charged (the backlog a pass would claim)',
    registers: [registry],
    async collect() {
      this.set(await options.countDue());
    },
  });
  // One read serves both gauges of a scrape (prom-client collects them one after the other).
  let mrrRead: Promise<{ mrr: number; subscriptions: number }> | undefined;
  const readMrrOnce = () => {
    mrrRead ??= options.readMrr().finally(() => setImmediate(() => (mrrRead = undefined)));
    return mrrRead;
  };
  new Gauge({
    name: 'billing_mrr_krw',
    help: 'Monthly recurring revenue now, in KRW: the sum of the MRR of every ACTIVE or PAST_DUE subscription',
    registers: [registry],
    async collect() {
      this.set((await readMrrOnce()).mrr);
    },
  });
  new Gauge({
    name: 'billing_active_subscriptions',
    help: 'Subscriptions counting in MRR now (ACTIVE or PAST_DUE)',
    registers: [registry],
    async collect() {
      this.set((await readMrrOnce()).subscriptions);
    },
  });
  new Gauge({
    name: 'billing_subscriptions_needing_attention',
    help: 'Subscriptions waiting for an operator, by reason',
    labelNames: ['reason'],
    registers: [registry],
    async collect() {
      this.reset();
      const groups = await app.db.subscription.groupBy({ by: ['attentionReason'], where: { needsAttention: true }, _count: { _all: true } });
      for (const g of groups) this.set({ reason: g.attentionReason ?? 'UNSPECIFIED' }, g._count._all);
    },
  });
  new Gauge({
    name: 'billing_payments_unknown',
    help: 'Payments whose outcome is UNKNOWN (each needs an operator to resolve it)',
    registers: [registry],
    async collect() {
      this.set(await app.db.payment.count({ where: { status: 'UNKNOWN' } }));
    },
  });

  // The read replica (docs/production.md "Read replica"): where each routed read went and why, and the replica's state.
  const reads = new Counter({
    name: 'billing_reads_total',
    help: 'Reads of the routes that may use the read replica, by the server that answered (replica, primary) and why (replayed, lag, wait_timeout, replica_error, unset)',
    labelNames: ['server', 'reason'],
    registers: [registry],
  });
  app.reads.observe({ read: (server: ReadServer, reason: ReadReason) => reads.inc({ server, reason }) });
  if (app.reads.configured) {
    new Gauge({
      name: 'billing_read_replica_lag_seconds',
      help: 'How far the read replica is behind the primary, in seconds, as last sampled (absent while it is unreachable)',
      registers: [registry],
      collect() {
        this.reset();
        const lag = app.reads.lagSeconds();
        if (lag !== undefined) this.set(lag);
      },
    });
    new Gauge({
      name: 'billing_read_replica_waiting',
      help: 'Reads waiting now for the read replica to replay the writes committed before them',
      registers: [registry],
      collect() {
        this.set(app.reads.waiting());
      },
    });
    new Gauge({
      name: 'billing_read_replica_up',
      help: 'Whether the last sample reached the read replica as a standby (1) or not (0: reads go to the primary)',
      registers: [registry],
      collect() {
        this.set(app.reads.up() ?? 0);
      },
    });
  }

  const webhookDeliveries = new Counter({
    name: 'billing_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retrying (failed, another attempt is scheduled), failed (no attempt left), gone (410, endpoint disabled)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const webhookLatency = new Histogram({
    name: 'billing_webhook_delivery_duration_seconds',
    help: 'Webhook delivery request duration (until the answer or the timeout)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [registry],
  });
  const endpointsDisabled = new Counter({
    name: 'billing_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled by the dispatcher, by reason (GONE, FAILING)',
    labelNames: ['reason'],
    registers: [registry],
  });
  new Gauge({
    name: 'billing_webhook_endpoints_disabled',
    help: 'Webhook endpoints currently disabled',
    registers: [registry],
    async collect() {
      this.set(await app.db.webhookEndpoint.count({ where: { status: 'DISABLED' } }));
    },
  });
  new Gauge({
    name: 'billing_webhook_oldest_undelivered_seconds',
    help: 'Age of the oldest event with a pending delivery to an enabled endpoint (0 when none)',
    registers: [registry],
    async collect() {
      // By the service's clock, which dates the events (their trigger takes the changed row's updatedAt; a delivery
      // carries its event's as eventCreatedAt).
      const [row] = await app.db.$queryRaw<{ age: number | null }[]>`
        SELECT EXTRACT(EPOCH FROM ${app.clock.now()}::timestamptz - min(d."eventCreatedAt"))::float8 AS age
          FROM "webhook_deliveries" d JOIN "webhook_endpoints" w ON w."id" = d."endpointId"
         WHERE d."status" = 'PENDING' AND w."status" = 'ENABLED'`;
      this.set(row?.age ?? 0);
    },
  });
  // One read serves both gauges of a scrape, as for the MRR.
  let partitionsRead: Promise<{ monthsAhead: number; defaultRows: number }> | undefined;
  const readPartitionsOnce = () => {
    partitionsRead ??= options.readEventPartitions().finally(() => setImmediate(() => (partitionsRead = undefined)));
    return partitionsRead;
  };
  new Gauge({
    name: 'billing_event_months_ahead',
    help: 'Months of event partitions made in a row after the current one (the partitions pass keeps 2; at 0 next month’s events wait in the default partition)',
    registers: [registry],
    async collect() {
      this.set((await readPartitionsOnce()).monthsAhead);
    },
  });
  new Gauge({
    name: 'billing_events_default_rows',
    help: 'Events waiting in the default partition, of months not made (counted up to 100000; 0 when the partitions pass keeps up)',
    registers: [registry],
    async collect() {
      this.set((await readPartitionsOnce()).defaultRows);
    },
  });

  const settlementLines = new Counter({
    name: 'billing_settlement_lines_total',
    help: 'Settlement file lines imported, by reconciliation status at import (missing: ledger items no line matched)',
    labelNames: ['status'],
    registers: [registry],
  });
  const settlementResolved = new Counter({
    name: 'billing_settlement_resolved_total',
    help: 'Unknown payment and refund outcomes a settlement file resolved',
    registers: [registry],
  });

  const identitiesPurged = new Counter({
    name: 'billing_erasure_identities_purged_total',
    help: 'Erasure vaults destroyed by the retention pass once their retainUntil had passed',
    registers: [registry],
  });

  const gatewayInquiries = new Counter({
    name: 'billing_gateway_inquiries_total',
    help: 'Lookups of unknown outcomes at the gateway, by gateway and what the lookup answered (APPROVED, MISMATCH, NOT_PAID, UNDECIDED, REFUSED)',
    labelNames: ['gateway', 'result'],
    registers: [registry],
  });
  const gatewayInquiryOutcomes = new Counter({
    name: 'billing_gateway_inquiry_outcomes_total',
    help: 'Unknown outcomes the inquiry pass settled, by gateway and outcome (SUCCEEDED, FAILED, ALREADY_FINISHED, LEFT_FOR_OPERATOR)',
    labelNames: ['gateway', 'outcome'],
    registers: [registry],
  });

  app.decorate('metrics', {
    registry,
    observeGateway(gateway: GatewayName, result: GatewayResult) {
      called.add(gateway);
      gatewayCalls.inc({ gateway, operation: result.operation, outcome: result.outcome });
      gatewayLatency.observe({ gateway, operation: result.operation }, result.durationMs / 1000);
      if (options.gatewayCalls.observe(gateway, result)) configurationRefused.inc({ gateway });
    },
    webhooks: {
      delivery(outcome, seconds) {
        webhookDeliveries.inc({ outcome });
        webhookLatency.observe(seconds);
      },
      endpointDisabled(reason) {
        endpointsDisabled.inc({ reason });
      },
    },
    settlements: {
      imported(summary, resolved) {
        for (const [status, count] of Object.entries(summary)) settlementLines.inc({ status: status.toUpperCase() }, count);
        settlementResolved.inc(resolved);
      },
    },
    erasures: {
      identitiesPurged(count) {
        identitiesPurged.inc(count);
      },
    },
    inquiries: {
      inquiry(gateway, result) {
        gatewayInquiries.inc({ gateway, result });
      },
      outcome(gateway, outcome) {
        gatewayInquiryOutcomes.inc({ gateway, outcome });
      },
    },
  } satisfies Metrics);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === '/metrics') return;
    httpRequests.inc({ method: request.method, route, status_code: String(reply.statusCode) });
    httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  app.get(
    '/metrics',
    {
      onRequest: app.requireMetricsReader,
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        tags: [TAGS.operations.name],
        description: 'Prometheus text format. In production it takes a bearer token: one of METRICS_TOKENS or ADMIN_TOKENS.',
        produces: ['text/plain'],
        response: { 200: { type: 'string', description: 'Prometheus exposition format' } },
        errors: { 401: ['UNAUTHORIZED'] },
      },
    },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x', dependencies: ['db', 'auth'] });
