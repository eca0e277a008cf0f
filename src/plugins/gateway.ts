// The gateways (src/gateway/gateway.ts): Danal's adapter over its client, decorated once as `app.gateway` (the
// adapter the services are given) and in the registry `app.gateways`, beside Toss's adapter when Toss runs (TOSS_*;
// its sandbox under /sandbox/toss outside production when unset), and closed with the app. With no PAYMENT_API_BASE_URL
// (development) the sandbox gateway is mounted under /sandbox (for the customer's browser and for operators), and
// the client calls the same sandbox over real HTTP, exactly as it would call the real gateway, on a private
// loopback listener of its own. That listener closes only after the app has drained its gateway calls (the
// scheduler's preClose): the app's own port answers 503 from the moment close begins, and a call still on its way
// to it would be recorded UNKNOWN for nothing.
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createGatewayClient } from '../gateway/client.ts';
import { createDanalAdapter } from '../gateway/danal.adapter.ts';
import { createTossAdapter } from '../gateway/toss.adapter.ts';
import type { GatewayAdapter, GatewayWindow } from '../gateway/gateway.ts';
import { createGateways, type Gateways } from '../gateway/registry.ts';
import { instrumentGateway } from './metrics.ts';
import type { SandboxState } from '../sandbox/sandbox.state.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Danal's adapter: in this version every payment and billing key is Danal's. */
    gateway: GatewayAdapter;
    /** Every configured gateway's adapter, by name. */
    gateways: Gateways;
    /** Present only when the built-in sandbox is mounted. */
    sandbox: SandboxState | undefined;
  }
}

export const SANDBOX_PREFIX = '/sandbox';
/** The Toss sandbox, beside the Danal one (docs/sandbox.md "The Toss sandbox"). */
export const TOSS_SANDBOX_PREFIX = `${SANDBOX_PREFIX}/toss`;

async function gatewayPlugin(app: FastifyInstance) {
  const { config } = app;
  const { secretKey, merchantId } = config.gateway;
  if (!secretKey || !merchantId) throw new Error('gateway credentials are missing (PAYMENT_SECRET_KEY, PAYMENT_MERCHANT_ID)');

  let sandbox: SandboxState | undefined;
  let toss: { baseUrl: string; secretKey: string; window: GatewayWindow } | undefined;
  // Against Toss the window has no page of Toss's: the service's own page opens it with Toss's script (docs/api.md "Gateways").
  if (config.toss.mode === 'API') toss = { baseUrl: config.toss.baseUrl!, secretKey: config.toss.secretKey!, window: { clientKey: config.toss.clientKey! } };
  const danalSandbox = !config.gateway.baseUrl;
  const tossSandbox = config.toss.mode === 'SANDBOX';
  // The sandboxes' routes on the app (for the customer's browser and operators) and on a private listener the
  // adapters call; imported here, not at the top: a service given both gateways' URLs (production) never loads the
  // sandboxes' modules (nor holds their resident memory, docs/benchmarks.md).
  const privateSandbox = danalSandbox || tossSandbox ? Fastify({ loggerInstance: app.log.child({ component: 'sandbox' }) }) : undefined;
  if (danalSandbox) {
    const [{ createSandboxState }, { sandboxRoutes }, { createSandboxStore }] = await Promise.all([
      import('../sandbox/sandbox.state.ts'),
      import('../sandbox/sandbox.routes.ts'),
      import('../sandbox/sandbox.store.ts'),
    ]);
    // The sandbox remembers what it issued across restarts, in the service's database (its own schema).
    sandbox = createSandboxState({ clock: app.clock, merchantId });
    const store = createSandboxStore(app.db, sandbox);
    await app.register(sandboxRoutes, { prefix: SANDBOX_PREFIX, state: sandbox, store, secretKey });
    await privateSandbox!.register(sandboxRoutes, { prefix: SANDBOX_PREFIX, state: sandbox, store, secretKey });
  }
  let tossSandboxKeys: { secretKey: string; clientKey: string } | undefined;
  if (tossSandbox) {
    // Toss's sandbox on the same clock, keeping its state beside the Danal sandbox's.
    const { createTossSandbox } = await import('../sandbox/toss/toss-mount.ts');
    const mounted = createTossSandbox({ clock: app.clock, db: app.db, secretKey: config.toss.secretKey, clientKey: config.toss.clientKey });
    await app.register(mounted.plugin, { prefix: TOSS_SANDBOX_PREFIX });
    await privateSandbox!.register(mounted.plugin, { prefix: TOSS_SANDBOX_PREFIX });
    tossSandboxKeys = { secretKey: mounted.secretKey, clientKey: mounted.clientKey };
  }
  const privateUrl = privateSandbox ? await privateSandbox.listen({ host: '127.0.0.1', port: 0 }) : undefined;
  if (privateSandbox) app.addHook('onClose', async () => privateSandbox.close());
  if (tossSandbox) {
    // The customer's browser opens the sandbox's window on the app's own address.
    const window = { clientKey: tossSandboxKeys!.clientKey, url: `${config.publicBaseUrl}${TOSS_SANDBOX_PREFIX}/window` };
    toss = { baseUrl: `${privateUrl}${TOSS_SANDBOX_PREFIX}`, secretKey: tossSandboxKeys!.secretKey, window };
  }

  const client = createGatewayClient({
    baseUrl: config.gateway.baseUrl ?? `${privateUrl}${SANDBOX_PREFIX}`,
    secretKey,
    merchantId,
    timeoutMs: config.gateway.timeoutMs,
    mobileIssueKeyPath: config.gateway.mobileIssueKeyPath,
    cancelPath: config.gateway.cancelPath,
    log: app.log,
    redactor: app.redactor,
  });
  const gateway = instrumentGateway(createDanalAdapter(client), app.metrics);
  // Toss runs when it is configured (or on its sandbox outside production); its secret key is scrubbed from every log line.
  if (toss) app.redactor.addSecret(toss.secretKey);
  const tossAdapter = toss
    ? instrumentGateway(
        createTossAdapter({ ...toss, timeoutMs: config.gateway.timeoutMs, keyDeletion: config.toss.keyDeletion, log: app.log, redactor: app.redactor }),
        app.metrics,
      )
    : undefined;
  app.decorate('gateway', gateway);
  app.decorate('gateways', createGateways({ DANAL: gateway, ...(tossAdapter ? { TOSS: tossAdapter } : {}) }));
  app.decorate('sandbox', sandbox);
  app.addHook('onClose', async () => {
    gateway.close();
    tossAdapter?.close();
  });
}

export default fp(gatewayPlugin, { name: 'gateway', fastify: '5.x', dependencies: ['db', 'metrics'] });
