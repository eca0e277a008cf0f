// Write before you call, record after (DESIGN.md §3 rules 1, 3, 4): an attempt row is committed IN_FLIGHT with
// its orderId and a lease before the gateway is called, and its outcome is written afterwards, fenced on the
// row still being IN_FLIGHT under the same lease so a stale writer changes nothing.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';

type Tx = Prisma.TransactionClient;

export class StaleLeaseError extends Error {
  override name = 'StaleLeaseError';
  constructor(what: string) {
    super(`${what} is no longer held by this request; its outcome was not recorded`);
  }
}

/** Records the gateway's answer on an IN_FLIGHT attempt held by `leaseOwner`; throws StaleLeaseError otherwise. */
export async function recordAttemptOutcome(
  tx: Tx,
  input: { attemptId: string; leaseOwner: string; result: GatewayResult; now: Date },
): Promise<void> {
  const { result } = input;
  const fenced = await tx.paymentAttempt.updateMany({
    where: { id: input.attemptId, status: 'IN_FLIGHT', leaseOwner: input.leaseOwner },
    data: {
      status: result.outcome,
      leaseOwner: null,
      leaseExpiresAt: null,
      sentAt: result.reason === 'INVALID_REQUEST' ? null : input.now,
      completedAt: input.now,
      gatewayCode: result.code ?? null,
      gatewayMessage: result.message ?? result.detail ?? null,
      transactionId: result.fields.transactionId ?? null,
      approvedAt: result.outcome === 'SUCCEEDED' ? result.fields.transactionDateTime ?? input.now : null,
      rawResponse: { reason: result.reason, detail: result.detail ?? null, httpStatus: result.httpStatus ?? null, body: (result.raw ?? null) as Prisma.InputJsonValue },
    },
  });
  if (fenced.count === 0) throw new StaleLeaseError(`attempt ${input.attemptId}`);
}

/** An attempt left IN_FLIGHT past its lease by a process that died: money may have moved (rule 4). */
export async function expireAttempt(tx: Tx, attemptId: string, now: Date): Promise<boolean> {
  const expired = await tx.paymentAttempt.updateMany({
    where: { id: attemptId, status: 'IN_FLIGHT', leaseExpiresAt: { lt: now } },
    data: {
      status: 'UNKNOWN',
      leaseOwner: null,
      leaseExpiresAt: null,
      completedAt: now,
      gatewayMessage: 'the process calling the gateway stopped before recording the answer (lease expired)',
      rawResponse: { reason: 'LEASE_EXPIRED' },
    },
  });
  return expired.count === 1;
}
