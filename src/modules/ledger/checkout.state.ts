// Registration and order states (one life cycle: the customer's trip through the hosted window) and the moves between
// them (docs/architecture.md "Domain model"), as data. This is the only code that writes registrations.status and orders.status
// (test/architecture.test.ts checks it). A move is a conditional update: `fence` adds what else must still hold (the
// request's lease, no transaction attached yet); the answer says whether it moved, and the caller decides what a
// stale state means. The database adds to a move, in its transaction, whoever writes it, the registration's or order's
// merchant event (prisma/functions/events.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { leaseFreeWhere } from './lease.queries.ts';

type Tx = Pick<Prisma.TransactionClient, 'registration' | 'order'>;
export type CheckoutStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'EXPIRED' | 'NEEDS_ATTENTION';
export type CheckoutKind = 'registration' | 'order';

export const CHECKOUT_TRANSITIONS = {
  /** The customer left the window before any transaction was exchanged. */
  abandon: { from: ['PENDING'], to: 'FAILED' },
  /** The gateway approved (the key was issued, the payment confirmed), or an operator found the order paid. */
  complete: { from: ['PENDING', 'NEEDS_ATTENTION'], to: 'COMPLETED' },
  /** The gateway declined, or an operator found nothing charged. */
  fail: { from: ['PENDING', 'NEEDS_ATTENTION'], to: 'FAILED' },
  /** The state token ran out before a transaction was attached. */
  expire: { from: ['PENDING'], to: 'EXPIRED' },
  /** The outcome is unknown, or the transaction belongs to another checkout: an operator decides. */
  hold: { from: ['PENDING', 'NEEDS_ATTENTION'], to: 'NEEDS_ATTENTION' },
} as const satisfies Record<string, { from: readonly CheckoutStatus[]; to: CheckoutStatus }>;

export type CheckoutTransition = keyof typeof CHECKOUT_TRANSITIONS;

/** What a move may set besides the status: the reason, the lease released, the time it completed. */
export interface CheckoutMoveData {
  failureCode?: string | null;
  failureMessage?: string | null;
  completedAt?: Date;
  releaseLease?: boolean;
}

export interface CheckoutFence {
  leaseOwner?: string | null;
  transactionId?: null;
  /** Only when no live lease is held (a dead request's lease has run out). */
  leaseExpiredBy?: Date;
}

/**
 * Releases the lease `leaseOwner` holds on a checkout, applying `transition` when one was decided; false when the
 * lease was no longer ours.
 */
export async function releaseCheckout(
  tx: Tx,
  kind: CheckoutKind,
  id: string,
  leaseOwner: string,
  transition?: CheckoutTransition,
  data: CheckoutMoveData = {},
): Promise<boolean> {
  if (transition) return moveCheckout(tx, kind, id, transition, { fence: { leaseOwner }, data: { ...data, releaseLease: true } });
  const free = { leaseOwner: null, leaseExpiresAt: null };
  const released =
    kind === 'registration'
      ? await tx.registration.updateMany({ where: { id, leaseOwner }, data: free })
      : await tx.order.updateMany({ where: { id, leaseOwner }, data: free });
  return released.count === 1;
}

export async function moveCheckout(
  tx: Tx,
  kind: CheckoutKind,
  id: string,
  transition: CheckoutTransition,
  options: { fence?: CheckoutFence; data?: CheckoutMoveData } = {},
): Promise<boolean> {
  const { from, to } = CHECKOUT_TRANSITIONS[transition];
  const { fence = {}, data = {} } = options;
  const where = {
    id,
    status: { in: [...from] },
    ...(fence.leaseOwner !== undefined ? { leaseOwner: fence.leaseOwner } : {}),
    ...(fence.transactionId !== undefined ? { transactionId: fence.transactionId } : {}),
    ...(fence.leaseExpiredBy ? leaseFreeWhere(fence.leaseExpiredBy) : {}),
  };
  const values = {
    status: to,
    failureCode: data.failureCode,
    failureMessage: data.failureMessage,
    completedAt: data.completedAt,
    ...(data.releaseLease ? { leaseOwner: null, leaseExpiresAt: null } : {}),
  };
  const moved = kind === 'registration' ? await tx.registration.updateMany({ where, data: values }) : await tx.order.updateMany({ where, data: values });
  return moved.count === 1;
}
