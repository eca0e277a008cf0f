// "A payment needs an operator", named once: the conditions on a payment's own columns, from which both the Prisma
// filter (lists: needsAttention=true|false) and the row predicate (the public shape's `needsAttention`) are built.
// test/modules/ledger/payment.queries.test.ts checks on the migrated database that the two select the same rows.
import type { Prisma } from '../../generated/prisma/client.ts';
import { REFUND_OUTCOME_UNKNOWN, SETTLEMENT_MISMATCH } from './payment.state.ts';

/**
 * A payment-method window approved (and charged) after its subscription was cancelled: the money moved for nothing,
 * and the payment waits for an operator to refund it.
 */
export const CHARGED_AFTER_CANCEL = 'SUBSCRIPTION_CANCELED';

/**
 * Payments an operator must act on: an UNKNOWN outcome, a refund whose outcome is unknown, a charge made after its
 * subscription was cancelled that is not refunded yet, and a FAILED payment a settlement file shows approved. Each entry holds when all its columns have these values.
 * Each entry is UNKNOWN or names an attention reason: the partial index payments_waiting_for_operator (migration
 * 20261124195000) holds exactly such rows, and the lists read it only while every entry implies its predicate.
 */
const WAITING_FOR_OPERATOR = [
  { status: 'UNKNOWN' },
  { attentionReason: REFUND_OUTCOME_UNKNOWN },
  { attentionReason: CHARGED_AFTER_CANCEL, status: 'SUCCEEDED' },
  { attentionReason: SETTLEMENT_MISMATCH, status: 'FAILED' },
] as const satisfies ReadonlyArray<Prisma.PaymentWhereInput & Partial<Record<'status' | 'attentionReason', string>>>;

export const needsAttentionWhere: Prisma.PaymentWhereInput = { OR: WAITING_FOR_OPERATOR.map((condition) => ({ ...condition })) };

/**
 * Its negation, spelled so that a NULL attentionReason counts as "not this reason": SQL's NOT over a comparison with
 * NULL is NULL, so `{ NOT: needsAttentionWhere }` would leave out every payment without an attention reason.
 */
export const needsNoAttentionWhere: Prisma.PaymentWhereInput = {
  AND: WAITING_FOR_OPERATOR.map(
    (condition): Prisma.PaymentWhereInput => ({
      OR: Object.entries(condition).flatMap(([column, value]): Prisma.PaymentWhereInput[] =>
        column === 'attentionReason' ? [{ attentionReason: { not: value } }, { attentionReason: null }] : [{ [column]: { not: value } }],
      ),
    }),
  ),
};

export function paymentNeedsAttention(row: { status: string; attentionReason: string | null }): boolean {
  return WAITING_FOR_OPERATOR.some((condition) => Object.entries(condition).every(([column, value]) => row[column as keyof typeof row] === value));
}
