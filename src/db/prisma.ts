// Prisma 7 without its Rust engine: the generated `prisma-client` talks to PostgreSQL through
// @prisma/adapter-pg (node-postgres).
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = InstanceType<typeof PrismaClient>;

export function createPrismaClient(connectionString: string, options: { poolSize?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString, max: options.poolSize ?? 10 });
  return new PrismaClient({ adapter });
}
