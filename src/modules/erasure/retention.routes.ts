// POST /admin/retention/run (docs/operating.md "A customer asks to be forgotten"): the retention pass now, as the
// retention plugin runs it on its own (purge-identities.ts); the entries it writes name the operator and the reason
// given, if any, and the run itself is audited as `retention.run`. Mounted by app.ts under /admin behind the admin
// token; honours Idempotency-Key as every admin POST does. Works with SCHEDULER_ENABLED=false too: operators and
// tests drive passes by hand.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { passRun } from '../shared/admin-actions.ts';
import { auditAlone } from '../audit/audit.ts';
import { optionalReasonBody } from '../shared/schemas.ts';
import { type PurgeIdentities, RETENTION_ACTOR } from './purge-identities.ts';

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
    // The run itself is an admin action, audited like a charging pass run by hand (the destructions have theirs,
    // naming the operator and the reason given).
    passRun(
      app,
      { idempotency, audit: auditAlone(app.db) },
      {
        url: '/retention/run',
        operationId: 'runRetentionPass',
        summary: 'Run the retention pass now: destroy every erasure vault past its retainUntil',
        tags: [TAGS.adminErasures.name],
        body: RunRetentionBody,
        response: RetentionReport,
        answer: 'The pass ran: how many vaults it destroyed',
        action: 'retention.run',
        entityId: RETENTION_ACTOR,
        run: (by) => purgeExpiredIdentities(by),
      },
    );
  };
}
