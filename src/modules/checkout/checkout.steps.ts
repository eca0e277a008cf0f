// The steps every browser redirect of a registration or an order shares (docs/api.md "Registrations and orders"), each a
// plain function that the use cases call in order (registrations/complete-registration.ts, orders/complete-order.ts):
// load by state, decide (pure: decideSuccess), write the attempt, call the gateway, classify and record
// (recordOrUnknown, with checkout.outcomes.ts), answer. A checkout that is not theirs to complete answers with
// holdForOperator (a transaction another checkout holds: transactionHeldElsewhere) or pendingAnswer (another request is
// completing it: waitForLease first). The database reads are here; checkout.result.ts is the answers alone.
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { Clock } from '../../lib/clock.ts';
import { isUniqueViolation } from '../../lib/errors.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import { moveCheckout, type CheckoutKind, type CheckoutMoveData } from '../ledger/checkout.state.ts';
import { failure, precheckRedirect, type CheckoutIds, type CheckoutResult } from './checkout.result.ts';

/** What the gateway's redirect carries (query string or form). */
export interface RedirectInput {
  state?: string;
  transactionId?: string;
  code?: string;
  message?: string;
  orderId?: string;
  amount?: string;
}

/** What the steps read of a registration or an order. */
export interface CheckoutRow {
  id: string;
  status: string;
  orderId: string;
  transactionId: string | null;
  expiresAt: Date;
  leaseOwner: string | null;
  returnUrl: string | null;
}

/** The lease a request takes on the checkout it completes (and its attempt's), with the time it was taken. */
export interface CheckoutLease {
  leaseOwner: string;
  leaseExpiresAt: Date;
  now: Date;
}

export type SuccessDecision =
  /** A finished checkout's answer (a replay calls nothing), or a redirect refused before anything is written. */
  | { next: 'answer'; answer: CheckoutResult }
  /** The state ran out before a transaction was attached: expire the checkout, then answer. */
  | { next: 'expire'; answer: CheckoutResult }
  /** The window answered a code other than SUCCESS: the fail route's path. */
  | { next: 'window-failed' }
  /** Claim the checkout and send this transaction to the gateway. */
  | { next: 'send'; transactionId: string };

/**
 * What a success redirect does, decided from the checkout as read and the redirect alone (pure). `settled` is the
 * checkout's own answer when it is finished (or busy); `refused` a refusal of its own (an order's amount).
 */
export function decideSuccess(
  kind: CheckoutKind,
  row: CheckoutRow,
  input: RedirectInput,
  now: Date,
  own: { ids: CheckoutIds; settled: CheckoutResult | undefined; refused?: CheckoutResult; transactionIdBytes?: number },
): SuccessDecision {
  if (own.settled) return { next: 'answer', answer: own.settled };
  if (row.status === 'PENDING' && row.transactionId === null && row.expiresAt <= now) {
    return { next: 'expire', answer: failure('STATE_EXPIRED', `This ${kind} has expired; ask for a new one`, own.ids) };
  }
  if (input.code !== undefined && input.code !== 'SUCCESS') return { next: 'window-failed' };
  const refused = precheckRedirect(row, input, own.ids, own.transactionIdBytes) ?? own.refused;
  if (refused) return { next: 'answer', answer: refused };
  return { next: 'send', transactionId: input.transactionId! };
}

/** What a window failure writes on its checkout, and answers. */
export function windowFailure(input: RedirectInput): CheckoutMoveData {
  return { failureCode: 'WINDOW_FAILED', failureMessage: `${input.code ?? ''} ${input.message ?? ''}`.trim().slice(0, 500) };
}

export function windowFailedAnswer(input: RedirectInput, ids: CheckoutIds): CheckoutResult {
  return failure('WINDOW_FAILED', input.message ?? 'The customer did not complete the payment window', { ...ids, gatewayCode: input.code });
}

/** A checkout that is neither finished nor ours to complete answers by its state. */
export function pendingAnswer(kind: CheckoutKind, row: CheckoutRow, ids: CheckoutIds): CheckoutResult {
  if (row.status === 'NEEDS_ATTENTION') return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', ids);
  if (row.leaseOwner !== null) return failure('STATE_CONFLICT', `The ${kind} is still being completed; try again shortly`, ids);
  return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', ids);
}

