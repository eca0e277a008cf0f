// Pausing and resuming a subscription (POST /admin/subscriptions/:id/pause|resume): nothing is charged while it is
// paused, and a resume starts the schedule again where the scheduling rules say, never back-charging the pause.
// The database adds (prisma/functions/): subscription.updated (events.sql), a CHURN or REACTIVATION movement (mrr.sql).
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import { scheduleAfterResume } from '../ledger/schedule.rules.ts';
import { transitionSubscription } from '../ledger/subscription.state.ts';
import type { Actor } from '../audit/audit.ts';
import { changeSubscription } from './audited-change.ts';

export function createPauseResume(deps: { db: Db; clock: Clock; timezone: string }) {
  const { db, clock, timezone } = deps;

  const pause = (id: string, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.pause' }, async (tx) => {
      await transitionSubscription(tx, id, 'pause', { pausedAt: clock.now(), nextChargeAt: null, changedAt: clock.now() });
    });

  const resume = (id: string, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.resume' }, async (tx, row) => {
      await transitionSubscription(tx, id, 'resume', { ...scheduleAfterResume(row, clock.now(), timezone), pausedAt: null, changedAt: clock.now() });
    });

  return { pause, resume };
}
