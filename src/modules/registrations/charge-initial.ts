// A registration's first payment where the gateway's key issuance charges nothing (capabilities.issueCharges false;
// docs/api.md "Gateways"): once the key is issued and stored, the INITIAL payment is charged at once with it, as a
// billing charge through the key's gateway. complete-registration.ts runs these steps inside the registration's lease,
// the one guard of its issuance, so concurrent or replayed redirects charge at most once. Invariants kept
// (docs/architecture.md):
// - write before call (invariant 1): the key, the INITIAL payment and its IN_FLIGHT BILLING_CONFIRM attempt (orderId:
//   the registration's, which the adapter also sends as the Idempotency-Key) are committed in one transaction, and
//   the registration's lease renewed, before the charge is sent;
// - an UNKNOWN charge is never sent again (invariant 4): a replay finds it and only answers; an operator's resolve
//   finishes it (settleRegistrationCharge, registration-paid.ts), as the gateway's lookup may;
// - the answer is recorded as Danal's registration records its INITIAL payment (CHECKOUT_OUTCOMES.registration,
//   fenced on the attempt's and the registration's lease): SUCCEEDED completes the registration and creates the
//   subscription with the payment as cycle 0; DECLINED fails it and revokes the key just issued; UNKNOWN puts it under
//   attention; NOT_SENT, as Danal's not-sent issuance, gives the registration back PENDING: nothing was charged, the
//   customer is told to try again, and a replay of the redirect sends the same attempt again (same orderId) with the
//   key already stored (the window's authKey is single use: it is not exchanged twice). A merchant expects a
//   registration that a passing network failure did not charge to complete when the customer retries, not to fail.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { readBillingKey, revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { failure, type CheckoutResult } from '../checkout/checkout.result.ts';
import { recordOrUnknown, type CheckoutLease } from '../checkout/checkout.steps.ts';
import { applyCheckoutOutcome, CHECKOUT_OUTCOMES, declinedCheckout, declinedPayment, lostPayment, unknownCheckout } from '../checkout/checkout.outcomes.ts';
import { prepareAttempt, StaleLeaseError } from '../ledger/attempts.ts';
import { releaseCheckout } from '../ledger/checkout.state.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import { paidPaymentValues, subscriptionFromRegistration } from './registration-paid.ts';
import type { RegistrationRow } from './registrations.read.ts';
import type { IssuanceClaim } from './replace-payment-method.ts';
import { initialPaymentOf, storeRegistrationKey } from './registration-rows.ts';

type Tx = Prisma.TransactionClient;

/** The charge a registration makes after its issuance: the stored key, the INITIAL payment, its attempt (none: not sent). */
export interface InitialChargeClaim extends IssuanceClaim {
  keyId: string;
  paymentId: string;
}

const idsOf = (row: RegistrationRow) => ({ registrationId: row.id, returnUrl: row.returnUrl });

/**
 * The claim of a registration that charges after its issuance, in the transaction that took its lease: the charge
 * alone when an earlier request already stored the key (its charge not sent, or unknown); else the issuance, which
 * charges nothing and so writes no attempt (as a key-only one).
 */
export async function claimAfterIssuance(tx: Tx, row: RegistrationRow, lease: CheckoutLease): Promise<IssuanceClaim | InitialChargeClaim> {
  const key = await tx.billingKey.findFirst({ where: { registrationId: row.id }, select: { id: true } });
  if (key) return claimInitialCharge(tx, row, key.id, lease);
  return { hadUnknown: row.status === 'NEEDS_ATTENTION' };
}

/**
 * The INITIAL payment (with the key's gateway) and its IN_FLIGHT charge attempt. No attempt after an UNKNOWN one: that
 * charge may have gone through, and is never sent again (invariant 4). A NOT_SENT one is sent again as itself.
 */
async function claimInitialCharge(tx: Tx, row: RegistrationRow, keyId: string, lease: CheckoutLease): Promise<InitialChargeClaim> {
  const payment = await initialPaymentOf(tx, row, lease.now);
  const attempt = await prepareAttempt(tx, {
    paymentId: payment.id,
    operation: 'BILLING_CONFIRM',
    orderId: row.orderId,
    amount: row.amount,
    ...lease,
    allowAfterUnknown: false,
  });
  return { keyId, paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown };
}

/**
 * The issuance SUCCEEDED: the key stored, the charge claimed and the registration's lease renewed for the charge, in
 * one transaction committed before the charge is sent; then the charge. When that cannot be written the key never
 * reached our database and nothing is charged.
 */
