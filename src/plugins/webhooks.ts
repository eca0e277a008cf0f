// The webhook dispatcher's life in the app (src/modules/webhooks/dispatcher.ts): started on onReady, stopped on
// preClose (while the database is still open): it stops claiming and waits at most 5 s for the requests in flight
// (the charging drain, src/plugins/scheduler.ts, has the shutdown budget; a webhook is at least once anyway). What
// it could not record is sent again when its lease expires.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createDispatcher, type Dispatcher } from '../modules/webhooks/dispatcher.ts';
import type { Keyring } from '../lib/crypto.ts';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: Dispatcher;
  }
}

async function webhooksPlugin(app: FastifyInstance, options: { keyring: Keyring }) {
  const dispatcher = createDispatcher({ db: app.db, config: app.config, keyring: options.keyring, log: app.log, observer: app.metrics.webhooks });
  app.decorate('webhooks', dispatcher);
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
