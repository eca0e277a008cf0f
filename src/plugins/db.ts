// The Prisma client, decorated once as `app.db` and disconnected when the app closes.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createPrismaClient, type Db } from '../db/prisma.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
  }
}

export interface DbPluginOptions {
  connectionString: string;
  poolSize?: number;
}

async function dbPlugin(app: FastifyInstance, options: DbPluginOptions) {
  // Every row Prisma writes is dated by the service's clock (db/clock-stamps.ts), decorated before this plugin.
  const db = createPrismaClient(options.connectionString, { poolSize: options.poolSize, clock: app.clock });
  app.decorate('db', db);
  app.addHook('onClose', async () => {
    await db.$disconnect();
  });
}

export default fp(dbPlugin, { name: 'db', fastify: '5.x' });
