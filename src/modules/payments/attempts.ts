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

export interface PreparedAttempt {
  /** Undefined when no call may be made: an earlier outcome is unknown and allowAfterUnknown is false. */
  attemptId: string | undefined;
  /** The orderId the call must carry (a NOT_SENT attempt keeps its own). */
  orderId: string | undefined;
  /** An earlier attempt's outcome is unknown (money may have moved): a decline now proves nothing. */
  hadUnknown: boolean;
  /** A dead process's IN_FLIGHT attempt was just turned UNKNOWN by this call. */
  expiredInFlight: boolean;
}

/**
 * The IN_FLIGHT attempt a call is about to make for `paymentId` (rule 1). An attempt left IN_FLIGHT past its
 * lease becomes UNKNOWN first (rule 4). When any attempt is UNKNOWN, no new call is prepared unless
 * `allowAfterUnknown` (only a key-issuance replay, which the gateway's single-use window transaction makes
 * safe). A NOT_SENT attempt is sent again as the same row with the same orderId; otherwise a new attempt is
 * numbered after the last.
 */
export async function prepareAttempt(
  tx: Tx,
  input: {
    paymentId: string;
    operation: 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'PAYMENT_CONFIRM' | 'CANCEL';
    /** The attempt's orderId, or a function of its attempt number (billing charges: rule 2). */
    orderId: string | ((attemptNumber: number) => string);
    amount: number;
    leaseOwner: string;
    leaseExpiresAt: Date;
    now: Date;
    allowAfterUnknown: boolean;
  },
): Promise<PreparedAttempt> {
  let latest = await tx.paymentAttempt.findFirst({ where: { paymentId: input.paymentId }, orderBy: { attemptNumber: 'desc' } });
  let expiredInFlight = false;
  if (latest?.status === 'IN_FLIGHT' && (await expireAttempt(tx, latest.id, input.now))) {
    expiredInFlight = true;
    await tx.payment.update({ where: { id: input.paymentId }, data: { status: 'UNKNOWN', attentionReason: 'LEASE_EXPIRED' } });
    latest = await tx.paymentAttempt.findUniqueOrThrow({ where: { id: latest.id } });
  }
  const hadUnknown = (await tx.paymentAttempt.count({ where: { paymentId: input.paymentId, status: 'UNKNOWN' } })) > 0;
  if (hadUnknown && !input.allowAfterUnknown) return { attemptId: undefined, orderId: undefined, hadUnknown, expiredInFlight };
  if (latest?.status === 'NOT_SENT') {
    await tx.paymentAttempt.update({ where: { id: latest.id }, data: { status: 'IN_FLIGHT', leaseOwner: input.leaseOwner, leaseExpiresAt: input.leaseExpiresAt } });
    return { attemptId: latest.id, orderId: latest.orderId, hadUnknown, expiredInFlight };
  }
  const attemptNumber = (latest?.attemptNumber ?? 0) + 1;
  const orderId = typeof input.orderId === 'function' ? input.orderId(attemptNumber) : input.orderId;
  const attempt = await tx.paymentAttempt.create({
    data: {
      paymentId: input.paymentId,
      attemptNumber,
      operation: input.operation,
      orderId,
      amount: input.amount,
      leaseOwner: input.leaseOwner,
      leaseExpiresAt: input.leaseExpiresAt,
    },
  });
  await tx.payment.update({ where: { id: input.paymentId }, data: { attemptCount: { increment: 1 }, orderId } });
  return { attemptId: attempt.id, orderId, hadUnknown, expiredInFlight };
}
