// A payment-method window's answer (docs/api.md "Subscription lifecycle"), recorded in the transaction of its attempt:
// the window opened and claimed in replace-payment-method.ts; complete-registration.ts calls the gateway and this.
// The database adds (prisma/functions/): events (events.sql), its charge's roll-ups (report-rollups.sql) and settlement queue rows (settlement-queue.sql).
import type { Prisma, Subscription } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { applyChargeSuccess, PAYMENT_METHOD_INVALID } from '../ledger/charge.outcomes.ts';
import { CHARGED_AFTER_CANCEL } from '../ledger/payment.queries.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { StaleLeaseError } from '../ledger/attempts.ts';
import { truncate, type CheckoutResult } from '../checkout/checkout.result.ts';
import {
  applyCheckoutOutcome,
  CHECKOUT_OUTCOMES,
  declinedCheckout,
  declinedPayment,
  lostPayment,
  unknownCheckout,
  type HeldCheckout,
  type OutcomeMove,
} from '../checkout/checkout.outcomes.ts';
import type { IssuanceClaim } from './replace-payment-method.ts';
import type { RegistrationRow } from './registrations.read.ts';
import { storeRegistrationKey } from './registration-rows.ts';

type Tx = Prisma.TransactionClient;

/** Attention reasons that a new billing key settles (a dead instrument's PAYMENT_METHOD_INVALID among them). */
const KEY_ATTENTION = [
  'MOBILE_WINDOW_CLOSED',
  'MOBILE_CHAIN_MISSING',
  'MOBILE_AMOUNT_MISMATCH',
  'BILLING_KEY_REVOKED',
  'BILLING_KEY_UNREADABLE',
  PAYMENT_METHOD_INVALID,
];

/**
 * A payment-method window's answer (docs/api.md "Subscription lifecycle"; CHECKOUT_OUTCOMES.paymentMethod), in the transaction that recorded
 * its attempt. The subscription's lease is released first, either way, fenced; an unknown charge raises it. On
 * success the new key replaces the old one and the old is revoked, in this one transaction; CARD: a PAST_DUE
 * subscription is due at once with its retries reset, its anchor kept; MOBILE: the charge pays the owed cycle, clears
 * the attention it raised and starts the new chain (its anchor). A failed window changes nothing but its own payment.
 */
export async function recordPaymentMethod(
  deps: Pick<ServiceDeps, 'keyring' | 'config' | 'log'>,
  tx: Tx,
  row: RegistrationRow,
  claim: IssuanceClaim,
  result: GatewayResult,
  leaseOwner: string,
  now: Date,
): Promise<CheckoutResult> {
  const subscriptionId = row.targetSubscriptionId!;
  const sub = await tx.subscription.findUniqueOrThrow({ where: { id: subscriptionId } });
  const outcome = paymentMethodOutcome(result, sub, claim);
  const move = CHECKOUT_OUTCOMES.paymentMethod[outcome];
  const held = { kind: 'registration', id: row.id, leaseOwner, paymentId: claim.paymentId } as const;
  const ids = { registrationId: row.id, returnUrl: row.returnUrl, subscriptionId };
  const unknown = outcome === 'UNKNOWN' && claim.paymentId ? 'PAYMENT_OUTCOME_UNKNOWN' : undefined;
  if (!(await releaseSubscription(tx, subscriptionId, leaseOwner, unknown))) throw new StaleLeaseError(`subscription ${subscriptionId}`);

  const window: WindowAnswer = { tx, row, claim, result, now, sub, move, held, ids };
  switch (outcome) {
    case 'CHARGED_AFTER_CANCEL':
      return recordChargedAfterCancel(deps, window);
    case 'SUCCEEDED':
      return recordReplacement(deps, window);
    case 'DECLINED_AFTER_UNKNOWN':
      return applyCheckoutOutcome(tx, held, move, {
        checkout: { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: truncate(`replay declined: ${result.code} ${result.message ?? ''}`) },
        answer: { ...ids, paymentId: claim.paymentId },
      });
    case 'DECLINED':
      return applyCheckoutOutcome(tx, held, move, {
        payment: declinedPayment(result),
        checkout: declinedCheckout(result),
        answer: { ...ids, gatewayCode: result.code, paymentId: claim.paymentId },
        message: result.message,
      });
    case 'UNKNOWN':
      return applyCheckoutOutcome(tx, held, move, {
        payment: lostPayment(result),
        checkout: unknownCheckout(result),
        answer: { ...ids, paymentId: claim.paymentId },
      });
    case 'NOT_SENT':
      return applyCheckoutOutcome(tx, held, move, { answer: { ...ids, paymentId: claim.paymentId } });
  }
}

