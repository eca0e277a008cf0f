// The one checkout flow (issue #12): what every success and fail redirect of a registration or an order goes
// through, in this order, before and around its one gateway call:
// - the single-use `state` finds the checkout; a finished one answers as before (a replay calls nothing);
// - a state that ran out before a transaction was attached expires; a window code other than SUCCESS is a fail;
// - the redirect's echoes are checked (checkout.result.ts), and the kind's own checks (an order's amount) run;
// - a transaction another checkout holds is never sent again: the checkout waits for an operator;
// - the checkout's lease is taken (its attempt written before the call, by the kind's `claim`); a concurrent request
//   waits for the holder's answer and gives the same one;
// - the call and the kind's `record`, through the one gateway-operation engine (payments/gateway-operation.ts); an
//   answer that could not be recorded answers PAYMENT_OUTCOME_UNKNOWN.
// Registrations and orders keep only their own rules: what they claim, call and record, and how they answer.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../db/prisma.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { Clock } from '../../lib/clock.ts';
import { isUniqueViolation } from '../../lib/errors.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { createGatewayOperations } from '../ledger/gateway-operation.ts';
import { failure, precheckRedirect, TRANSACTION_ELSEWHERE, transactionHeldElsewhere, waitForLease, type CheckoutResult } from './checkout.result.ts';
import { moveCheckout, type CheckoutFence, type CheckoutKind } from '../ledger/checkout.state.ts';

export interface RedirectInput {
  state?: string;
  transactionId?: string;
  code?: string;
  message?: string;
  orderId?: string;
  amount?: string;
}

/** What the flow reads of a registration or an order. */
export interface CheckoutRow {
  id: string;
  status: string;
  orderId: string;
  transactionId: string | null;
  expiresAt: Date;
  leaseOwner: string | null;
  returnUrl: string | null;
}

export interface CheckoutKindSpec<Row extends CheckoutRow, Claim> {
  kind: CheckoutKind;
  findByState(state: string): Promise<Row | null>;
  /** The ids every answer about this checkout carries. */
  ids(row: Row): { registrationId?: string; orderId?: string; paymentId?: string; returnUrl?: string | null };
  /** A finished (or waiting) checkout's answer, so a replay gives the same one; undefined when a request may go on. */
  settled(row: Row): CheckoutResult | undefined;
  /** What a window failure may not overtake (a registration: an attached transaction; an order: a lease). */
  abandonFence: CheckoutFence;
  /** The kind's own refusals before anything is claimed (an order's amount). */
  check?(row: Row, input: RedirectInput): CheckoutResult | undefined;
  /** Takes the lease and writes the attempt before the call; undefined when another request holds the lease. */
  claim(row: Row, transactionId: string, leaseOwner: string, now: Date): Promise<Claim | undefined>;
  /** The attempt the claim wrote (none for a key-only issuance, which charges nothing that stays). */
  attemptOf(claim: Claim): string | undefined;
  call(row: Row, transactionId: string): Promise<GatewayResult>;
  /** The kind's step after the call, in the engine's transaction; fenced on the lease (StaleLeaseError when lost). */
  record(tx: Prisma.TransactionClient, row: Row, claim: Claim, result: GatewayResult, leaseOwner: string, now: Date): Promise<CheckoutResult>;
  /** The paymentId an unrecorded answer names. */
  paymentOf?(claim: Claim): string | undefined;
}

