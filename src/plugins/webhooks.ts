// The webhook dispatcher's life in the app (src/modules/webhooks/dispatcher.ts, passed in by app.ts): started on onReady, stopped on
// preClose (while the database is still open): it stops claiming and waits at most 5 s for the requests in flight
// (the charging drain, src/plugins/scheduler.ts, has the shutdown budget; a webhook is at least once anyway). What
// it could not record is sent again when its lease expires.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';

/** What the plugin runs: the webhook dispatcher (src/modules/webhooks/dispatcher.ts), created and passed in by app.ts. */
export interface WebhookDispatcher {
  start(): void;
  stop(timeoutMs: number): Promise<boolean>;
}

async function webhooksPlugin(app: FastifyInstance, options: { dispatcher: WebhookDispatcher }) {
  const { dispatcher } = options;
  if (app.config.webhooks.enabled) {
    app.addHook('onReady', async () => {
      dispatcher.start();
      app.log.info({ concurrency: app.config.webhooks.concurrency }, 'webhook dispatcher started');
    });
  }
  app.addHook('preClose', async () => {
    const drained = await dispatcher.stop(5_000);
    if (!drained) app.log.warn('webhook deliveries still in flight at shutdown; they will be sent again when their leases expire');
  });
}

export default fp(webhooksPlugin, { name: 'webhooks', fastify: '5.x', dependencies: ['db', 'metrics'] });
