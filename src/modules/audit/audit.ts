// The audit trail: every admin action writes who (token name or fingerprint), what, why (the caller's
// reason), and the entity before and after, in the same transaction as the change, so there is no change without
// its event and no event without its change.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';

export interface AuditInput {
  actor: string;
  action: string;
  entityType: 'subscription' | 'payment' | 'scheduler' | 'clock' | 'settlement_import' | 'erasure';
  entityId: string;
  reason: string;
  before?: unknown;
  after?: unknown;
  requestId?: string;
  /** A customer's action in the portal: the portal session it came through, kept in the entry's `after`. */
  portalSessionId?: string;
}

export async function writeAudit(tx: Prisma.TransactionClient, input: AuditInput): Promise<void> {
  await tx.auditEvent.create({
    data: {
      actor: input.actor,
      action: input.action,
      entityType: input.entityType,
      entityId: input.entityId,
      reason: input.reason,
      before: (input.before ?? undefined) as Prisma.InputJsonValue | undefined,
      after: (input.portalSessionId ? { ...(input.after as object | undefined), portalSessionId: input.portalSessionId } : (input.after ?? undefined)) as
        | Prisma.InputJsonValue
        | undefined,
      requestId: input.requestId,
    },
  });
}

/** An entry in a transaction of its own: for an action whose writes are committed apart (a pass run by hand). */
export const auditAlone =
  (db: Db) =>
  (input: AuditInput): Promise<void> =>
    db.$transaction((tx) => writeAudit(tx, input));

/** A customer acting in the portal is audited as `customer:<userId>` (portal/portal-actions.ts customerActor). */
export const CUSTOMER_ACTOR_PREFIX = 'customer:';

/** The userId of a customer's actor; undefined for anyone else (an operator, the merchant, the service). */
export const customerOfActor = (actor: string): string | undefined =>
  actor.startsWith(CUSTOMER_ACTOR_PREFIX) ? actor.slice(CUSTOMER_ACTOR_PREFIX.length) : undefined;

/** Who asked, and why, as the services receive it from the routes (a customer's: `customer:<userId>`, its portal session). */
export interface Actor {
  actor: string;
  reason: string;
  requestId?: string;
  portalSessionId?: string;
}
