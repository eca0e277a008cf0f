// A primary and a streaming hot standby of it on this machine, for the read replica's tests (docs/production.md
// "Read replica"). Two clusters of their own (own ports, own folder under the run's TMPDIR, removed on stop), of the
// major the suite runs on (test/setup/postgres-major.ts).
//
// The primary: wal_level=replica and WAL senders (the defaults, named anyway), a physical replication slot so it keeps
// the WAL the standby has not received, the suite's migrations, and a role `reader` with SELECT only, the service's
// DATABASE_READ_URL (its password is distinctive, so a test can look for it in the logs).
//
// The standby's base backup: with pg_basebackup when the machine has one of the server's major (Debian's
// postgresql-client-15 puts /usr/bin/pg_basebackup there; pg_basebackup refuses a newer server than itself);
// otherwise as pg_basebackup does it, through the low-level API: pg_backup_start, a copy of the data directory without
// what pg_basebackup leaves out (postmaster.pid, the WAL, the slots, temporary and statistics files), pg_backup_stop,
// its backup_label written into the copy. Either way the standby then streams from the slot (standby.signal,
// primary_conninfo, primary_slot_name) and replays the WAL the backup needs.
import { execFile as execFileCallback } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chown, copyFile, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded-postgres.ts';
import { migrate } from '../../src/db/migrator.ts';
import { testPostgres } from '../setup/postgres-major.ts';
import { withClient } from './function-files.ts';
import { freePort } from '../setup/global-setup.ts';

const execFile = promisify(execFileCallback);

const PG_BASEBACKUP = '/usr/bin/pg_basebackup';
const DATABASE = 'billing';
const SLOT = 'replica';
export const READER_PASSWORD = 'rdr_9f3c1e7a5b2d4086';
// The embedded clusters' superuser (src/db/embedded-postgres.ts).
const SUPERUSER = { user: 'postgres', password: 'postgres' };

export interface ReplicaPair {
  /** The primary's database, as the service's DATABASE_URL. */
  primaryUrl: string;
  /** The standby's database as the read-only `reader`, as the service's DATABASE_READ_URL. */
  replicaUrl: string;
  /** How the base backup was made: 'pg_basebackup' or 'low-level API'. */
  baseBackup: string;
  /** The servers' PostgreSQL major. */
  major: number;
  /** Stops replaying the WAL (pg_wal_replay_pause()); the standby keeps receiving it. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until the standby has replayed the primary's current WAL position. */
  caughtUp(): Promise<void>;
  /** Stops the standby (its folder goes with it). */
  stopStandby(): Promise<void>;
  stop(): Promise<void>;
}

function asSuperuser(url: string, database = DATABASE): string {
  const parsed = new URL(url);
  parsed.username = SUPERUSER.user;
  parsed.password = SUPERUSER.password;
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The `postgres` system user the clusters run as when the tests run as root (src/db/embedded-postgres.ts). */
async function postgresOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([execFile('id', ['-u', 'postgres']), execFile('id', ['-g', 'postgres'])]);
  return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
}

async function chownTree(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  await chown(dir, owner.uid, owner.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, owner);
    else await chown(full, owner.uid, owner.gid);
  }
}

