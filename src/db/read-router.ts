// Where a read-only request reads (docs/production.md "Read replica"): the streaming replica of DATABASE_READ_URL once
// it has replayed every write committed before the request asked, else the primary. The one place that decides it;
// routes opt in through src/modules/shared/read-db.ts, and nothing that decides money, takes a lease, writes or answers
// a write calls it (test/architecture.test.ts).
//
// No stale answer after one's own write: a read first takes the primary's WAL write position (pg_current_wal_lsn(),
// which every commit the primary has acknowledged with synchronous_commit=on has reached) and waits, polling with a
// short backoff, until the replica's pg_last_wal_replay_lsn() has reached it. On a hot standby a transaction's commit
// becomes visible when its commit record is replayed, in WAL order, so the replica then shows every transaction
// committed before the read began: the console's page after its redirect, the merchant's GET after its POST, whatever
// process served the write (no session state). Past READ_REPLICA_WAIT the read goes to the primary.
//
// A replica lagging more than READ_REPLICA_MAX_LAG is bypassed without waiting; one that is down or refuses is
// bypassed too (logged once, never its URL). The lag is measured by a background sampler, not per request: every
// second it notes the primary's position with the time, and the lag is the age of the oldest noted position the
// replica has not replayed (0 when it has replayed them all, even on an idle primary).
import type { Db } from './prisma.ts';
import { sqlQuery } from './prisma.ts';

/** Where one read went, and why: `replayed` (the replica, once it had replayed the primary's position) or a bypass. */
export type ReadReason = 'replayed' | 'lag' | 'wait_timeout' | 'replica_error' | 'unset';
export type ReadServer = 'replica' | 'primary';

/** What learns of every routed read and of the replica's state (src/plugins/metrics.ts). */
export interface ReadObserver {
  read(server: ReadServer, reason: ReadReason): void;
}

export interface ReadRouter {
  /**
   * The client for a read that must see every write committed before this call: the replica once it has replayed
   * them (waiting up to the bound), else the primary. Never throws for the replica's sake.
   */
  readDb(): Promise<Db>;
  /** Whether a replica is configured. */
  readonly configured: boolean;
  /** The replica's lag in seconds as last sampled; undefined when none is configured or it is unreachable. */
  lagSeconds(): number | undefined;
  /** 1 when the last sample reached the replica, 0 when it did not; undefined when none is configured. */
  up(): number | undefined;
  /** Reads waiting now for the replica to replay their position. */
  waiting(): number;
  /** Tells every later read to `observer` (the metrics, registered after the router). */
  observe(observer: ReadObserver): void;
  stop(): void;
}

export interface ReadRouterOptions {
  primary: Db;
  /** The replica's client (createPrismaClient with readOnly); undefined: every read goes to the primary. */
  replica?: Db;
  /** How long a read waits for the replica to replay the primary's position. */
  waitMs: number;
  /** The lag past which the replica is bypassed without waiting. */
  maxLagMs: number;
  /** How often the lag is sampled. */
  sampleMs?: number;
  log: { warn(object: object, message: string): void; info(object: object, message: string): void };
  /** Where the replica is, for the logs: host, port and database, never the password. */
  describe: string;
}

const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text AS lsn';
// NULL on a server that is not in recovery: a DATABASE_READ_URL pointing at a primary is not a replica.
const REPLAYED = 'SELECT pg_last_wal_replay_lsn()::text AS replayed, pg_wal_lsn_diff(pg_last_wal_replay_lsn(), $1::pg_lsn) >= 0 AS reached';
// Positions noted while the replica is behind; past it the newest are not noted, the oldest (which give the lag) kept.
const MAX_NOTED = 3600;
const FIRST_POLL_MS = 1;
const MAX_POLL_MS = 50;

class NotAStandby extends Error {
  override message = 'the server of DATABASE_READ_URL is not a standby in recovery';
}

/** `host:port/database` of a connection string, for logs (never its user or password). */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'DATABASE_READ_URL';
  }
}

