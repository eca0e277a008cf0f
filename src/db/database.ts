// Where the database comes from: DATABASE_URL, or (development only) the embedded cluster under .data/.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';

export const DATA_DIR = path.resolve(process.cwd(), '.data');

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function openDatabase(config: Config, log: Logger): Promise<DatabaseHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, stop: async () => {} };
  if (config.env === 'production') throw new Error('DATABASE_URL is required in production');
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(DATA_DIR, 'postgres'),
    port: config.embeddedDbPort,
    database: 'billing',
    persistent: true,
    log,
  });
  log.warn(
    { port: config.embeddedDbPort, dataDir: path.join(DATA_DIR, 'postgres') },
    'DATABASE_URL is unset: using the embedded DEVELOPMENT PostgreSQL under .data/postgres (never for production)',
  );
  return { url: embedded.connectionString, embedded: true, stop: () => embedded.stop() };
}
