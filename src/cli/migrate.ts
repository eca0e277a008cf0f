// npm run db:migrate: applies pending migrations, then changed function files (prisma/functions), to DATABASE_URL (or the
// embedded development database) and exits.
import { ConfigError, loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrator.ts';
import { UnsupportedServerError } from '../db/server-version.ts';
import { createLogger } from '../lib/logger.ts';
import { createRedactor } from '../lib/redact.ts';

try {
  const config = await loadConfig();
  const logger = createLogger({ level: config.logLevel, redactor: createRedactor([config.gateway.secretKey]) });
  const database = await openDatabase(config, logger);
  try {
    const result = await migrate({ connectionString: database.url, log: logger });
    logger.info(
      { applied: result.applied, alreadyApplied: result.alreadyApplied, functionFiles: result.functionFiles },
      result.applied.length || result.functionFiles.length ? 'migrations applied' : 'database already up to date',
    );
  } finally {
    await database.stop();
  }
} catch (error) {
  // An unsupported server's refusal is its own one line (docs/operating.md "Commands").
  if (error instanceof UnsupportedServerError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`${error instanceof ConfigError ? 'Configuration error' : 'Migration failed'}: ${(error as Error).message}\n`);
  process.exit(1);
}
