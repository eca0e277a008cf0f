// The process: configuration, logger, database, migrations, listen, the start-up banner, graceful shutdown
// (docs/architecture.md "Layout").
import { buildApp } from './app.ts';
import { bannerText, startupBanner } from './banner.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { DATA_DIR, openDatabase, type DatabaseHandle } from './db/database.ts';
import { migrate } from './db/migrator.ts';
import { UnsupportedServerError } from './db/server-version.ts';
import { applyDevelopmentDefaults } from './dev-secrets.ts';
import { createLogger } from './lib/logger.ts';
import { createRedactor } from './lib/redact.ts';
import { drainTimeoutMs } from './plugins/scheduler.ts';

/** After the drain, this long to close the HTTP server, the database pool and the embedded cluster. */
const CLOSE_MARGIN_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = await loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (config.env !== 'production') config = applyDevelopmentDefaults(config, { dataDir: DATA_DIR });

  const redactor = createRedactor([config.gateway.secretKey, ...config.apiKeys, ...config.adminTokens]);
  const logger = createLogger({ level: config.logLevel, redactor });

  let database: DatabaseHandle | undefined;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let stopping = false;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, drainTimeoutMs(config) + CLOSE_MARGIN_MS);
    timer.unref();
    try {
      await app?.close();
      await database?.stop();
      logger.info('stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    database = await openDatabase(config, logger);
    await migrate({ connectionString: database.url, log: logger });
    app = await buildApp({ ...config, databaseUrl: database.url }, { logger, redactor });
    await app.listen({ host: config.host, port: config.port });
    // One line for the log (JSON, like every other); a terminal gets it in words too.
    const banner = startupBanner(config);
    logger.info(banner, 'service ready');
    if (process.stdout.isTTY) process.stdout.write(bannerText(banner));
  } catch (error) {
    // An unsupported server's refusal is its own one line (docs/operating.md "Commands"), not a logged stack.
    if (error instanceof UnsupportedServerError) process.stderr.write(`${error.message}\n`);
    else logger.fatal({ err: error }, 'startup failed');
    await app?.close().catch(() => {});
    await database?.stop().catch(() => {});
    process.exit(1);
  }
}

void main();
