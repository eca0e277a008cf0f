// Subscription states and the moves between them (DESIGN.md §4). A move is a conditional update that fails on a
// stale state, so two writers can never both apply a transition.
import type { Prisma } from '../../generated/prisma/client.ts';
import { StateConflictError } from '../../lib/errors.ts';

export type SubscriptionStatus = 'ACTIVE' | 'PAST_DUE' | 'PAUSED' | 'CANCELED';

export const SUBSCRIPTION_TRANSITIONS = {
  decline: { from: ['ACTIVE', 'PAST_DUE'], to: 'PAST_DUE' },
  recover: { from: ['ACTIVE', 'PAST_DUE'], to: 'ACTIVE' },
  pause: { from: ['ACTIVE', 'PAST_DUE'], to: 'PAUSED' },
  resume: { from: ['PAUSED'], to: 'ACTIVE' },
  cancel: { from: ['ACTIVE', 'PAST_DUE', 'PAUSED'], to: 'CANCELED' },
} as const satisfies Record<string, { from: readonly SubscriptionStatus[]; to: SubscriptionStatus }>;

export type SubscriptionTransition = keyof typeof SUBSCRIPTION_TRANSITIONS;

export async function transitionSubscription(
  tx: Prisma.TransactionClient,
  id: string,
  transition: SubscriptionTransition,
  data: Prisma.SubscriptionUpdateManyMutationInput = {},
): Promise<void> {
  const { from, to } = SUBSCRIPTION_TRANSITIONS[transition];
  const result = await tx.subscription.updateMany({
    where: { id, status: { in: [...from] } },
    data: { ...data, status: to },
  });
  if (result.count === 0) {
    const current = await tx.subscription.findUnique({ where: { id }, select: { status: true } });
    throw new StateConflictError(`Subscription cannot ${transition} from ${current?.status ?? 'a missing state'}`);
  }
}
