// POST /admin/retention/run (docs/operating.md "A customer asks to be forgotten"): the retention pass now, as the
// retention plugin runs it on its own (purge-identities.ts); the entries it writes name the operator and the reason
// given, if any, and the run itself is audited as `retention.run`. Mounted by app.ts under /admin behind the admin
// token; honours Idempotency-Key as every admin POST does. Works with SCHEDULER_ENABLED=false too: operators and
// tests drive passes by hand.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import { codesByStatus } from '../../lib/errors.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { actorOf } from '../../plugins/auth.ts';
import { IDEMPOTENT, IdempotencyHeader } from '../shared/admin-actions.ts';
import { optionalReasonBody } from '../shared/schemas.ts';
import { type PurgeIdentities, RETENTION_ACTOR } from './purge-identities.ts';
import { writeAudit } from '../audit/audit.ts';

const RunRetentionBody = optionalReasonBody('보존 기간 만료분 파기');

const RetentionReport = named(
  'RetentionReport',
  Type.Object(
    { purged: Type.Integer({ description: 'erasure vaults destroyed by this pass (each with its erasure.identity_purged audit entry)' }) },
    { description: 'What one retention pass did' },
  ),
);

export function retentionRoutes(deps: { purgeExpiredIdentities: PurgeIdentities; idempotency: Idempotency }) {
  const { purgeExpiredIdentities, idempotency } = deps;
  return async function registerRetentionRun(app: App) {
    app.post(
      '/retention/run',
      {
        schema: {
          operationId: 'runRetentionPass',
          summary: 'Run the retention pass now: destroy every erasure vault past its retainUntil',
          tags: [TAGS.adminErasures.name],
          headers: IdempotencyHeader,
          body: Type.Optional(RunRetentionBody),
          response: { 200: RetentionReport },
          responseDescriptions: { 200: 'The pass ran: how many vaults it destroyed' },
          errors: codesByStatus(...IDEMPOTENT),
        },
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => {
          const by = { actor: actorOf(request), reason: request.body?.reason, requestId: request.id };
          const report = await purgeExpiredIdentities(by);
          // The run itself is an admin action, audited like a charging pass run by hand (the destructions have theirs).
          await app.db.$transaction((tx) =>
            writeAudit(tx, {
              ...by,
              reason: by.reason ?? '(none given)',
              action: 'retention.run',
              entityType: 'scheduler',
              entityId: RETENTION_ACTOR,
              after: report,
            }),
          );
          return { statusCode: 200, body: report };
        }),
    );
  };
}
