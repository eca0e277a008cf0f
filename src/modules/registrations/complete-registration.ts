// /billing/success and /billing/fail (docs/api.md "Registrations and orders"): the customer is back from a
// registration's window. The success redirect exchanges the window's transactionId for a billing key (issue-key),
// stores it encrypted, records the registration's own payment and creates the subscription; a payment-method
// registration swaps the subscription's key instead (its rules: replace-payment-method.ts). Where the gateway's
// issuance charges nothing (capabilities.issueCharges false: Toss; docs/api.md "Gateways"), a registration that
// charges at once charges its INITIAL payment with the new key right after, within the same lease (charge-initial.ts).
//
// completeRegistration reads top-down: load by state, decide (pure), write the attempt, call the gateway, classify,
// record, answer. Invariants kept:
// - a replay of a finished registration answers the same without calling the gateway;
// - concurrent redirects with one state call the gateway once: only the holder of the registration's lease calls;
// - write before call: when the registration charges money, its payment and an IN_FLIGHT attempt are committed
//   before issue-key is called (docs/architecture.md, invariant 1), and the outcome is written fenced on that lease (invariant 5);
// - amounts come from our database, never from the redirect (invariant 7);
// - an UNKNOWN issuance is never turned into a failure: the registration waits in NEEDS_ATTENTION, and a replay
//   may call issue-key again with the same transactionId (the gateway's window transaction is single use, so
//   that call cannot charge twice); a charge after the issuance is never sent again once unknown (charge-initial.ts).
// The database adds (prisma/functions/): events (events.sql), a NEW movement (mrr.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { failure, success, truncate, type CheckoutIds, type CheckoutResult } from '../checkout/checkout.result.ts';
import { chargeAfterIssuance, chargeInitial, claimAfterIssuance, type InitialChargeClaim } from './charge-initial.ts';
import { paidPaymentValues, subscriptionFromRegistration } from './registration-paid.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import {
  decideSuccess,
  holdForOperator,
  pendingAnswer,
  recordOrUnknown,
  transactionHeldElsewhere,
  waitForLease,
  windowFailedAnswer,
  windowFailure,
  type CheckoutLease,
  type RedirectInput,
  unlessAttachedElsewhere,
} from '../checkout/checkout.steps.ts';
import { applyCheckoutOutcome, CHECKOUT_OUTCOMES, declinedCheckout, declinedPayment, lostPayment, unknownCheckout } from '../checkout/checkout.outcomes.ts';
import { prepareAttempt } from '../ledger/attempts.ts';
import { moveCheckout } from '../ledger/checkout.state.ts';
import { leaseFreeWhere } from '../ledger/lease.queries.ts';
import { registrationByState, type RegistrationRow } from './registrations.read.ts';
import { claimPaymentMethod, type IssuanceClaim } from './replace-payment-method.ts';
import { recordPaymentMethod } from './replace-payment-method.record.ts';
import { initialPaymentOf, storeRegistrationKey } from './registration-rows.ts';

type Tx = Prisma.TransactionClient;

const idsOf = (row: RegistrationRow) => ({ registrationId: row.id, returnUrl: row.returnUrl });

