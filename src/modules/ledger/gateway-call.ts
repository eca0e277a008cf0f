// The record half of every gateway call that can move money (docs/architecture.md, invariants 1, 3, 4, 5): key issuance, payment
// confirmation, billing charge, cancellation. Each use case reads top-down: load, decide (pure), write the attempt
// IN_FLIGHT with its deterministic orderId and a lease (ledger/attempts.ts; write before you call), call the gateway
// with no transaction open (the adapter classifies the outcome: src/gateway/gateway.ts), then recordAnswer below: the attempt's outcome
// fenced on its lease and the use case's own write, in one transaction. When that fails (a lease lost mid-call, a
// database error) the call was sent and money may have moved: nothing is guessed, the attempt stays IN_FLIGHT for
// the sweeper (attempts.ts turns it UNKNOWN), and the use case answers that the outcome is unknown.
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { Clock } from '../../lib/clock.ts';
import { recordAttemptOutcome, StaleLeaseError } from './attempts.ts';

type Tx = Prisma.TransactionClient;

/** What a prepared call carries: its attempt (none for a key-only issuance) and the lease holding it. */
export interface PreparedCall {
  attemptId: string | undefined;
  leaseOwner: string;
}

/** Why a gateway's answer could not be recorded: our lease was gone, or the write failed. */
export type UnrecordedReason = 'LEASE_LOST' | 'RECORD_FAILED';

/**
 * The record half of every gateway call, after the attempt was committed IN_FLIGHT and the call made: in one
 * transaction, the attempt's outcome (fenced on it still being IN_FLIGHT under `leaseOwner`) and the caller's `write`
 * of what the outcome means (fenced in turn on the caller's own lease). `atOnce`, when given, is the same record
 * rendered in one statement: it answers undefined when it does not apply, and the transaction runs instead. When the
 * record fails the call was sent and money may have moved: nothing is guessed, the attempt stays IN_FLIGHT for the
 * sweeper (attempts.ts), the real answer is logged for the operator, and `unrecorded` says why.
 */
export async function recordAnswer<A>(
  deps: { db: Db; clock: Clock; log: Pick<Logger, 'error'> },
  call: PreparedCall,
  result: GatewayResult,
  write: (tx: Tx, now: Date) => Promise<A>,
  atOnce?: (now: Date) => Promise<A | undefined>,
): Promise<{ recorded: A } | { unrecorded: UnrecordedReason }> {
  const { db, clock, log } = deps;
  try {
    const once = await atOnce?.(clock.now());
    if (once !== undefined) return { recorded: once };
    return {
      recorded: await db.$transaction(async (tx) => {
        const now = clock.now();
        if (call.attemptId) await recordAttemptOutcome(tx, { attemptId: call.attemptId, leaseOwner: call.leaseOwner, result, now });
        return write(tx, now);
      }),
    };
  } catch (error) {
    const reason: UnrecordedReason = error instanceof StaleLeaseError ? 'LEASE_LOST' : 'RECORD_FAILED';
    log.error(
      {
        attemptId: call.attemptId,
        operation: result.operation,
        outcome: result.outcome,
        transactionId: result.fields.transactionId,
        reason,
        ...(reason === 'RECORD_FAILED' ? { err: error } : {}),
      },
      'the gateway answered but the answer could not be recorded',
    );
    return { unrecorded: reason };
  }
}
