// A subscription is created by a completed registration (registrations/complete-registration.ts): ACTIVE with its
// anchor at the approval, or TRIALING until its trial's end (docs/api.md "Subscription lifecycle").
// The database adds (prisma/functions/): subscription.created (events.sql), a NEW movement when it starts ACTIVE (mrr.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { addInterval, type IntervalUnit } from '../../lib/calendar.ts';
import { createSubscription } from '../ledger/subscription.state.ts';
import { noteTrialsEnding } from './trials.ts';

type Tx = Prisma.TransactionClient;

export interface NewSubscriptionInput {
  registration: {
    id: string;
    userId: string;
    method: 'CARD' | 'MOBILE';
    amount: number;
    orderName: string;
    intervalUnit: IntervalUnit;
    intervalCount: number;
    itemCode: string | null;
    issueKeyOnly: boolean;
    trialDays: number | null;
  };
  billingKeyId: string;
  /** When the registration's payment (or key issuance) was approved: the anchor of every cycle. */
  anchorAt: Date;
  /** The registration's payment, when it charged one: it starts the MOBILE chain. */
  initialPayment?: { transactionId: string; amount: number; approvedAt: Date };
  now: Date;
  timezone: string;
}

/**
 * Cycle n is due at anchor + n intervals. A registration that charged its amount has paid cycle 0, so cycle 1 is
 * next, one interval after the approval; a CARD registration with issueKeyOnly paid nothing and is due at once
 * (docs/api.md "Registrations and orders").
 */
export async function createSubscriptionFromRegistration(tx: Tx, input: NewSubscriptionInput) {
  const { registration } = input;
  if (registration.trialDays !== null) return createTrial(tx, input, registration.trialDays);
  const { anchorAt } = input;
  const unit = registration.intervalUnit;
  const periodEnd = addInterval(anchorAt, unit, registration.intervalCount, input.timezone);
  const paid = input.initialPayment !== undefined;
  return createSubscription(tx, 'ACTIVE', {
    ...termsOf(input),
    anchorAt,
    cycle: paid ? 1 : 0,
    currentPeriodStart: anchorAt,
    currentPeriodEnd: periodEnd,
    nextChargeAt: paid ? periodEnd : input.now,
    lastTransactionId: input.initialPayment?.transactionId,
    lastAmount: input.initialPayment?.amount,
    lastTransactionAt: input.initialPayment?.approvedAt,
    changedAt: input.now,
  });
}

/** What a subscription takes from the registration that creates it. */
function termsOf(input: NewSubscriptionInput) {
  const { registration } = input;
  return {
    registrationId: registration.id,
    billingKeyId: input.billingKeyId,
    userId: registration.userId,
    method: registration.method,
    amount: registration.amount,
    orderName: registration.orderName,
    intervalUnit: registration.intervalUnit,
    intervalCount: registration.intervalCount,
    itemCode: registration.itemCode,
  };
}

/**
 * A trial (docs/api.md "Subscription lifecycle"): TRIALING until trialEnd = approval + trialDays calendar days in BILLING_TIMEZONE, which is
 * its first charge and the anchor of its cycles. A trial ending within 30 days is noticed at once.
 */
async function createTrial(tx: Tx, input: NewSubscriptionInput, trialDays: number) {
  const { anchorAt: approvedAt } = input;
  const trialEnd = addInterval(approvedAt, 'day', trialDays, input.timezone);
  const created = await createSubscription(tx, 'TRIALING', {
    ...termsOf(input),
    anchorAt: trialEnd,
    cycle: 0,
    trialEnd,
    currentPeriodStart: approvedAt,
    currentPeriodEnd: trialEnd,
    nextChargeAt: trialEnd,
    changedAt: input.now,
  });
  await noteTrialsEnding(tx, input.now, created.id);
  return created;
}
