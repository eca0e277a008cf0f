// Attempt states and the moves between them (docs/architecture.md "Domain model"), as data: the only code that writes
// payment_attempts.status through Prisma (test/architecture.test.ts checks it; the one-statement charge record renders
// `answer` in SQL, payments/charge.record.ts). An attempt is created IN_FLIGHT (write before you call, docs/architecture.md, invariant 1); its
// one answer is recorded fenced on it still being IN_FLIGHT under the caller's lease (invariant 5); only the late-outcome path
// (an operator's resolve, a settlement line, a gateway's lookup: payments/payment-actions.service.ts) turns an UNKNOWN
// one into an outcome (invariant 4); a NOT_SENT one is sent again as itself, with its orderId.
// The database adds (prisma/functions/): event refunds (events.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import type { Prisma } from '../../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

export type AttemptStatus = 'IN_FLIGHT' | 'SUCCEEDED' | 'DECLINED' | 'NOT_SENT' | 'UNKNOWN';

export const ATTEMPT_TRANSITIONS = {
  /** The gateway's answer, classified (the adapter, src/gateway/gateway.ts), or NOT_SENT when the request provably never left. */
  answer: { from: ['IN_FLIGHT'], to: ['SUCCEEDED', 'DECLINED', 'NOT_SENT', 'UNKNOWN'] },
  /** Left in flight past its lease by a process that died: money may have moved. */
  expire: { from: ['IN_FLIGHT'], to: ['UNKNOWN'] },
  /** A NOT_SENT attempt sent again as itself (same row, same orderId). */
  resend: { from: ['NOT_SENT'], to: ['IN_FLIGHT'] },
  /** A late outcome settled an UNKNOWN attempt (resolve): approved, or nothing was charged (recorded as DECLINED). */
  settle: { from: ['UNKNOWN'], to: ['SUCCEEDED', 'DECLINED'] },
} as const satisfies Record<string, { from: readonly AttemptStatus[]; to: readonly AttemptStatus[] }>;

export type AttemptTransition = keyof typeof ATTEMPT_TRANSITIONS;
type To<T extends AttemptTransition> = (typeof ATTEMPT_TRANSITIONS)[T]['to'][number];

/** A new attempt: IN_FLIGHT (the column's default), committed before its call. */
export function createAttempt(tx: Tx, data: Omit<Prisma.PaymentAttemptUncheckedCreateInput, 'status'>) {
  return tx.paymentAttempt.create({ data });
}

/**
 * Moves attempt `id` by `transition` to `to`, only from the transition's states and where `fence` still holds (a
 * lease, an expiry); false when it moved nothing (another writer came first, or the fence no longer holds): the
 * caller says what that means (a lost lease, a settled refund).
 */
export async function transitionAttempt<T extends AttemptTransition>(
  tx: Tx,
  id: string,
  transition: T,
  to: To<T>,
  data: Omit<Prisma.PaymentAttemptUncheckedUpdateManyInput, 'status'> = {},
  fence: Omit<Prisma.PaymentAttemptWhereInput, 'id' | 'status'> = {},
): Promise<boolean> {
  const move = ATTEMPT_TRANSITIONS[transition];
  if (!(move.to as readonly string[]).includes(to)) throw new Error(`an attempt cannot ${transition} to ${to}`);
  const moved = await tx.paymentAttempt.updateMany({ where: { ...fence, id, status: { in: [...move.from] } }, data: { ...data, status: to } });
  return moved.count > 0;
}
