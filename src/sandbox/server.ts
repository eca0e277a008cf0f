// npm run sandbox: the sandbox gateway alone, on SANDBOX_PORT, with its own settable clock.
import Fastify from 'fastify';
import { ConfigError, loadConfig } from '../config.ts';
import { SANDBOX_MERCHANT_ID, SANDBOX_SECRET_KEY } from '../dev-secrets.ts';
import { createSimulatedClock } from '../lib/clock.ts';
import { createLogger } from '../lib/logger.ts';
import { createRedactor } from '../lib/redact.ts';
import { createSandboxState } from './sandbox.state.ts';
import { sandboxRoutes } from './sandbox.routes.ts';

try {
  const config = await loadConfig();
  const secretKey = config.gateway.secretKey ?? SANDBOX_SECRET_KEY;
  const merchantId = config.gateway.merchantId ?? SANDBOX_MERCHANT_ID;
  const logger = createLogger({ level: config.logLevel, redactor: createRedactor([secretKey]) });
  const app = Fastify({ loggerInstance: logger });
  const state = createSandboxState({ clock: createSimulatedClock(), merchantId });
  await app.register(sandboxRoutes, { state, secretKey, prefix: '' });
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
