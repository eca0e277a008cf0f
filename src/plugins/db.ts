// The Prisma client, decorated once as `app.db` and disconnected when the app closes; with DATABASE_READ_URL, the read
// replica's client too, behind `app.reads` (src/db/read-router.ts decides per read which server answers).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createPrismaClient, type Db } from '../db/prisma.ts';
import { createReadRouter, describeDatabaseUrl, type ReadRouter } from '../db/read-router.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    /** Reached only through src/modules/shared/read-db.ts, by the routes that opt in. */
    reads: ReadRouter;
  }
}

export interface DbPluginOptions {
  connectionString: string;
  poolSize?: number;
  /** DATABASE_READ_URL and its bounds (config.readReplica). */
  readReplica?: { url?: string; waitMs: number; maxLagMs: number };
}

/** Connections to the replica: only the read routes use them, each for one request's queries. */
const REPLICA_POOL_SIZE = 10;

async function dbPlugin(app: FastifyInstance, options: DbPluginOptions) {
  // Every row Prisma writes is dated by the service's clock (db/clock-stamps.ts), decorated before this plugin.
  const db = createPrismaClient(options.connectionString, { poolSize: options.poolSize, clock: app.clock });
  app.decorate('db', db);
  const replicaUrl = options.readReplica?.url;
  // Read-only and never writing, so no clock stamps; a replica that does not answer a connection within the wait
  // bound (at least a second) is treated as down rather than holding the request.
  const replica = replicaUrl
    ? createPrismaClient(replicaUrl, { poolSize: REPLICA_POOL_SIZE, readOnly: true, connectTimeoutMs: Math.max(options.readReplica!.waitMs, 1000) })
    : undefined;
  const reads = createReadRouter({
    primary: db,
    replica,
    waitMs: options.readReplica?.waitMs ?? 0,
    maxLagMs: options.readReplica?.maxLagMs ?? 0,
    log: app.log,
    describe: replicaUrl ? describeDatabaseUrl(replicaUrl) : '',
  });
  app.decorate('reads', reads);
  app.addHook('onClose', async () => {
    reads.stop();
    await replica?.$disconnect();
    await db.$disconnect();
  });
}

export default fp(dbPlugin, { name: 'db', fastify: '5.x' });
