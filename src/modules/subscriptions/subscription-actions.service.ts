// Operators' actions on subscriptions (DESIGN.md §5 admin routes): list, pause, resume, cancel and change terms
// (charge now is the charging engine's: payments/charge-now.ts). Each change and its audit event share a transaction.
import type { Config } from '../../config.ts';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { NotFoundError, StateConflictError } from '../../lib/errors.ts';
import { validateTerms } from '../shared/terms.ts';
import { scheduleAfterResume } from '../ledger/schedule.rules.ts';
import { applyCancel, serializeSubscription, WITH_KEY } from './subscriptions.service.ts';
import { pageSubscriptions, readSubscription, type SubscriptionFilter } from './subscriptions.read.ts';
import { applyPriceChange } from './lifecycle.service.ts';
import { transitionSubscription } from '../ledger/subscription.state.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';

type Tx = Prisma.TransactionClient;

export function createSubscriptionActions(deps: { db: Db; clock: Clock; config: Config }) {
  const { db, clock, config } = deps;
  const zone = config.timezone;

  async function load(tx: Tx | Db, id: string) {
    const row = await tx.subscription.findUnique({ where: { id }, include: WITH_KEY });
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }

  async function listSubscriptions(filter: SubscriptionFilter) {
    const page = await pageSubscriptions(db, filter);
    return { items: page.items.map(serializeSubscription), nextCursor: page.nextCursor };
  }

  /** One change: load, apply, audit with before and after, in one transaction. */
  async function change(id: string, who: Actor, action: string, apply: (tx: Tx, row: Awaited<ReturnType<typeof load>>) => Promise<void>) {
    return db.$transaction(async (tx) => {
      const before = await load(tx, id);
      await apply(tx, before);
      const after = await load(tx, id);
      await writeAudit(tx, {
        ...who,
        action,
        entityType: 'subscription',
        entityId: id,
        before: serializeSubscription(before),
        after: serializeSubscription(after),
      });
      return serializeSubscription(after);
    });
  }

  const pause = (id: string, who: Actor) =>
    change(id, who, 'subscription.pause', async (tx) => {
      await transitionSubscription(tx, id, 'pause', { pausedAt: clock.now(), nextChargeAt: null, changedAt: clock.now() });
    });

  /** Resume: the schedule starts again where the scheduling rules say (scheduleAfterResume), never back-charged. */
  const resume = (id: string, who: Actor) =>
    change(id, who, 'subscription.resume', async (tx, row) => {
      await transitionSubscription(tx, id, 'resume', { ...scheduleAfterResume(row, clock.now(), zone), pausedAt: null, changedAt: clock.now() });
    });

  const cancel = (id: string, options: { atPeriodEnd: boolean }, who: Actor) =>
    change(id, who, options.atPeriodEnd ? 'subscription.cancel_at_period_end' : 'subscription.cancel', (tx) =>
      applyCancel(tx, id, { atPeriodEnd: options.atPeriodEnd, reason: 'CANCELED_BY_OPERATOR', now: clock.now() }),
    );

  /**
   * New terms from the next cycle: a payment already started keeps its amount. The amount follows the price-change
   * rule (applyPriceChange: an increase waits for the customer's consent; MOBILE only through a new payment method).
   */
  const update = (id: string, input: { amount?: number; orderName?: string }, who: Actor) =>
    change(id, who, 'subscription.update', async (tx, row) => {
      if (row.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription cannot change');
      if (input.amount !== undefined) await applyPriceChange(tx, row, input.amount, { config, now: clock.now() });
      if (input.orderName !== undefined) {
        validateTerms({ method: row.method, amount: row.amount, orderName: input.orderName, itemCode: row.itemCode ?? undefined }, config, { recurring: true });
        await tx.subscription.update({ where: { id }, data: { orderName: input.orderName } });
      }
    });

  return {
    listSubscriptions,
    getSubscription: async (id: string) => serializeSubscription(await readSubscription(db, id)),
    pause,
    resume,
    cancel,
    update,
  };
}

export type SubscriptionActions = ReturnType<typeof createSubscriptionActions>;