/**
 * A window transaction belongs to one checkout. When another registration or order already holds this one, the
 * redirect carries someone else's transaction: sending it again proves nothing (the gateway refuses a used
 * transaction, even when the first use charged the customer), so nothing is sent, and the checkout waits for an
 * operator (issue #12). The unique indexes on both tables' transactionId catch two redirects racing.
 */
export async function transactionHeldElsewhere(
  db: Pick<Db, 'registration' | 'order'>,
  transactionId: string,
  self: { registrationId?: string; orderId?: string },
): Promise<boolean> {
  const [registration, order] = await Promise.all([
    db.registration.findFirst({ where: { transactionId, id: { not: self.registrationId } }, select: { id: true } }),
    db.order.findFirst({ where: { transactionId, id: { not: self.orderId } }, select: { id: true } }),
  ]);
  return registration !== null || order !== null;
}

export const TRANSACTION_ELSEWHERE = {
  code: 'TRANSACTION_ELSEWHERE',
  message: 'This transaction was already sent for another checkout; an operator will resolve it',
} as const;

/**
 * Polls until `done(row)` or the time is up; returns the last row read. Real time on purpose: this bounds how
 * long a browser waits, which a frozen simulated clock must not stretch forever.
 */
export async function waitForLease<T>(read: () => Promise<T>, done: (row: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let row = await read();
  while (!done(row) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    row = await read();
  }
  return row;
}

/** Someone else's transaction reached this checkout: nothing is sent, an operator decides (transactionHeldElsewhere). */
export async function holdForOperator(db: Db, log: Pick<Logger, 'warn'>, kind: CheckoutKind, id: string, ids: CheckoutIds): Promise<CheckoutResult> {
  await moveCheckout(db, kind, id, 'hold', {
    fence: { leaseOwner: null },
    data: { failureCode: TRANSACTION_ELSEWHERE.code, failureMessage: TRANSACTION_ELSEWHERE.message },
  });
  log.warn({ kind, id }, 'redirect carried a transaction another checkout holds; waiting for an operator');
  return failure('PAYMENT_OUTCOME_UNKNOWN', TRANSACTION_ELSEWHERE.message, ids);
}

/**
 * A claim's transaction, or 'ELSEWHERE' when the unique index on transactionId refused it: a concurrent redirect
 * attached the same transaction to another checkout (holdForOperator).
 */
export async function unlessAttachedElsewhere<T>(claim: Promise<T>): Promise<T | 'ELSEWHERE'> {
  try {
    return await claim;
  } catch (error) {
    if (isUniqueViolation(error)) return 'ELSEWHERE';
    throw error;
  }
}

/**
 * Records the gateway's answer with ledger/gateway-call.ts's recordAnswer, the one helper that keeps the
 * invariants of a gateway call's record: in one transaction, the attempt's outcome fenced on it still being IN_FLIGHT
 * under our lease (none for a key-only issuance, which charges nothing that stays), then `record`, the use case's
 * step, fenced in turn on the checkout's lease. When that cannot be written (a lease lost mid-call, a database error)
 * money may have moved: nothing is guessed, the attempt stays IN_FLIGHT for the sweeper to turn UNKNOWN, the answer
 * is logged there, and the customer is told PAYMENT_OUTCOME_UNKNOWN.
 */
export async function recordOrUnknown(
  deps: { db: Db; clock: Clock; log: Pick<Logger, 'error'> },
  call: { attemptId: string | undefined; leaseOwner: string },
  result: GatewayResult,
  record: (tx: Prisma.TransactionClient, now: Date) => Promise<CheckoutResult>,
  ids: CheckoutIds,
): Promise<CheckoutResult> {
  const answer = await recordAnswer(deps, call, result, record);
  if ('recorded' in answer) return answer.recorded;
  return failure('PAYMENT_OUTCOME_UNKNOWN', 'The outcome could not be recorded; an operator will resolve it', ids);
}
