// npm run sandbox: the sandbox gateways alone, on SANDBOX_PORT, with their own settable clock: Danal's at the
// root, Toss's under /toss (src/sandbox/toss/), sharing the clock.
import Fastify from 'fastify';
import { ConfigError, loadConfig } from '../config.ts';
import { SANDBOX_MERCHANT_ID, SANDBOX_SECRET_KEY } from '../dev-secrets.ts';
import { createSimulatedClock } from '../lib/clock.ts';
import { createLogger } from '../lib/logger.ts';
import { createRedactor } from '../lib/redact.ts';
import { createSandboxState } from './sandbox.state.ts';
import { sandboxRoutes } from './sandbox.routes.ts';
import { tossSandbox } from './toss/toss-mount.ts';

try {
  const config = await loadConfig();
  const secretKey = config.gateway.secretKey ?? SANDBOX_SECRET_KEY;
  const merchantId = config.gateway.merchantId ?? SANDBOX_MERCHANT_ID;
  const logger = createLogger({ level: config.logLevel, redactor: createRedactor([secretKey]) });
  const app = Fastify({ loggerInstance: logger });
  const clock = createSimulatedClock();
  const state = createSandboxState({ clock, merchantId });
  await app.register(sandboxRoutes, { state, secretKey, prefix: '' });
  await app.register(tossSandbox, { prefix: '/toss', clock });
  await app.listen({ host: config.host, port: config.sandboxPort });
  logger.info({ merchantId }, 'sandbox gateway ready');
  const stop = async () => {
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError ? 'Configuration error' : 'Sandbox failed'}: ${(error as Error).message}\n`);
  process.exit(1);
}
