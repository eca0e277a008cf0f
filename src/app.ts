// buildApp(config): the whole service as a Fastify instance (DESIGN.md §7). src/server.ts adds the process
// around it; tests call it directly.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import formbody from '@fastify/formbody';
import type { Logger } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { createSimulatedClock, createSystemClock, type Clock } from './lib/clock.ts';
import { createRedactor, type Redactor } from './lib/redact.ts';
import { createLogger } from './lib/logger.ts';
import errorHandler from './plugins/error-handler.ts';
import dbPlugin from './plugins/db.ts';
import gatewayPlugin from './plugins/gateway.ts';
import { healthRoutes } from './modules/health/health.routes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    clock: Clock;
    redactor: Redactor;
  }
}

/** The app as routes see it: TypeBox schemas give typed requests. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface BuildOptions {
  logger?: Logger;
  redactor?: Redactor;
  clock?: Clock;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  if (!config.databaseUrl) throw new Error('buildApp needs config.databaseUrl (src/server.ts starts the embedded database)');
  const redactor = options.redactor ?? createRedactor([config.gateway.secretKey]);
  const logger = options.logger ?? createLogger({ level: config.logLevel, redactor });
  const clock = options.clock ?? (config.clock === 'simulated' ? createSimulatedClock() : createSystemClock());

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: true,
    bodyLimit: 64 * 1024,
    ajv: {
      // Strict bodies (DESIGN.md §5): unknown fields are refused, never silently dropped or applied.
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('clock', clock);
  app.decorate('redactor', redactor);

  await app.register(errorHandler);
  await app.register(formbody);
  await app.register(dbPlugin, { connectionString: config.databaseUrl });
  await app.register(gatewayPlugin);
  await app.register(healthRoutes);

  return app;
}
