// What a registration's paid first payment writes (docs/api.md "Registrations and orders"), once for every path that
// learns it: the gateway's live answer (complete-registration.ts where the issuance charges, charge-initial.ts where a
// billing charge follows it) and an outcome learned later (an operator's resolve: settleRegistrationCharge below;
// docs/architecture.md, invariant 14). The subscription is created with the INITIAL payment as its cycle 0, and the
// payment carries it.
// The database adds (prisma/functions/): events (events.sql), a NEW movement (mrr.sql), roll-ups (report-rollups.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { moveCheckout } from '../ledger/checkout.state.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { createSubscriptionFromRegistration, type NewSubscriptionInput } from '../subscriptions/create-subscription.ts';

type Tx = Prisma.TransactionClient;

/** What the registration's payment paid: the gateway's transaction and its approval, the anchor of every cycle. */
export interface PaidInitial {
  transactionId: string;
  approvedAt: Date;
}

/**
 * The subscription a completed registration creates with its key: cycle 0 paid by `paid` (the INITIAL payment), or,
 * key-only, nothing paid and anchored at the issuance `anchorAt`.
 */
export function subscriptionFromRegistration(
  tx: Tx,
  input: { registration: NewSubscriptionInput['registration']; billingKeyId: string; anchorAt: Date; paid?: PaidInitial; now: Date; timezone: string },
) {
  const { registration, paid } = input;
  return createSubscriptionFromRegistration(tx, {
    registration,
    billingKeyId: input.billingKeyId,
    anchorAt: input.anchorAt,
    initialPayment: paid ? { transactionId: paid.transactionId, amount: registration.amount, approvedAt: paid.approvedAt } : undefined,
    now: input.now,
    timezone: input.timezone,
  });
}

/** The INITIAL payment's values when it succeeded: its subscription and the gateway's transaction. */
export function paidPaymentValues(subscriptionId: string, paid: { transactionId?: string; approvedAt: Date }) {
  return { subscriptionId, transactionId: paid.transactionId, approvedAt: paid.approvedAt, attentionReason: null, failureCode: null, failureMessage: null };
}

export interface RegistrationChargeSettled {
  registrationId: string;
  paymentId: string;
  outcome: 'SUCCEEDED' | 'FAILED';
  transactionId?: string;
  approvedAt: Date;
  /** Why (an operator's note): the failure's message. */
  note: string;
  now: Date;
  timezone: string;
}

/**
 * A registration's payment whose outcome was unknown, settled later, where its key did reach us (a gateway whose
 * issuance charges nothing: the key was stored before the charge): as the live answer would have. SUCCEEDED
 * completes the registration and creates its subscription with the payment as cycle 0; FAILED fails it and revokes
 * the key. False, writing nothing, when no live key of the registration exists (the issuance itself was unknown: the
 * caller's rule for a key that never reached us applies). Run under the payment's fence (it was still unknown).
 */
export async function settleRegistrationCharge(tx: Tx, input: RegistrationChargeSettled): Promise<boolean> {
  const key = await tx.billingKey.findFirst({ where: { registrationId: input.registrationId, status: 'ACTIVE' }, select: { id: true } });
  if (!key) return false;
  if (input.outcome === 'FAILED') {
    await transitionPayment(tx, input.paymentId, 'fail', { failureCode: 'RESOLVED_FAILED', failureMessage: input.note });
    await moveCheckout(tx, 'registration', input.registrationId, 'fail', { data: { failureCode: 'RESOLVED_FAILED', failureMessage: input.note } });
    await revokeBillingKey(tx, key.id, input.now);
    return true;
  }
  const registration = await tx.registration.findUniqueOrThrow({ where: { id: input.registrationId } });
  const paid = { transactionId: input.transactionId!, approvedAt: input.approvedAt };
  const subscription = await subscriptionFromRegistration(tx, {
    registration,
    billingKeyId: key.id,
    anchorAt: paid.approvedAt,
    paid,
    now: input.now,
    timezone: input.timezone,
  });
  await transitionPayment(tx, input.paymentId, 'succeed', paidPaymentValues(subscription.id, paid));
  await moveCheckout(tx, 'registration', input.registrationId, 'complete', { data: { completedAt: input.now, failureCode: null, failureMessage: null } });
  return true;
}
