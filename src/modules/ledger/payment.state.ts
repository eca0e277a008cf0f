// Payment states and the moves between them (docs/architecture.md "Domain model"), as data. This is the only code that writes
// payments.status through Prisma (test/architecture.test.ts checks it; the one-statement charge record,
// payments/charge.record.ts, renders `succeed` in SQL): a move is a conditional update that fails with
// STATE_CONFLICT on a stale state, so two writers can never both apply one.
// The database adds to a move, in its transaction, whoever writes it (prisma/functions/): the merchant event (events.sql),
// the revenue and recovery roll-ups (report-rollups.sql), a settlement queue row (settlement-queue.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { applyMove } from './state-moves.ts';

/** A payment's attention reason while a refund of it has an unknown outcome (the payment itself stays SUCCEEDED). */
export const REFUND_OUTCOME_UNKNOWN = 'REFUND_OUTCOME_UNKNOWN';

/**
 * A payment's attention reason while a settlement file shows approved what we hold as FAILED: its subscription is not
 * charged again until an operator resolves it (SUCCEEDED with the file's transactionId, or FAILED: our record stands).
 */
export const SETTLEMENT_MISMATCH = 'SETTLEMENT_MISMATCH';

export type PaymentStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'UNKNOWN' | 'CANCELED';

/**
 * The statuses of a payment that counts as paid: SUCCEEDED, or CANCELED after its approval (refunded later, it still
 * was paid). The SQL twin is counts_as_paid (prisma/functions/common.sql), which the reports and the reconciliation use;
 * test/db/function-files.test.ts holds the two equal.
 */
export const PAID_STATUSES: readonly PaymentStatus[] = ['SUCCEEDED', 'CANCELED'];

export const PAYMENT_TRANSITIONS = {
  /** A call is about to go out: a new cycle's payment, a retry of a FAILED one, or a NOT_SENT one sent again. */
  send: { from: ['PENDING', 'FAILED'], to: 'PENDING' },
  /** The gateway approved, or an operator found the UNKNOWN payment approved. */
  succeed: { from: ['PENDING', 'UNKNOWN'], to: 'SUCCEEDED' },
  /** The gateway declined, or an operator found nothing charged. */
  fail: { from: ['PENDING', 'UNKNOWN'], to: 'FAILED' },
  /** The answer is unknown, or the process calling the gateway died (again, on a replay). */
  lose: { from: ['PENDING', 'UNKNOWN'], to: 'UNKNOWN' },
  /** An operator confirmed the approval that a settlement file shows for a payment we held as FAILED. */
  settle: { from: ['FAILED'], to: 'SUCCEEDED' },
  /** Refunded in full. */
  refund: { from: ['SUCCEEDED'], to: 'CANCELED' },
} as const satisfies Record<string, { from: readonly PaymentStatus[]; to: PaymentStatus }>;

export type PaymentTransition = keyof typeof PAYMENT_TRANSITIONS;

export async function transitionPayment(
  tx: Prisma.TransactionClient,
  id: string,
  transition: PaymentTransition,
  data: Omit<Prisma.PaymentUncheckedUpdateManyInput, 'status'> = {},
): Promise<void> {
  await applyMove(
    'Payment',
    transition,
    PAYMENT_TRANSITIONS[transition],
    (from, to) => tx.payment.updateMany({ where: { id, status: { in: from } }, data: { ...data, status: to } }),
    () => tx.payment.findUnique({ where: { id }, select: { status: true } }),
  );
}
