// The merchant records the customer's first use of what they subscribed to (POST /api/v1/subscriptions/:id/usage):
// from then on the customer may no longer withdraw (청약철회, payments/withdraw.ts). The first time recorded stands.
// The database adds (prisma/functions/): subscription.updated when usageStartedAt is first set (events.sql).
import { ValidationError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { changeSubscription } from './audited-change.ts';

export function createUsage(deps: Pick<ServiceDeps, 'db' | 'clock'>) {
  const { db, clock } = deps;

  /**
   * Records first use at `at` (default now; never in the future: 400), audited with the API key's name. A second call
   * keeps the first time and writes nothing.
   */
  async function recordUsage(id: string, input: { at?: string }, actor: string, requestId?: string) {
    const now = clock.now();
    const at = input.at ? new Date(input.at) : now;
    if (at > now) throw new ValidationError('at must not be in the future');
    return changeSubscription(db, id, { actor, action: 'subscription.usage', reason: 'usage started', requestId }, async (tx, row) => {
      if (row.usageStartedAt !== null) return 'unchanged';
      await tx.subscription.update({ where: { id }, data: { usageStartedAt: at } });
    });
  }

  return { recordUsage };
}