/** The window's answer and what recordPaymentMethod read and decided, for the outcomes' steps below. */
interface WindowAnswer {
  tx: Tx;
  row: RegistrationRow;
  claim: IssuanceClaim;
  result: GatewayResult;
  now: Date;
  /** The subscription as it was before this answer. */
  sub: Subscription;
  move: OutcomeMove;
  held: HeldCheckout;
  ids: { registrationId: string; returnUrl: string | null; subscriptionId: string };
}

/** The gateway's outcome, or the two that only we can tell: approved for a cancelled subscription, declined after an unknown. */
function paymentMethodOutcome(result: GatewayResult, sub: Subscription, claim: IssuanceClaim) {
  return result.outcome === 'SUCCEEDED' && sub.status === 'CANCELED'
    ? 'CHARGED_AFTER_CANCEL'
    : result.outcome === 'DECLINED' && claim.hadUnknown
      ? 'DECLINED_AFTER_UNKNOWN'
      : result.outcome;
}

/** Nothing is swapped: the new key is revoked at once, and a MOBILE charge waits for an operator's refund. */
async function recordChargedAfterCancel(deps: Pick<ServiceDeps, 'keyring' | 'log'>, { tx, row, result, now, held, move, ids }: WindowAnswer) {
  const key = await storeRegistrationKey(tx, deps.keyring, row, result.fields);
  await revokeBillingKey(tx, key.id, now);
  const answer = await applyCheckoutOutcome(tx, held, move, {
    payment: { transactionId: result.fields.transactionId, approvedAt: result.fields.transactionDateTime ?? now, attentionReason: CHARGED_AFTER_CANCEL },
    checkout: {
      failureCode: CHARGED_AFTER_CANCEL,
      failureMessage: 'The subscription was cancelled during the window; refund the window’s payment if it charged',
    },
    answer: ids,
  });
  deps.log.warn(
    { registrationId: row.id, subscriptionId: ids.subscriptionId },
    'payment method approved for a cancelled subscription; an operator must refund any charge',
  );
  return answer;
}

/** The new key replaces the old (revoked); a MOBILE window's charge pays the owed cycle. */
async function recordReplacement(deps: Pick<ServiceDeps, 'keyring' | 'config' | 'log'>, window: WindowAnswer) {
  const { tx, row, claim, result, now, sub, held, move, ids } = window;
  const approvedAt = result.fields.transactionDateTime ?? now;
  const key = await storeRegistrationKey(tx, deps.keyring, row, result.fields);
  await switchSubscriptionToKey(window, key.id, approvedAt);
  if (row.method === 'MOBILE' && claim.paymentId) {
    // The owed cycle's success, by the ledger's one writer of a cycle's success (its payment's move included).
    await applyChargeSuccess(tx, {
      subscriptionId: ids.subscriptionId,
      paymentId: claim.paymentId,
      cycle: claim.cycle!,
      dueAt: claim.dueAt!,
      amount: row.amount,
      transactionId: result.fields.transactionId!,
      approvedAt,
      timezone: deps.config.timezone,
      now,
    });
  }
  if (sub.billingKeyId !== key.id) await revokeBillingKey(tx, sub.billingKeyId, now);
  const answer = await applyCheckoutOutcome(tx, held, move, {
    payment: 'moved',
    checkout: { completedAt: now, failureCode: null, failureMessage: null },
    answer: { ...ids, paymentId: claim.paymentId },
  });
  deps.log.info({ registrationId: row.id, subscriptionId: ids.subscriptionId, method: row.method }, 'payment method replaced');
  return answer;
}

/**
 * The subscription takes the new key and the window's method: MOBILE its amount and a new anchor; a PAST_DUE CARD
 * subscription is due at once, its failed payment's retries reset.
 */
async function switchSubscriptionToKey({ tx, row, now, sub, ids }: WindowAnswer, billingKeyId: string, approvedAt: Date) {
  const mobile = row.method === 'MOBILE';
  const pastDueCard = !mobile && sub.status === 'PAST_DUE';
  await tx.subscription.update({
    where: { id: ids.subscriptionId },
    data: {
      billingKeyId,
      method: row.method,
      itemCode: row.itemCode,
      amount: mobile ? row.amount : undefined,
      anchorAt: mobile ? approvedAt : undefined,
      nextChargeAt: pastDueCard ? now : undefined,
      // What a new key settles: the window that closed, a missing chain, a key revoked, unreadable or declined as dead.
      needsAttention: KEY_ATTENTION.includes(sub.attentionReason ?? '') ? false : undefined,
      attentionReason: KEY_ATTENTION.includes(sub.attentionReason ?? '') ? null : undefined,
      changedAt: now,
    },
  });
  if (pastDueCard) {
    await tx.payment.updateMany({
      where: { subscriptionId: ids.subscriptionId, cycle: sub.cycle, status: 'FAILED' },
      data: { retriesFrom: now, nextRetryAt: null },
    });
  }
}