// What pg_basebackup leaves out of a base backup: the directories' contents (the directories themselves are kept),
// and these files.
const EMPTIED = new Set(['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);
const LEFT_OUT = new Set(['postmaster.pid', 'postmaster.opts', 'server.log', 'backup_label', 'tablespace_map', 'standby.signal', 'recovery.signal']);

/** Copies a running cluster's data directory as pg_basebackup would; a file that vanishes meanwhile is skipped. */
async function copyDataDirectory(from: string, to: string, top = true): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (top && LEFT_OUT.has(entry.name)) continue;
    if (entry.name.startsWith('pgsql_tmp')) continue;
    try {
      if (entry.isDirectory()) {
        if (top && EMPTIED.has(entry.name)) await mkdir(target, { mode: 0o700 });
        else await copyDataDirectory(source, target, false);
      } else if ((await lstat(source)).isFile()) {
        await copyFile(source, target);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/** The low-level base backup: pg_backup_start, the copy, pg_backup_stop, its backup_label in the copy. */
async function lowLevelBackup(primary: EmbeddedDatabase, primaryDir: string, standbyDir: string, conninfo: string): Promise<void> {
  await withClient(primary.adminConnectionString, async (client) => {
    await client.query("SELECT pg_backup_start('replica', true)");
    await copyDataDirectory(primaryDir, standbyDir);
    // Without WAL archiving nothing is waited for: the standby streams the WAL from the slot.
    const { rows } = await client.query<{ labelfile: string }>('SELECT labelfile FROM pg_backup_stop(false)');
    await writeFile(path.join(standbyDir, 'backup_label'), rows[0]!.labelfile);
  });
  await writeFile(path.join(standbyDir, 'standby.signal'), '');
  await appendFile(path.join(standbyDir, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo}'\nprimary_slot_name = '${SLOT}'\n`);
}

async function basebackup(port: number, standbyDir: string): Promise<void> {
  // -R writes standby.signal, primary_conninfo and (with -S) primary_slot_name; -S streams the backup's WAL from the
  // slot, which the standby then uses.
  await execFile(
    PG_BASEBACKUP,
    ['-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER.user, '-D', standbyDir, '-X', 'stream', '-S', SLOT, '-R', '-c', 'fast', '--no-sync'],
    { env: { ...process.env, PGPASSWORD: SUPERUSER.password, LC_ALL: 'C' } },
  );
}

/** The major of the pg_basebackup on this machine, if any. */
export async function basebackupMajor(): Promise<number | undefined> {
  if (!existsSync(PG_BASEBACKUP)) return undefined;
  const { stdout } = await execFile(PG_BASEBACKUP, ['--version']);
  const match = /\(PostgreSQL\) (\d+)/.exec(stdout);
  return match ? Number(match[1]) : undefined;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`replica pair: ${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const log = pino({ level: 'error' });
  const postgres = await testPostgres();
  const folder = await mkdtemp(path.join(tmpdir(), 'replica-pair-'));
  const owner = await postgresOwner();
  if (owner) await chown(folder, owner.uid, owner.gid);
  const primaryDir = path.join(folder, 'primary');
  const standbyDir = path.join(folder, 'standby');
  const started: EmbeddedDatabase[] = [];
  const stopAll = async () => {
    for (const cluster of started.reverse()) await cluster.stop().catch(() => {});
    await rm(folder, { recursive: true, force: true });
  };
  try {
    const primary = await startEmbeddedPostgres({
      dataDir: primaryDir,
      port: await freePort(),
      database: DATABASE,
      persistent: false,
      binaries: postgres.binaries,
      // synchronous_commit stays on (the default): a commit is acknowledged once its WAL is written and flushed.
      settings: { wal_level: 'replica', max_wal_senders: '5', max_replication_slots: '5', fsync: 'off' },
      log,
    });
    started.push(primary);
    await postgres.check(primary.adminConnectionString);
    await migrate({ connectionString: primary.connectionString, log });
    await withClient(primary.connectionString, async (client) => {
      await client.query(`CREATE ROLE reader LOGIN PASSWORD '${READER_PASSWORD}'`);
      await client.query('GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader');
      await client.query(`SELECT pg_create_physical_replication_slot('${SLOT}', true)`);
    });
    const port = Number(new URL(primary.connectionString).port);
    const major = Math.floor(
      Number((await withClient(primary.adminConnectionString, (c) => c.query<{ v: string }>('SHOW server_version_num'))).rows[0]!.v) / 10000,
    );
    const useBasebackup = (await basebackupMajor()) === major;
    if (useBasebackup) await basebackup(port, standbyDir);
    else {
      const conninfo = `host=127.0.0.1 port=${port} user=${SUPERUSER.user} password=${SUPERUSER.password} application_name=replica`;
      await lowLevelBackup(primary, primaryDir, standbyDir, conninfo);
    }
    if (owner) await chownTree(standbyDir, owner);
    const standby = await startEmbeddedPostgres({
      dataDir: standbyDir,
      port: await freePort(),
      database: DATABASE,
      persistent: false,
      binaries: postgres.binaries,
      settings: { hot_standby: 'on', fsync: 'off' },
      log,
    });
    started.push(standby);
    const standbyAdmin = asSuperuser(standby.connectionString);
    const replicaUrl = new URL(standby.connectionString);
    replicaUrl.username = 'reader';
    replicaUrl.password = READER_PASSWORD;

    const replayedPrimary = async () => {
      const [{ lsn }] = (await withClient(primary.connectionString, (c) => c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'))).rows as [
        { lsn: string },
      ];
      await waitFor('replay', () =>
        withClient(
          standbyAdmin,
          async (c) => (await c.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn])).rows[0]!.ok === true,
        ),
      );
    };
    await waitFor('streaming', () =>
      withClient(standbyAdmin, async (c) => (await c.query("SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'")).rowCount === 1),
    );
    await replayedPrimary();

    return {
      primaryUrl: primary.connectionString,
      replicaUrl: replicaUrl.toString(),
      baseBackup: useBasebackup ? 'pg_basebackup' : 'low-level API',
      major,
      pauseReplay: () => withClient(standbyAdmin, (c) => c.query('SELECT pg_wal_replay_pause()')).then(() => {}),
      resumeReplay: () => withClient(standbyAdmin, (c) => c.query('SELECT pg_wal_replay_resume()')).then(() => {}),
      caughtUp: replayedPrimary,
      stopStandby: async () => {
        await standby.stop();
        started.splice(started.indexOf(standby), 1);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
