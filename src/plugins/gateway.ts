// The gateway client, decorated once as `app.gateway` and closed with the app. With no PAYMENT_API_BASE_URL
// (development) the sandbox gateway is mounted under /sandbox and the client calls it over real HTTP on this
// app's own port, exactly as it would call the real gateway.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createGatewayClient } from '../gateway/client.ts';
import type { GatewayClient } from '../gateway/types.ts';
import { instrumentGateway } from './metrics.ts';
import { createSandboxState, type SandboxState } from '../sandbox/sandbox.state.ts';
import { sandboxRoutes } from '../sandbox/sandbox.routes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayClient;
    /** Present only when the built-in sandbox is mounted. */
    sandbox: SandboxState | undefined;
  }
}

export const SANDBOX_PREFIX = '/sandbox';

async function gatewayPlugin(app: FastifyInstance) {
  const { config } = app;
  const { secretKey, merchantId } = config.gateway;
  if (!secretKey || !merchantId) throw new Error('gateway credentials are missing (PAYMENT_SECRET_KEY, PAYMENT_MERCHANT_ID)');

  let baseUrl: string | (() => string);
  let sandbox: SandboxState | undefined;
  if (config.gateway.baseUrl) {
    baseUrl = config.gateway.baseUrl;
  } else {
    sandbox = createSandboxState({ clock: app.clock, merchantId });
    await app.register(sandboxRoutes, { prefix: SANDBOX_PREFIX, state: sandbox, secretKey });
    baseUrl = () => {
      const address = app.server.address();
      if (address && typeof address === 'object') return `http://127.0.0.1:${address.port}${SANDBOX_PREFIX}`;
      return `${config.publicBaseUrl}${SANDBOX_PREFIX}`;
    };
  }

  const client = createGatewayClient({
    baseUrl,
    secretKey,
    merchantId,
    timeoutMs: config.gateway.timeoutMs,
    mobileIssueKeyPath: config.gateway.mobileIssueKeyPath,
    cancelPath: config.gateway.cancelPath,
    log: app.log,
    redactor: app.redactor,
  });
  const gateway = instrumentGateway(client, app.metrics);
  app.decorate('gateway', gateway);
  app.decorate('sandbox', sandbox);
  app.addHook('onClose', async () => gateway.close());
}

export default fp(gatewayPlugin, { name: 'gateway', fastify: '5.x', dependencies: ['db', 'metrics'] });
