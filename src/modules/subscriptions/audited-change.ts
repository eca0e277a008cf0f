// One change of a subscription by a person (an operator, the merchant's backend through its API, or the customer in
// the portal): lock, load, apply, and the audit entry with the shape before and after, in one transaction; answers the
// shape after. The row is locked before it is read, so two changes of one subscription apply one after the other, each
// deciding on the state the other left (a customer's double submit acts once). The shape after is read in one
// statement (readSubscriptionInTransaction; its twin test in subscriptions.routes.test.ts).
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { customerOfActor, writeAudit } from '../audit/audit.ts';
import { readSubscriptionInTransaction } from './subscriptions.read.ts';
import { serializeSubscription, WITH_KEY } from './subscriptions.shape.ts';

type Tx = Prisma.TransactionClient;
export type LoadedSubscription = Prisma.SubscriptionGetPayload<{ include: typeof WITH_KEY }>;

export async function loadSubscription(tx: Tx | Db, id: string): Promise<LoadedSubscription> {
  const row = await tx.subscription.findUnique({ where: { id }, include: WITH_KEY });
  if (!row) throw new NotFoundError('Subscription');
  return row;
}

/**
 * A customer's change (the portal: actor `customer:<userId>`) applies only to a subscription still theirs, read under
 * its row lock: the ownership the request checked before may have ended since (the customer's erasure gave the row the
 * pseudonym, docs/operating.md "A customer asks to be forgotten"), and the change would then write the old userId
 * back into the audit trail. Answered as the page answers another customer's subscription: 404.
 */
export function checkStillOwned(row: { userId: string }, actor: string): void {
  const customer = customerOfActor(actor);
  if (customer !== undefined && row.userId !== customer) throw new NotFoundError('Subscription');
}

/** Locks the subscription's row for the rest of the transaction (nothing when there is none: the load says 404). */
export async function lockSubscription(tx: Tx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT "id" FROM "subscriptions" WHERE "id" = ${id}::uuid FOR UPDATE`;
}

/** `apply` answers 'unchanged' when there was nothing to do: then nothing is written, no audit entry either. */
export function changeSubscription(
  db: Db,
  id: string,
  audit: { actor: string; action: string; reason: string; requestId?: string; portalSessionId?: string },
  apply: (tx: Tx, row: LoadedSubscription) => Promise<unknown>,
) {
  return db.$transaction(async (tx) => {
    await lockSubscription(tx, id);
    const before = await loadSubscription(tx, id);
    checkStillOwned(before, audit.actor);
    if ((await apply(tx, before)) === 'unchanged') return serializeSubscription(before);
    const after = await readSubscriptionInTransaction(tx, id);
    await writeAudit(tx, { ...audit, entityType: 'subscription', entityId: id, before: serializeSubscription(before), after: serializeSubscription(after) });
    return serializeSubscription(after);
  });
}