/** What a finished registration answers, so a replay returns the same result; undefined while a request may go on. */
function settledAnswer(row: RegistrationRow): CheckoutResult | undefined {
  const ids = idsOf(row);
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

/** GET|POST /billing/success */
export async function completeRegistration(deps: ServiceDeps, redirect: RedirectInput & TossRedirect): Promise<CheckoutResult> {
  const { db, clock, config, log } = deps;
  if (!redirect.state) return failure('INVALID_STATE', 'state is missing');
  const row = await registrationByState(db, redirect.state);
  if (!row) return failure('INVALID_STATE', 'Unknown state');
  const ids = idsOf(row);
  const { input, refused, transactionIdBytes } = windowAnswer(row, redirect, ids);

  const now = clock.now();
  const decision = decideSuccess('registration', row, input, now, { ids, settled: settledAnswer(row), refused, transactionIdBytes });
  if (decision.next === 'answer') return decision.answer;
  if (decision.next === 'expire') {
    await moveCheckout(db, 'registration', row.id, 'expire', { fence: { transactionId: null } });
    return decision.answer;
  }
  if (decision.next === 'window-failed') return failRegistration(deps, input);
  const { transactionId } = decision;
  if (await transactionHeldElsewhere(db, transactionId, { registrationId: row.id })) return holdForOperator(db, log, 'registration', row.id, ids);

  // A new subscription's first payment, unless key-only: charged by the issuance itself where the gateway's issuance
  // charges (its adapter says so), else by a charge of its own after it (charge-initial.ts).
  const adapter = gatewayFor(deps, row.gateway);
  const chargesApart = !row.targetSubscriptionId && !row.issueKeyOnly && !adapter.capabilities.issueCharges;
  // Write the attempt: the registration's lease (and the subscription's, for a payment method) and, when the window
  // charges, its payment with an IN_FLIGHT attempt, in one short transaction committed before the call.
  const lease: CheckoutLease = { leaseOwner: randomUUID(), leaseExpiresAt: new Date(now.getTime() + config.scheduler.leaseMs), now };
  const claim = await unlessAttachedElsewhere(
    db.$transaction(async (tx): Promise<IssuanceClaim | InitialChargeClaim | undefined> => {
      if (!(await leaseRegistration(tx, row, transactionId, lease))) return undefined;
      if (row.targetSubscriptionId) return claimPaymentMethod(tx, row, row.targetSubscriptionId, lease);
      return chargesApart ? claimAfterIssuance(tx, row, lease) : claimIssuance(tx, row, lease);
    }),
  );
  if (claim === 'ELSEWHERE') return holdForOperator(db, log, 'registration', row.id, ids);
  if (!claim) {
    // Another request holds the lease (over one gateway call, or two): wait for its answer and give the same one.
    const final = await waitForLease(
      () => registrationByState(db, input.state!),
      (r) => r?.leaseOwner === null,
      config.gateway.timeoutMs * (chargesApart ? 2 : 1) + 5_000,
    );
    return (final && settledAnswer(final)) ?? pendingAnswer('registration', final ?? row, idsOf(final ?? row));
  }
  // An earlier request stored the key: only its charge is left (never sent again when its outcome is unknown).
  if ('keyId' in claim) return chargeInitial(deps, row, claim, lease.leaseOwner);

  const result = await adapter.issueBillingKey({
    method: row.method,
    transactionId,
    ...(row.customerKey ? { customerKey: row.customerKey } : {}),
    expectedOrderId: row.orderId,
    // A key-only registration charged nothing that stays: the gateway may echo its verification amount (100) rather
    // than ours, which is no mismatch. The orderId echo still ties the answer to this registration. An issuance that
    // charges nothing (chargesApart) has no amount to echo either.
    expectedAmount: row.issueKeyOnly || chargesApart ? undefined : row.amount,
  });

  if (chargesApart && result.outcome === 'SUCCEEDED') return chargeAfterIssuance(deps, row, result, lease);
  // Classify and record, fenced on the attempt's and the registration's lease; answer.
  const record = row.targetSubscriptionId
    ? (tx: Tx, at: Date) => recordPaymentMethod(deps, tx, row, claim, result, lease.leaseOwner, at)
    : (tx: Tx, at: Date) => recordIssuance(deps, tx, row, claim, result, lease.leaseOwner, at);
  return recordOrUnknown(deps, { attemptId: claim.attemptId, leaseOwner: lease.leaseOwner }, result, record, { ...ids, paymentId: claim.paymentId });
}

/** What Toss's success redirect adds: the single-use authKey (our transactionId) and the customerKey it is for. */
interface TossRedirect {
  authKey?: string;
  customerKey?: string;
}

/**
 * The window's answer in the terms the steps read. Danal's is the redirect itself. Toss's brings authKey (the
 * window's single-use token, longer than Danal's transactionId) and must name the registration's own customerKey.
 */
function windowAnswer(row: RegistrationRow, redirect: RedirectInput & TossRedirect, ids: CheckoutIds) {
  if (row.gateway === 'DANAL') return { input: redirect, refused: undefined, transactionIdBytes: undefined };
  const input: RedirectInput = { ...redirect, transactionId: redirect.authKey };
  const refused =
    redirect.authKey !== undefined && redirect.customerKey !== row.customerKey
      ? failure('ORDER_MISMATCH', 'The window answered for another customer', ids)
      : undefined;
  return { input, refused, transactionIdBytes: TOSS_AUTH_KEY_BYTES };
}

/** An authKey's bytes at most (Toss documents none; ours is generous, and the key is only stored and sent back). */
const TOSS_AUTH_KEY_BYTES = 300;

/** GET|POST /billing/fail, and a success redirect whose window answered another code. */
export async function failRegistration(deps: Pick<ServiceDeps, 'db'>, input: RedirectInput): Promise<CheckoutResult> {
  if (!input.state) return failure('INVALID_STATE', 'state is missing');
  const row = await registrationByState(deps.db, input.state);
  if (!row) return failure('INVALID_STATE', 'Unknown state');
  const done = settledAnswer(row);
  if (done) return done;
  // A window failure never overtakes a key exchange already under way (a transaction attached).
  if (await moveCheckout(deps.db, 'registration', row.id, 'abandon', { fence: { transactionId: null }, data: windowFailure(input) })) {
    return windowFailedAnswer(input, idsOf(row));
  }
  const current = (await registrationByState(deps.db, input.state))!;
  return settledAnswer(current) ?? pendingAnswer('registration', current, idsOf(current));
}

/** Takes the registration's lease and attaches the transaction; false when another request holds the lease. */
async function leaseRegistration(tx: Tx, row: RegistrationRow, transactionId: string, lease: CheckoutLease): Promise<boolean> {
  const claimed = await tx.registration.updateMany({
    where: { id: row.id, status: { in: ['PENDING', 'NEEDS_ATTENTION'] }, ...leaseFreeWhere(lease.now) },
    data: { leaseOwner: lease.leaseOwner, leaseExpiresAt: lease.leaseExpiresAt, transactionId },
  });
  return claimed.count > 0;
}

/** A new subscription's registration charges its INITIAL payment (unless key-only): the payment and its attempt. */
async function claimIssuance(tx: Tx, row: RegistrationRow, lease: CheckoutLease): Promise<IssuanceClaim> {
  if (row.issueKeyOnly) return { hadUnknown: row.status === 'NEEDS_ATTENTION' };
  const payment = await initialPaymentOf(tx, row, lease.now);
  // A dead request's attempt becomes UNKNOWN here; the replay may still call issue-key (see the file header).
  const attempt = await prepareAttempt(tx, {
    paymentId: payment.id,
    operation: 'ISSUE_KEY',
    orderId: row.orderId,
    amount: row.amount,
    ...lease,
    allowAfterUnknown: true,
  });
  return { paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown };
}

/** A new subscription's issue-key answer, in the transaction that recorded its attempt (CHECKOUT_OUTCOMES.registration). */
async function recordIssuance(
  deps: Pick<ServiceDeps, 'keyring' | 'config' | 'log'>,
  tx: Tx,
  row: RegistrationRow,
  claim: IssuanceClaim,
  result: GatewayResult,
  leaseOwner: string,
  now: Date,
): Promise<CheckoutResult> {
  const outcome = result.outcome === 'DECLINED' && claim.hadUnknown ? 'DECLINED_AFTER_UNKNOWN' : result.outcome;
  const move = CHECKOUT_OUTCOMES.registration[outcome];
  const held = { kind: 'registration', id: row.id, leaseOwner, paymentId: claim.paymentId } as const;
  const ids = { ...idsOf(row), paymentId: claim.paymentId };
  switch (outcome) {
    case 'SUCCEEDED': {
      const approvedAt = result.fields.transactionDateTime ?? now;
      const key = await storeRegistrationKey(tx, deps.keyring, row, result.fields);
      const paid = row.issueKeyOnly ? undefined : { transactionId: result.fields.transactionId!, approvedAt };
      const subscription = await subscriptionFromRegistration(tx, {
        registration: row,
        billingKeyId: key.id,
        anchorAt: approvedAt,
        paid,
        now,
        timezone: deps.config.timezone,
      });
      const answer = await applyCheckoutOutcome(tx, held, move, {
        payment: paidPaymentValues(subscription.id, { transactionId: result.fields.transactionId, approvedAt }),
        checkout: { completedAt: now, failureCode: null, failureMessage: null },
        answer: { ...idsOf(row), subscriptionId: subscription.id, paymentId: claim.paymentId },
      });
      deps.log.info({ registrationId: row.id, subscriptionId: subscription.id }, 'registration completed');
      return answer;
    }
    case 'DECLINED_AFTER_UNKNOWN':
      return applyCheckoutOutcome(tx, held, move, {
        checkout: { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: truncate(`replay declined: ${result.code} ${result.message ?? ''}`) },
        answer: ids,
      });
    case 'DECLINED':
      return applyCheckoutOutcome(tx, held, move, {
        payment: declinedPayment(result),
        checkout: declinedCheckout(result),
        answer: { ...idsOf(row), gatewayCode: result.code, paymentId: claim.paymentId },
        message: result.message,
      });
    case 'UNKNOWN': {
      const answer = await applyCheckoutOutcome(tx, held, move, { payment: lostPayment(result), checkout: unknownCheckout(result), answer: ids });
      deps.log.warn({ registrationId: row.id, reason: result.reason }, 'registration needs attention: key issuance outcome unknown');
      return answer;
    }
    case 'NOT_SENT':
      return applyCheckoutOutcome(tx, held, move, { answer: ids });
  }
}
