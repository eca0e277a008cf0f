// Prisma CLI configuration. The service never reads this file: it connects through @prisma/adapter-pg with the
// URL from src/config.ts and applies migrations with its own runner (src/db/migrator.ts), because Prisma's
// schema engine cannot be downloaded on the build machines. `prisma migrate deploy` works elsewhere all the same.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
});