export function createCheckoutFlow<Row extends CheckoutRow, Claim>(
  deps: { db: Db; clock: Clock; log: Pick<Logger, 'warn' | 'error'>; leaseWaitMs: number },
  spec: CheckoutKindSpec<Row, Claim>,
) {
  const { db, clock, log } = deps;
  const runOperation = createGatewayOperations({ db, clock, log });
  const { kind } = spec;

  /** A checkout that is neither finished nor being worked on answers by its state. */
  function pending(row: Row): CheckoutResult {
    const ids = spec.ids(row);
    if (row.status === 'NEEDS_ATTENTION') return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', ids);
    if (row.leaseOwner !== null) return failure('STATE_CONFLICT', `The ${kind} is still being completed; try again shortly`, ids);
    return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', ids);
  }

  /** Someone else's transaction reached this checkout: nothing is sent, an operator decides. */
  async function holdForOperator(row: Row): Promise<CheckoutResult> {
    await moveCheckout(db, kind, row.id, 'hold', {
      fence: { leaseOwner: null },
      data: { failureCode: TRANSACTION_ELSEWHERE.code, failureMessage: TRANSACTION_ELSEWHERE.message },
    });
    log.warn({ kind, id: row.id }, 'redirect carried a transaction another checkout holds; waiting for an operator');
    return failure('PAYMENT_OUTCOME_UNKNOWN', TRANSACTION_ELSEWHERE.message, spec.ids(row));
  }

  async function handleFail(input: RedirectInput): Promise<CheckoutResult> {
    if (!input.state) return failure('INVALID_STATE', 'state is missing');
    const row = await spec.findByState(input.state);
    if (!row) return failure('INVALID_STATE', 'Unknown state');
    const done = spec.settled(row);
    if (done) return done;
    const failed = await moveCheckout(db, kind, row.id, 'abandon', {
      fence: spec.abandonFence,
      data: { failureCode: 'WINDOW_FAILED', failureMessage: `${input.code ?? ''} ${input.message ?? ''}`.trim().slice(0, 500) },
    });
    if (!failed) {
      const current = (await spec.findByState(input.state))!;
      return spec.settled(current) ?? pending(current);
    }
    return failure('WINDOW_FAILED', input.message ?? 'The customer did not complete the payment window', { ...spec.ids(row), gatewayCode: input.code });
  }

  async function handleSuccess(input: RedirectInput): Promise<CheckoutResult> {
    if (!input.state) return failure('INVALID_STATE', 'state is missing');
    const row = await spec.findByState(input.state);
    if (!row) return failure('INVALID_STATE', 'Unknown state');
    const ids = spec.ids(row);
    const done = spec.settled(row);
    if (done) return done;

    const now = clock.now();
    if (row.status === 'PENDING' && row.transactionId === null && row.expiresAt <= now) {
      await moveCheckout(db, kind, row.id, 'expire', { fence: { transactionId: null } });
      return failure('STATE_EXPIRED', `This ${kind} has expired; ask for a new one`, ids);
    }
    if (input.code !== undefined && input.code !== 'SUCCESS') return handleFail(input);
    const refused = precheckRedirect(row, input, ids) ?? spec.check?.(row, input);
    if (refused) return refused;
    const transactionId = input.transactionId!;

    const self = kind === 'registration' ? { registrationId: row.id } : { orderId: row.id };
    if (await transactionHeldElsewhere(db, transactionId, self)) return holdForOperator(row);
    const leaseOwner = randomUUID();
    return runOperation<{ claim: Claim; attemptId: string | undefined; leaseOwner: string }, CheckoutResult>({
      prepare: async () => {
        let claim: Claim | undefined;
        try {
          claim = await spec.claim(row, transactionId, leaseOwner, now);
        } catch (error) {
          // The unique index on transactionId: a concurrent redirect attached the same transaction elsewhere.
          if (isUniqueViolation(error)) return { done: await holdForOperator(row) };
          throw error;
        }
        if (claim) return { ready: { claim, attemptId: spec.attemptOf(claim), leaseOwner } };
        // Another request holds the lease: wait for its answer and give the same one.
        const final = await waitForLease(
          () => spec.findByState(input.state!),
          (r) => r?.leaseOwner === null,
          deps.leaseWaitMs,
        );
        return { done: (final && spec.settled(final)) ?? pending(final ?? row) };
      },
      call: () => spec.call(row, transactionId),
      record: (tx, ready, result, at) => spec.record(tx, row, ready.claim, result, leaseOwner, at),
      unrecorded: (ready) =>
        failure('PAYMENT_OUTCOME_UNKNOWN', 'The outcome could not be recorded; an operator will resolve it', {
          ...ids,
          paymentId: spec.paymentOf?.(ready.claim),
        }),
    });
  }

  return { handleSuccess, handleFail };
}