/** A PostgreSQL LSN (`16/B374D848`) as a number of bytes, to compare noted positions. */
function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export function createReadRouter(options: ReadRouterOptions): ReadRouter {
  const { primary, replica, waitMs, maxLagMs, log } = options;
  let observer: ReadObserver | undefined;
  const count = (server: ReadServer, reason: ReadReason) => observer?.read(server, reason);

  if (!replica) {
    return {
      configured: false,
      async readDb() {
        count('primary', 'unset');
        return primary;
      },
      lagSeconds: () => undefined,
      up: () => undefined,
      waiting: () => 0,
      observe: (o) => {
        observer = o;
      },
      stop: () => {},
    };
  }
  const standby = replica;

  // The replica's state as the sampler last saw it; a failed read marks it down until a sample reaches it again.
  let reachable = true;
  let lagMs = 0;
  let waiting = 0;
  const noted: Array<{ lsn: bigint; at: number }> = [];

  function markDown(error: unknown) {
    if (reachable)
      log.warn(
        { replica: options.describe, err: { message: (error as Error).message, code: (error as { code?: string }).code } },
        'read replica unreachable: reads go to the primary',
      );
    reachable = false;
  }
  function markUp() {
    if (!reachable) log.info({ replica: options.describe }, 'read replica reachable again: reads go to it');
    reachable = true;
  }

  /** The replica's replayed position, and whether it has reached `lsn`. */
  async function replayed(lsn: string): Promise<{ replayed: string; reached: boolean }> {
    const [row] = await sqlQuery<{ replayed: string | null; reached: boolean | null }>(standby, REPLAYED, [lsn]);
    if (!row || row.replayed === null) throw new NotAStandby();
    return { replayed: row.replayed, reached: row.reached === true };
  }

  async function sample(): Promise<void> {
    let position: string;
    try {
      const [row] = await sqlQuery<{ lsn: string }>(primary, PRIMARY_POSITION, []);
      position = row!.lsn;
    } catch {
      return; // the primary's own trouble is told elsewhere (/ready); the lag stays as it was
    }
    const now = Date.now();
    const lsn = lsnBytes(position);
    if (noted.length < MAX_NOTED && (noted.length === 0 || noted[noted.length - 1]!.lsn < lsn)) noted.push({ lsn, at: now });
    try {
      const replica = lsnBytes((await replayed(position)).replayed);
      while (noted.length > 0 && noted[0]!.lsn <= replica) noted.shift();
      lagMs = noted.length > 0 ? now - noted[0]!.at : 0;
      markUp();
    } catch (error) {
      markDown(error);
    }
  }

  let sampling: Promise<void> | undefined;
  const sampleOnce = () => {
    sampling ??= sample().finally(() => {
      sampling = undefined;
    });
    return sampling;
  };
  const timer = setInterval(() => void sampleOnce(), options.sampleMs ?? 1000);
  timer.unref();
  void sampleOnce();

  async function readDb(): Promise<Db> {
    if (!reachable) {
      count('primary', 'replica_error');
      return primary;
    }
    if (lagMs > maxLagMs) {
      count('primary', 'lag');
      return primary;
    }
    const [row] = await sqlQuery<{ lsn: string }>(primary, PRIMARY_POSITION, []);
    const deadline = Date.now() + waitMs;
    let waited = false;
    try {
      for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, MAX_POLL_MS)) {
        if ((await replayed(row!.lsn)).reached) {
          count('replica', 'replayed');
          return standby;
        }
        if (Date.now() + pause > deadline) {
          count('primary', 'wait_timeout');
          return primary;
        }
        if (!waited) waiting += 1;
        waited = true;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    } catch (error) {
      markDown(error);
      count('primary', 'replica_error');
      return primary;
    } finally {
      if (waited) waiting -= 1;
    }
  }

  return {
    configured: true,
    readDb,
    lagSeconds: () => (reachable ? lagMs / 1000 : undefined),
    up: () => (reachable ? 1 : 0),
    waiting: () => waiting,
    observe: (o) => {
      observer = o;
    },
    stop: () => clearInterval(timer),
  };
}
