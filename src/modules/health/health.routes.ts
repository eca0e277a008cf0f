// GET /health: the process is up. GET /ready: the database answers, every migration in prisma/migrations is applied
// and every function file of prisma/functions as it is now, and no gateway refuses our configuration
// (gateway-refusals.ts); otherwise 503 with the reason, so an orchestrator holds traffic back and an operator sees why.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { readFunctionFiles } from '../../db/apply-functions.ts';
import { pendingMigrations, readMigrations } from '../../db/migrator.ts';
import { TAGS } from '../../lib/api-document.ts';
import { StringEnum } from '../shared/schemas.ts';
import type { GatewayRefusal, GatewayRefusals } from './gateway-refusals.ts';

const HealthResponse = Type.Object({ status: Type.Literal('ok') });
const FailingCheck = Type.Object({
  name: Type.String({ description: 'what failed, e.g. gateway:TOSS' }),
  code: Type.Optional(Type.String({ description: 'the gateway’s code, e.g. UNAUTHORIZED_KEY' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'the first refusal since the gateway last answered normally' })),
  lastAt: Type.Optional(Type.String({ format: 'date-time', description: 'the latest refusal' })),
});
const ReadyResponse = Type.Object({
  status: StringEnum(['ready', 'not_ready']),
  reason: Type.Optional(Type.String()),
  checks: Type.Optional(Type.Array(FailingCheck, { description: 'the checks that fail (a gateway refusing our configuration), when any does' })),
});

/** A gateway refusing our configuration, as /ready shows it: its name, code and times (never a key). */
const failingCheck = (refusal: GatewayRefusal) => ({
  name: `gateway:${refusal.gateway}`,
  ...(refusal.code ? { code: refusal.code } : {}),
  since: refusal.since.toISOString(),
  lastAt: refusal.lastAt.toISOString(),
});

const refusalReason = (refused: GatewayRefusal[]) =>
  `gateway configuration refused: ${refused.map((r) => `${r.gateway} ${r.code ?? 'refused'} since ${r.since.toISOString()}`).join('; ')}`;

export async function healthRoutes(app: FastifyInstance, options: { gatewayRefusals: Pick<GatewayRefusals, 'refused'> }) {
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
        summary: 'The database answers, every migration is applied and no gateway refuses our configuration',
        tags: [TAGS.operations.name],
        response: { 200: ReadyResponse, 503: ReadyResponse },
        responseDescriptions: {
          200: 'Ready: send traffic',
          503: 'Not ready: the database does not answer, a migration is not applied, or a gateway refuses our configuration (the reason and the checks say which)',
        },
      },
    },
    async (request, reply) => {
      try {
        const pending = await pendingMigrations(<T>(sql: string) => app.db.$queryRawUnsafe<T[]>(sql), migrations, functionFiles);
        if (pending.length > 0) {
          return reply.status(503).send({ status: 'not_ready', reason: `migrations not applied: ${pending.join(', ')}` });
        }
        const refused = options.gatewayRefusals.refused();
        if (refused.length > 0) return reply.status(503).send({ status: 'not_ready', reason: refusalReason(refused), checks: refused.map(failingCheck) });
        return { status: 'ready' as const };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return reply.status(503).send({ status: 'not_ready', reason: 'database unreachable' });
      }
    },
  );
}
