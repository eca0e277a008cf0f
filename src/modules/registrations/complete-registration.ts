// The success and fail redirects of a registration (DESIGN.md §1.1, §5 "Browser routes"): the success redirect
// exchanges the window's transactionId for a billing key, stores it encrypted, records the registration's own payment
// and creates the subscription (a payment-method registration swaps the key instead: replace-payment-method.ts).
//
// Invariants kept here:
// - concurrent redirects with one state call the gateway once: the caller must hold the registration's lease;
// - write before call: when the registration charges money, its INITIAL payment and an IN_FLIGHT attempt are
//   committed before issue-key is called (rule 1), and the outcome is written fenced on that lease (rule 5);
// - amounts come from our database, never from the redirect (rule 7);
// - an UNKNOWN issuance is never turned into a failure: the registration waits in NEEDS_ATTENTION, and a replay
//   may call issue-key again with the same transactionId (the gateway's window transaction is single use, so
//   that call cannot charge twice).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { storeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { failure, success, truncate, type CheckoutResult } from '../checkout/checkout.result.ts';
import { prepareAttempt, StaleLeaseError } from '../ledger/attempts.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { releaseCheckout, type CheckoutMoveData, type CheckoutTransition } from '../ledger/checkout.state.ts';
import { createCheckoutFlow } from '../checkout/checkout.flow.ts';
import { createSubscriptionFromRegistration } from '../subscriptions/subscriptions.service.ts';
import { registrationByState, type RegistrationRow } from './registrations.read.ts';
import { claimPaymentMethod, recordPaymentMethod, type IssuanceClaim } from './replace-payment-method.ts';

type Tx = Prisma.TransactionClient;

/** What a finished registration answers, so a replay returns the same result. */
function settled(row: RegistrationRow): CheckoutResult | undefined {
  const ids = { registrationId: row.id, returnUrl: row.returnUrl };
  switch (row.status) {
    case 'COMPLETED':
      return success({ ...ids, subscriptionId: row.subscription?.id ?? row.targetSubscriptionId ?? undefined });
    case 'FAILED':
      return failure('INVALID_STATE', 'This registration has already failed', { ...ids, reason: row.failureCode ?? undefined });
    case 'EXPIRED':
      return failure('STATE_EXPIRED', 'This registration has expired; ask for a new one', ids);
    default:
      return undefined;
  }
}

