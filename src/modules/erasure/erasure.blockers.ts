// What stops a customer's erasure (docs/operating.md "A customer asks to be forgotten"): anything whose outcome is still
// open, since erasing it would leave an operator unable to settle it, or would send money after the customer is gone.
// Answered as {kind, id, reason}: the erasure refuses with 409 ERASURE_BLOCKED and details.blockers; the console lists
// them in words. One statement, each part by an index (the customer's rows by userId, their payments by
// subscriptionId, oneTimeOrderId or a registration's INITIAL payment, refunds by paymentId).
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { defineError } from '../../lib/errors.ts';
import { WITHDRAWAL_REFUND_DUE } from '../ledger/refund-due.ts';

export const ErasureBlockedError = defineError('ERASURE_BLOCKED', '%s', 409);

export type BlockerKind = 'subscription' | 'payment' | 'refund' | 'registration' | 'order';

export interface ErasureBlocker {
  kind: BlockerKind;
  /** The subscription's, payment's, refund's (its attempt's), registration's or order's id. */
  id: string;
  /**
   * subscription: NOT_CANCELED (lifted by cancelOpenSubscriptions) or WITHDRAWAL_REFUND_DUE; payment: PENDING or
   * UNKNOWN; refund: PENDING or UNKNOWN; registration and order: PENDING or NEEDS_ATTENTION.
   */
  reason: string;
}

/** The blocker cancelOpenSubscriptions lifts (the subscription is canceled now, cancelReason ERASED). */
export const NOT_CANCELED = 'NOT_CANCELED';

/** The customer's payments: of their subscriptions, one-time orders, and registrations (a key-only verification charge). */
export const CUSTOMER_PAYMENTS_SQL = `
  SELECT p."id", p."transactionId", p."orderId" FROM "payments" p
   WHERE p."subscriptionId" IN (SELECT "id" FROM "subscriptions" WHERE "userId" = $1)
  UNION SELECT p."id", p."transactionId", p."orderId" FROM "payments" p
   WHERE p."oneTimeOrderId" IN (SELECT "id" FROM "orders" WHERE "userId" = $1)
  UNION SELECT p."id", p."transactionId", p."orderId" FROM "payments" p
   WHERE p."kind" = 'INITIAL' AND p."registrationId" IN (SELECT "id" FROM "registrations" WHERE "userId" = $1)`;

const BLOCKERS_SQL = `
  WITH customer_payments AS (${CUSTOMER_PAYMENTS_SQL})
  SELECT 'subscription' AS kind, s."id"::text AS id,
         CASE WHEN s."attentionReason" = $2 THEN $2 ELSE '${NOT_CANCELED}' END AS reason
    FROM "subscriptions" s WHERE s."userId" = $1 AND (s."status" <> 'CANCELED' OR s."attentionReason" = $2)
  UNION ALL
  SELECT 'payment', p."id"::text, p."status"::text FROM "payments" p
   WHERE p."id" IN (SELECT "id" FROM customer_payments) AND p."status" IN ('PENDING', 'UNKNOWN')
  UNION ALL
  SELECT 'refund', a."id"::text, CASE a."status" WHEN 'IN_FLIGHT' THEN 'PENDING' ELSE 'UNKNOWN' END FROM "payment_attempts" a
   WHERE a."paymentId" IN (SELECT "id" FROM customer_payments) AND a."operation" = 'CANCEL' AND a."status" IN ('IN_FLIGHT', 'UNKNOWN')
  UNION ALL
  SELECT 'registration', r."id"::text, r."status"::text FROM "registrations" r
   WHERE r."userId" = $1 AND r."status" IN ('PENDING', 'NEEDS_ATTENTION')
  UNION ALL
  SELECT 'order', o."id"::text, o."status"::text FROM "orders" o
   WHERE o."userId" = $1 AND o."status" IN ('PENDING', 'NEEDS_ATTENTION')
  ORDER BY 1, 2`;

/** Everything that stops the erasure of `userId` now, open subscriptions included (the caller may lift those). */
export async function findErasureBlockers(db: Db | Prisma.TransactionClient, userId: string): Promise<ErasureBlocker[]> {
  return db.$queryRawUnsafe<ErasureBlocker[]>(BLOCKERS_SQL, userId, WITHDRAWAL_REFUND_DUE);
}
