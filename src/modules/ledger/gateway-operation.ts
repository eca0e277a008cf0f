// The one gateway-operation engine (DESIGN.md §3 rules 1, 3, 4, 5; issue #12): every call that can move money (key
// issuance, payment confirmation, billing charge, cancellation) runs through here:
// 1. `prepare`, the caller's one short transaction: its rules, its owner's lease, and the attempt committed IN_FLIGHT
//    with its deterministic orderId and a lease (write before you call) — or an answer without a call;
// 2. the call, with no transaction open; the gateway client classifies its outcome (gateway/client.ts);
// 3. one transaction that records the attempt's outcome fenced on it still being IN_FLIGHT under our lease, and
//    hands the outcome to the caller's domain step (`record`), fenced in turn on the owner's lease;
// 4. when that write fails (a lease lost mid-call, a database error) the call was sent and money may have moved:
//    nothing is guessed, the attempt stays IN_FLIGHT for the sweeper (attempts.ts), and `unrecorded` answers.
// Callers keep only their own rules.
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { Clock } from '../../lib/clock.ts';
import { recordAttemptOutcome, StaleLeaseError } from './attempts.ts';

type Tx = Prisma.TransactionClient;

/** What a prepared call carries for the engine: its attempt (none for a key-only issuance) and the lease holding it. */
export interface PreparedCall {
  attemptId: string | undefined;
  leaseOwner: string;
}

export interface GatewayOperation<P extends PreparedCall, A> {
  prepare(): Promise<{ ready: P } | { done: A }>;
  call(prepared: P): Promise<GatewayResult>;
  record(tx: Tx, prepared: P, result: GatewayResult, now: Date): Promise<A>;
  /**
   * Optionally, the whole record in one statement (attempt, then the caller's step, fenced on both leases as
   * above): answers undefined when it does not apply, and the transaction below runs instead.
   */
  recordAtOnce?(prepared: P, result: GatewayResult, now: Date): Promise<A | undefined>;
  unrecorded(prepared: P, result: GatewayResult, reason: 'LEASE_LOST' | 'RECORD_FAILED'): A | Promise<A>;
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

export function createGatewayOperations(deps: { db: Db; clock: Clock; log: Pick<Logger, 'error'> }) {
  const { db, clock, log } = deps;
  return async function run<P extends PreparedCall, A>(operation: GatewayOperation<P, A>): Promise<A> {
    const prepared = await operation.prepare();
    if ('done' in prepared) return prepared.done;
    const { ready } = prepared;
    const result = await operation.call(ready);
    try {
      const atOnce = await operation.recordAtOnce?.(ready, result, clock.now());
      if (atOnce !== undefined) return atOnce;
      return await db.$transaction(async (tx) => {
        const now = clock.now();
        if (ready.attemptId) await recordAttemptOutcome(tx, { attemptId: ready.attemptId, leaseOwner: ready.leaseOwner, result, now });
        return operation.record(tx, ready, result, now);
      });
    } catch (error) {
      const reason = error instanceof StaleLeaseError ? 'LEASE_LOST' : 'RECORD_FAILED';
      // The real answer, so an operator can resolve the attempt the sweeper will turn UNKNOWN.
      log.error(
        {
          attemptId: ready.attemptId,
          operation: result.operation,
          outcome: result.outcome,
          transactionId: result.fields.transactionId,
          reason,
          ...(reason === 'RECORD_FAILED' ? { err: error } : {}),
        },
        'the gateway answered but the answer could not be recorded',
      );
      return operation.unrecorded(ready, result, reason);
    }
  };
}

export type RunGatewayOperation = ReturnType<typeof createGatewayOperations>;
