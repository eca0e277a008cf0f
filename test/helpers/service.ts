// The service as operators run it, against a standalone sandbox: a database of the file's own, a client to read it,
// the sandbox over HTTP, and `start(env)` for src/server.ts processes, all cleaned up after the file. For the
// process-level scenarios (a replica killed mid-call, a restart).
import { afterAll, beforeAll } from 'vitest';
import { createPrismaClient, type Db } from '../../src/db/prisma.ts';
import { freePort } from '../setup/global-setup.ts';
import { WAIT_SAFETY_NET_MS } from '../setup/safety-nets.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { run, waitUntilReady, type Running } from './process.ts';
import { SANDBOX_MERCHANT, SANDBOX_SECRET, startSandbox, type RunningSandbox } from './sandbox.ts';

export const SERVICE_API_KEY = 'crash_api_key_0123456789abcdef';
export const SERVICE_ADMIN_TOKEN = 'crash_admin_token_0123456789abc';
export const SERVICE_ENCRYPTION_KEYS = `k1:${Buffer.alloc(32, 5).toString('base64')}`;

export interface ServiceFixture {
  readonly db: Db;
  readonly sandbox: RunningSandbox;
  readonly databaseUrl: string;
  /** Starts src/server.ts on a free port against the sandbox and waits until it is ready. */
  start(env?: Record<string, string>): Promise<StartedService>;
}

export interface StartedService {
  port: number;
  base: string;
  running: Running;
  /**
   * SIGKILL, then wait until PostgreSQL is done with the dead process's connections. The process's exit does not mean
   * its last statements are settled: what it sent before dying sits in the server's socket buffers, and a backend still
   * runs (and may commit) it before it reads the end of the connection. Counting rows at the exit raced those commits
   * (a loaded run counted 12 attempts in flight, 16 were).
   */
  kill(): Promise<void>;
}

let processes = 0;

export function useServiceAgainstSandbox(): ServiceFixture {
  let database: TestDatabase;
  let db: Db;
  let sandbox: RunningSandbox;
  const started: Running[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createPrismaClient(database.url);
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    for (const r of started) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
    await Promise.all(started.map((r) => r.exit));
    await db?.$disconnect();
    await sandbox?.close();
    await database?.drop();
  });
  async function startOn(port: number, env: Record<string, string>) {
    // The process's connections carry a name of their own, so that kill() can see them end (pg_stat_activity).
    const applicationName = `billing-test-service-${process.pid}-${++processes}`;
    const url = new URL(database.url);
    url.searchParams.set('application_name', applicationName);
    const running = run('src/server.ts', {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: url.toString(),
      PAYMENT_API_BASE_URL: sandbox.url,
      PAYMENT_SECRET_KEY: SANDBOX_SECRET,
      PAYMENT_MERCHANT_ID: SANDBOX_MERCHANT,
      PAYMENT_TIMEOUT_MS: '10000',
      API_KEYS: SERVICE_API_KEY,
      ADMIN_TOKENS: SERVICE_ADMIN_TOKEN,
      BILLING_KEY_ENCRYPTION_KEYS: SERVICE_ENCRYPTION_KEYS,
      SCHEDULER_ENABLED: 'false',
      ...env,
    });
    started.push(running);
    await waitUntilReady(port, running);
    const kill = async () => {
      running.child.kill('SIGKILL');
      await running.exit;
      await waitFor(
        `the connections of ${applicationName} closed`,
        async () =>
          (await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${applicationName}`)[0]!.n === 0,
      );
    };
    return { port, base: `http://127.0.0.1:${port}`, running, kill };
  }

  return {
    get db() {
      return db;
    },
    get sandbox() {
      return sandbox;
    },
    get databaseUrl() {
      return database.url;
    },
    async start(env: Record<string, string> = {}) {
      // A free port is free when asked, not when the child binds it: another process listening on an ephemeral port
      // (a service's private loopback listener, a sandbox) may take it in between. The child then exits with
      // EADDRINUSE before it is ready, and is started again on another port.
      for (let attempt = 1; ; attempt++) {
        try {
          return await startOn(await freePort(), env);
        } catch (error) {
          if (attempt >= 3 || !String((error as Error).message).includes('EADDRINUSE')) throw error;
        }
      }
    },
  };
}

/**
 * Polls until `check()` holds. There is no time budget to pass: a condition holds when it holds, however loaded the
 * machine; only the suite's safety net (WAIT_SAFETY_NET_MS) ends a wait for one that never does, naming `what`.
 */
export async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_SAFETY_NET_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: still not the case after the safety net of ${WAIT_SAFETY_NET_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * True once no subscription, payment attempt, registration or order holds a lease that is still live by the wall
 * clock, which is the clock of the src/server.ts processes started here: a replica started now may take them all over.
 */
export async function leasesExpired(db: Db): Promise<boolean> {
  const live = { leaseExpiresAt: { gte: new Date() } };
  const counts = await Promise.all([
    db.subscription.count({ where: live }),
    db.paymentAttempt.count({ where: live }),
    db.registration.count({ where: live }),
    db.order.count({ where: live }),
  ]);
  return counts.every((count) => count === 0);
}
