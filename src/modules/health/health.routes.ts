// GET /health: the process is up. GET /ready: the database answers, every migration in prisma/migrations is applied
// and every function file of prisma/functions as it is now; otherwise 503 with the reason, so an orchestrator holds
// traffic back.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { readFunctionFiles } from '../../db/apply-functions.ts';
import { pendingMigrations, readMigrations } from '../../db/migrator.ts';
import { TAGS } from '../../lib/api-document.ts';
import { StringEnum } from '../shared/schemas.ts';

const HealthResponse = Type.Object({ status: Type.Literal('ok') });
const ReadyResponse = Type.Object({
  status: StringEnum(['ready', 'not_ready']),
  reason: Type.Optional(Type.String()),
});

export async function healthRoutes(app: FastifyInstance) {
  const migrations = readMigrations();
  const functionFiles = readFunctionFiles();

  app.get(
    '/health',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'The process is up',
        tags: [TAGS.operations.name],
        response: { 200: HealthResponse },
        responseDescriptions: { 200: 'The process is up (it says nothing of the database)' },
      },
    },
    async () => ({
      status: 'ok' as const,
    }),
  );

  app.get(
    '/ready',
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'The database answers and every migration is applied',
        tags: [TAGS.operations.name],
        response: { 200: ReadyResponse, 503: ReadyResponse },
        responseDescriptions: {
          200: 'Ready: send traffic',
          503: 'Not ready: the database does not answer or a migration is not applied (the reason says which)',
        },
      },
    },
    async (request, reply) => {
      try {
        const pending = await pendingMigrations(<T>(sql: string) => app.db.$queryRawUnsafe<T[]>(sql), migrations, functionFiles);
        if (pending.length > 0) {
          return reply.status(503).send({ status: 'not_ready', reason: `migrations not applied: ${pending.join(', ')}` });
        }
        return { status: 'ready' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return reply.status(503).send({ status: 'not_ready', reason: 'database unreachable' });
      }
    },
  );
}
