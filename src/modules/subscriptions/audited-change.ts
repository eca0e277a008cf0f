// One change of a subscription by a person (an operator, or the merchant's backend through its API): load, apply,
// and the audit entry with the shape before and after, in one transaction; answers the shape after.
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { writeAudit } from '../audit/audit.ts';
import { serializeSubscription, WITH_KEY } from './subscriptions.shape.ts';

type Tx = Prisma.TransactionClient;
export type LoadedSubscription = Prisma.SubscriptionGetPayload<{ include: typeof WITH_KEY }>;

export async function loadSubscription(tx: Tx | Db, id: string): Promise<LoadedSubscription> {
  const row = await tx.subscription.findUnique({ where: { id }, include: WITH_KEY });
  if (!row) throw new NotFoundError('Subscription');
  return row;
}

export function changeSubscription(
  db: Db,
  id: string,
  audit: { actor: string; action: string; reason: string; requestId?: string },
  apply: (tx: Tx, row: LoadedSubscription) => Promise<void>,
) {
  return db.$transaction(async (tx) => {
    const before = await loadSubscription(tx, id);
    await apply(tx, before);
    const after = await loadSubscription(tx, id);
    await writeAudit(tx, { ...audit, entityType: 'subscription', entityId: id, before: serializeSubscription(before), after: serializeSubscription(after) });
    return serializeSubscription(after);
  });
}
