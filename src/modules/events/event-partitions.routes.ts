// POST /admin/event-partitions/run (docs/production.md "Event partitions"): the partitions pass now, as the
// event-partitions plugin runs it on its own (event-partitions.ts); the run is audited as `event_partitions.run`.
// Mounted by app.ts under /admin behind the admin token; honours Idempotency-Key as every admin POST does. Works with
// SCHEDULER_ENABLED=false too, where no timer makes the months: operators who drive the passes by hand drive this one.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { named, TAGS } from '../../lib/api-document.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { passRun } from '../shared/admin-actions.ts';
import { auditAlone } from '../audit/audit.ts';
import { optionalReasonBody } from '../shared/schemas.ts';
import type { KeepEventPartitions } from './event-partitions.ts';

const RunPartitionsBody = optionalReasonBody('monthly maintenance');

const Months = (description: string) => Type.Array(Type.String({ pattern: '^\\d{4}_\\d{2}$' }), { description });
const PartitionsReport = named(
  'EventPartitionsReport',
  Type.Object(
    {
      made: Months('months made by this run (YYYY_MM), both tables'),
      dropped: Months('months dropped by this run, both tables, once wholly older than EVENT_RETENTION'),
      postponed: Type.Array(Type.String(), {
        description: 'steps left to the next run (`make YYYY_MM`, `drop`): their lock was not granted within 200 ms',
      }),
    },
    { description: 'What one partitions pass did' },
  ),
);

export function eventPartitionsRoutes(deps: { keepEventPartitions: KeepEventPartitions; idempotency: Idempotency }) {
  const { keepEventPartitions, idempotency } = deps;
  return async function registerEventPartitionsRun(app: App) {
    passRun(
      app,
      { idempotency, audit: auditAlone(app.db) },
      {
        url: '/event-partitions/run',
        operationId: 'runEventPartitionsPass',
        summary: 'Run the partitions pass now: make this month and the two after it, drop the months past EVENT_RETENTION',
        tags: [TAGS.adminCharging.name],
        body: RunPartitionsBody,
        response: PartitionsReport,
        answer: 'The pass ran: the months it made, dropped and left to the next run',
        action: 'event_partitions.run',
        entityId: 'event-partitions',
        run: () => keepEventPartitions(),
      },
    );
  };
}
