// A new payment method for an existing subscription (docs/api.md "Subscription lifecycle"): POST
// /api/v1/subscriptions/:id/payment-method opens a registration (purpose PAYMENT_METHOD) with the same window as a
// new one; its success redirect (/billing/success, complete-registration.ts) claims it here, and records the
// window's answer (the billing key swapped) in replace-payment-method.record.ts.
// CARD only verifies the card. MOBILE charges at once, so it is taken only while a cycle is owed (PAST_DUE, or the
// next charge within the ±5-day window): that payment pays the owed cycle and starts the new chain.
// The database adds (prisma/functions/) to the claim's writes: the owed cycle's payment event (events.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { calendarDaysBetween, KOREA_ZONE, MOBILE_WINDOW_DAYS } from '../../lib/calendar.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import { paymentNeedsAttention } from '../ledger/payment.queries.ts';
import { SETTLEMENT_MISMATCH } from '../ledger/payment.state.ts';
import { leaseFreeWhere } from '../ledger/lease.queries.ts';
import { validateTerms, type Method } from '../shared/terms.ts';
import type { CheckoutLease } from '../checkout/checkout.steps.ts';
import { prepareAttempt } from '../ledger/attempts.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { insertRegistration } from './create-registration.ts';
import { chooseGateway } from '../shared/gateway-for.ts';
import type { GatewayName } from '../../gateway/gateway.ts';
import type { RegistrationRow } from './registrations.read.ts';

type Tx = Prisma.TransactionClient;

export interface PaymentMethodInput {
  method?: Method;
  amount?: number;
  itemCode?: string;
  userName?: string;
  userPhoneNumber?: string;
  returnUrl?: string;
  /** The new key's gateway (default DANAL): a CARD subscription moves between gateways only this way. */
  gateway?: GatewayName;
}

/** What a success redirect's claim wrote before the call (complete-registration.ts; a payment method's: below). */
export interface IssuanceClaim {
  paymentId?: string;
  attemptId?: string;
  hadUnknown: boolean;
  /** A MOBILE payment-method window: the owed cycle its charge pays. */
  cycle?: number;
  dueAt?: Date;
}

/** Every rule is checked here, before the window exists. */
export async function createPaymentMethodRegistration(
  deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'> & Partial<Pick<ServiceDeps, 'gateway' | 'gateways'>>,
  subscriptionId: string,
  input: PaymentMethodInput,
) {
  const { db, clock, config } = deps;
  const sub = await db.subscription.findUnique({ where: { id: subscriptionId } });
  if (!sub) throw new NotFoundError('Subscription');
  if (sub.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription takes no new payment method');
  const method = input.method ?? sub.method;
  const gateway = input.gateway ?? 'DANAL';
  // A CARD window only issues the key, so any gateway that takes the method will do (MOBILE is Danal's: its window charges).
  if (gateway !== 'DANAL') chooseGateway({ gateway: deps.gateway!, gateways: deps.gateways }, gateway, method);
  const interval = { unit: sub.intervalUnit, count: sub.intervalCount };
  if (method === 'CARD') {
    if (input.amount !== undefined) throw new ValidationError('A CARD window only verifies the card: amount is not taken (change it with price-change)');
  } else {
    if (interval.unit !== 'month' || interval.count !== 1)
      throw new ValidationError('MOBILE subscriptions are billed monthly: this subscription’s interval cannot move to MOBILE');
    const now = clock.now();
    const owed =
      sub.status === 'PAST_DUE' || (sub.nextChargeAt !== null && Math.abs(calendarDaysBetween(now, sub.nextChargeAt, KOREA_ZONE)) <= MOBILE_WINDOW_DAYS);
    if (!owed)
      throw new RULE_ERRORS.NOT_DUE('A MOBILE window charges at once: it is taken only while a cycle is owed (PAST_DUE, or the next charge within ±5 days)');
    // The owed cycle's charge may have gone through (its outcome unknown, or a settlement file shows the gateway
    // approved what we hold as declined): nothing is charged again until an operator settles it.
    const owedPayment = await db.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId, cycle: sub.cycle } } });
    if (
      sub.attentionReason === 'PAYMENT_OUTCOME_UNKNOWN' ||
      sub.attentionReason === SETTLEMENT_MISMATCH ||
      (owedPayment && paymentNeedsAttention(owedPayment))
    ) {
      throw new RULE_ERRORS.PAYMENT_OUTCOME_UNKNOWN(
        'The outcome of this cycle’s charge is unknown; an operator must resolve it before a MOBILE window may charge',
      );
    }
  }
  const terms = {
    userId: sub.userId,
    method,
    amount: method === 'MOBILE' ? (input.amount ?? sub.amount) : sub.amount,
    orderName: sub.orderName,
    itemCode: input.itemCode ?? sub.itemCode ?? undefined,
    userName: input.userName,
    userPhoneNumber: input.userPhoneNumber,
    returnUrl: input.returnUrl,
  };
  validateTerms(terms, config, { recurring: true });
  return insertRegistration(deps, { ...terms, interval, issueKeyOnly: method === 'CARD', targetSubscriptionId: sub.id, gateway });
}