/** The handlers of /billing/success and /billing/fail. */
export function createRegistrationCheckout(deps: ServiceDeps) {
  const { db, gateway, clock, config, keyring, log } = deps;
  const leaseMs = config.scheduler.leaseMs;

  const flow = createCheckoutFlow<RegistrationRow, IssuanceClaim>(
    { db, clock, log, leaseWaitMs: config.gateway.timeoutMs + 5_000 },
    {
      kind: 'registration',
      findByState: (state) => registrationByState(db, state),
      ids: (row) => ({ registrationId: row.id, returnUrl: row.returnUrl }),
      settled,
      // A window failure never overtakes a key exchange already under way.
      abandonFence: { transactionId: null },
      claim: claimIssuance,
      attemptOf: (claim) => claim.attemptId,
      paymentOf: (claim) => claim.paymentId,
      call: (row, transactionId) =>
        gateway.issueBillingKey({
          method: row.method,
          transactionId,
          expectedOrderId: row.orderId,
          // A key-only registration charged nothing that stays: the gateway may echo its verification amount (100)
          // rather than ours, which is no mismatch. The orderId echo still ties the answer to this registration.
          expectedAmount: row.issueKeyOnly ? undefined : row.amount,
        }),
      record: recordIssuance,
    },
  );

  /**
   * Takes the registration's lease and, when it charges money, writes the INITIAL payment and an IN_FLIGHT
   * attempt, all in one short transaction. Returns undefined when another request holds the lease.
   */
  async function claimIssuance(row: RegistrationRow, transactionId: string, leaseOwner: string, now: Date): Promise<IssuanceClaim | undefined> {
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    return db.$transaction(async (tx) => {
      const claimed = await tx.registration.updateMany({
        where: {
          id: row.id,
          status: { in: ['PENDING', 'NEEDS_ATTENTION'] },
          OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }],
        },
        data: { leaseOwner, leaseExpiresAt, transactionId },
      });
      if (claimed.count === 0) return undefined;
      if (row.targetSubscriptionId) return claimPaymentMethod(tx, row, row.targetSubscriptionId, { leaseOwner, leaseExpiresAt, now });
      if (row.issueKeyOnly) return { hadUnknown: row.status === 'NEEDS_ATTENTION' };
      return prepareInitialAttempt(tx, row, leaseOwner, leaseExpiresAt, now);
    });
  }

  async function prepareInitialAttempt(tx: Tx, row: RegistrationRow, leaseOwner: string, leaseExpiresAt: Date, now: Date): Promise<IssuanceClaim> {
    const payment =
      (await tx.payment.findFirst({ where: { registrationId: row.id, kind: 'INITIAL' } })) ??
      (await tx.payment.create({
        data: { registrationId: row.id, kind: 'INITIAL', method: row.method, amount: row.amount, orderId: row.orderId, cycle: 0, dueAt: now },
      }));
    // A dead request's attempt becomes UNKNOWN here; the replay may still call issue-key (see the file header).
    const attempt = await prepareAttempt(tx, {
      paymentId: payment.id,
      operation: 'ISSUE_KEY',
      orderId: row.orderId,
      amount: row.amount,
      leaseOwner,
      leaseExpiresAt,
      now,
      allowAfterUnknown: true,
    });
    return { paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown };
  }

  /** The registration's step after the call, in the engine's transaction that recorded the attempt. */
  async function recordIssuance(
    tx: Tx,
    row: RegistrationRow,
    claim: IssuanceClaim,
    result: GatewayResult,
    leaseOwner: string,
    now: Date,
  ): Promise<CheckoutResult> {
    const ids = { registrationId: row.id, returnUrl: row.returnUrl };
    // Fenced on our lease, released with the move (or alone, when nothing was decided).
    const release = async (transition?: CheckoutTransition, data?: CheckoutMoveData) => {
      if (!(await releaseCheckout(tx, 'registration', row.id, leaseOwner, transition, data))) throw new StaleLeaseError(`registration ${row.id}`);
    };

    if (row.targetSubscriptionId) return recordPaymentMethod(deps, tx, row, row.targetSubscriptionId, claim, result, leaseOwner, now, release);

    switch (result.outcome) {
      case 'SUCCEEDED': {
        const approvedAt = result.fields.transactionDateTime ?? now;
        const key = await storeBillingKey(tx, keyring, { registrationId: row.id, userId: row.userId, method: row.method, fields: result.fields });
        const initialPayment = row.issueKeyOnly ? undefined : { transactionId: result.fields.transactionId!, amount: row.amount, approvedAt };
        const subscription = await createSubscriptionFromRegistration(tx, {
          registration: row,
          billingKeyId: key.id,
          anchorAt: approvedAt,
          initialPayment,
          now,
          timezone: config.timezone,
        });
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'succeed', {
            subscriptionId: subscription.id,
            transactionId: result.fields.transactionId,
            approvedAt,
            attentionReason: null,
            failureCode: null,
            failureMessage: null,
          });
        }
        await release('complete', { completedAt: now, failureCode: null, failureMessage: null });
        log.info({ registrationId: row.id, subscriptionId: subscription.id }, 'registration completed');
        return success({ ...ids, subscriptionId: subscription.id, paymentId: claim.paymentId });
      }
      case 'DECLINED': {
        if (claim.hadUnknown) {
          // An earlier call's outcome is unknown; a decline now may mean that call went through. Not guessed.
          await release('hold', {
            failureCode: 'PAYMENT_OUTCOME_UNKNOWN',
            failureMessage: truncate(`replay declined: ${result.code} ${result.message ?? ''}`),
          });
          return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', { ...ids, paymentId: claim.paymentId });
        }
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'fail', { failureCode: result.code, failureMessage: result.message });
        }
        await release('fail', { failureCode: 'GATEWAY_DECLINED', failureMessage: truncate(`${result.code}: ${result.message ?? ''}`) });
        return failure('GATEWAY_DECLINED', result.message ?? 'The gateway declined', { ...ids, gatewayCode: result.code, paymentId: claim.paymentId });
      }
      case 'UNKNOWN': {
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'lose', { attentionReason: result.reason });
        }
        await release('hold', { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: result.reason });
        log.warn({ registrationId: row.id, reason: result.reason }, 'registration needs attention: key issuance outcome unknown');
        return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', { ...ids, paymentId: claim.paymentId });
      }
      case 'NOT_SENT': {
        await release();
        return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', { ...ids, paymentId: claim.paymentId });
      }
    }
  }

  return { handleSuccess: flow.handleSuccess, handleFail: flow.handleFail };
}