export async function chargeAfterIssuance(deps: ServiceDeps, row: RegistrationRow, issued: GatewayResult, lease: CheckoutLease): Promise<CheckoutResult> {
  const { config, keyring } = deps;
  const stored = await recordAnswer(deps, { attemptId: undefined, leaseOwner: lease.leaseOwner }, issued, async (tx, now) => {
    const renewed: CheckoutLease = { leaseOwner: lease.leaseOwner, leaseExpiresAt: new Date(now.getTime() + config.scheduler.leaseMs), now };
    const held = await tx.registration.updateMany({ where: { id: row.id, leaseOwner: lease.leaseOwner }, data: { leaseExpiresAt: renewed.leaseExpiresAt } });
    if (held.count === 0) throw new StaleLeaseError(`registration ${row.id}`);
    const key = await storeRegistrationKey(tx, keyring, row, issued.fields);
    return claimInitialCharge(tx, row, key.id, renewed);
  });
  // Nothing was charged (the charge is sent only after this commits); the key issued at the gateway is lost to us.
  if ('unrecorded' in stored) return failure('GATEWAY_UNAVAILABLE', 'The card’s key could not be stored; nothing was charged', idsOf(row));
  return chargeInitial(deps, row, stored.recorded, lease.leaseOwner);
}

/**
 * Sends the claimed charge through the key's gateway and records its answer. Without an attempt (an earlier charge's
 * outcome is unknown) nothing is sent: the registration waits under attention, and the answer says so.
 */
export async function chargeInitial(deps: ServiceDeps, row: RegistrationRow, claim: InitialChargeClaim, leaseOwner: string): Promise<CheckoutResult> {
  const ids = { ...idsOf(row), paymentId: claim.paymentId };
  if (!claim.attemptId) {
    // Already under attention it keeps its reason; a PENDING one (its earlier charge's lease ran out just now) is held.
    const data =
      row.status === 'PENDING'
        ? { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: 'an earlier charge of this registration has an unknown outcome' }
        : {};
    await deps.db.$transaction(async (tx) => {
      // An operator may have settled it meanwhile (no longer held): then the lease is only given back.
      if (!(await releaseCheckout(tx, 'registration', row.id, leaseOwner, 'hold', data))) await releaseCheckout(tx, 'registration', row.id, leaseOwner);
    });
    return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', ids);
  }
  const key = await deps.db.billingKey.findUniqueOrThrow({ where: { id: claim.keyId } });
  const result = await gatewayFor(deps, key.gateway).chargeBillingKey({
    method: row.method,
    billingKey: readBillingKey(deps.keyring, key),
    userId: row.userId,
    ...(key.customerKey ? { customerKey: key.customerKey } : {}),
    // Amounts come from our database (invariant 7); the registration's orderId is the attempt's (one charge).
    amount: row.amount,
    orderName: row.orderName,
    orderId: row.orderId,
  });
  const record = (tx: Tx, now: Date) => recordInitialCharge(deps, tx, row, claim, result, leaseOwner, now);
  return recordOrUnknown(deps, { attemptId: claim.attemptId, leaseOwner }, result, record, ids);
}

/** The first charge's answer, in the transaction that records its attempt (CHECKOUT_OUTCOMES.registration, as Danal's). */
async function recordInitialCharge(
  deps: Pick<ServiceDeps, 'config' | 'log'>,
  tx: Tx,
  row: RegistrationRow,
  claim: InitialChargeClaim,
  result: GatewayResult,
  leaseOwner: string,
  now: Date,
): Promise<CheckoutResult> {
  const move = CHECKOUT_OUTCOMES.registration[result.outcome];
  const held = { kind: 'registration', id: row.id, leaseOwner, paymentId: claim.paymentId } as const;
  const ids = { ...idsOf(row), paymentId: claim.paymentId };
  switch (result.outcome) {
    case 'SUCCEEDED': {
      const paid = { transactionId: result.fields.transactionId!, approvedAt: result.fields.transactionDateTime ?? now };
      const subscription = await subscriptionFromRegistration(tx, {
        registration: row,
        billingKeyId: claim.keyId,
        anchorAt: paid.approvedAt,
        paid,
        now,
        timezone: deps.config.timezone,
      });
      const answer = await applyCheckoutOutcome(tx, held, move, {
        payment: paidPaymentValues(subscription.id, paid),
        checkout: { completedAt: now, failureCode: null, failureMessage: null },
        answer: { ...ids, subscriptionId: subscription.id },
      });
      deps.log.info({ registrationId: row.id, subscriptionId: subscription.id }, 'registration completed');
      return answer;
    }
    case 'DECLINED':
      // Nothing was charged: the key issued for this registration serves nothing else.
      await revokeBillingKey(tx, claim.keyId, now);
      return applyCheckoutOutcome(tx, held, move, {
        payment: declinedPayment(result),
        checkout: declinedCheckout(result),
        answer: { ...ids, gatewayCode: result.code },
        message: result.message,
      });
    case 'UNKNOWN': {
      const answer = await applyCheckoutOutcome(tx, held, move, { payment: lostPayment(result), checkout: unknownCheckout(result), answer: ids });
      deps.log.warn({ registrationId: row.id, reason: result.reason }, 'registration needs attention: first charge outcome unknown');
      return answer;
    }
    case 'NOT_SENT':
      return applyCheckoutOutcome(tx, held, move, { answer: ids });
  }
}