/**
 * The payment method's part of the claim, in the transaction that took the registration's lease: the subscription's
 * lease (it keeps the scheduler and operators' charges off it while its key is replaced) and, for MOBILE, the owed
 * cycle's attempt. Undefined when the subscription is being charged right now: the registration is given back
 * untouched and the redirect may be replayed.
 */
export async function claimPaymentMethod(tx: Tx, row: RegistrationRow, subscriptionId: string, lease: CheckoutLease): Promise<IssuanceClaim | undefined> {
  const { leaseOwner, leaseExpiresAt, now } = lease;
  const held = await tx.subscription.updateMany({ where: { id: subscriptionId, ...leaseFreeWhere(now) }, data: { leaseOwner, leaseExpiresAt } });
  if (held.count === 0) {
    await tx.registration.update({ where: { id: row.id }, data: { leaseOwner: null, leaseExpiresAt: null, transactionId: row.transactionId } });
    return undefined;
  }
  if (row.method === 'MOBILE') return prepareOwedCycleAttempt(tx, row, subscriptionId, lease);
  return { hadUnknown: row.status === 'NEEDS_ATTENTION' };
}

/**
 * A MOBILE payment-method window charges at once: that charge is the owed cycle's payment (the one payment of the
 * cycle, a FAILED one sent again, or a new one), with an IN_FLIGHT attempt written before the call (docs/architecture.md, invariant 1).
 */
async function prepareOwedCycleAttempt(tx: Tx, row: RegistrationRow, subscriptionId: string, lease: CheckoutLease): Promise<IssuanceClaim> {
  const { now } = lease;
  const sub = await tx.subscription.findUniqueOrThrow({ where: { id: subscriptionId } });
  const existing = await tx.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId, cycle: sub.cycle } } });
  // Paid, or waiting for an operator (an unknown outcome, a settlement file's approval of what we hold as declined):
  // never charged through a window.
  if (existing && (existing.status === 'SUCCEEDED' || paymentNeedsAttention(existing))) {
    throw new StateConflictError(`cycle ${sub.cycle}'s payment is ${existing.status}; an operator must settle it first`);
  }
  const payment = existing
    ? await tx.payment.update({ where: { id: existing.id }, data: { amount: row.amount, method: 'MOBILE', registrationId: row.id } })
    : await tx.payment.create({
        data: {
          subscriptionId,
          registrationId: row.id,
          cycle: sub.cycle,
          kind: 'RECURRING',
          method: 'MOBILE',
          amount: row.amount,
          orderId: row.orderId,
          dueAt: sub.nextChargeAt ?? now,
        },
      });
  const attempt = await prepareAttempt(tx, {
    paymentId: payment.id,
    operation: 'ISSUE_KEY',
    orderId: row.orderId,
    amount: row.amount,
    ...lease,
    allowAfterUnknown: true,
  });
  await transitionPayment(tx, payment.id, 'send', { nextRetryAt: null });
  return { paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown, cycle: sub.cycle, dueAt: payment.dueAt ?? now };
}
