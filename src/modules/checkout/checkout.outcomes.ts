// What the gateway's answer does to a checkout (docs/architecture.md, invariants 3 and 4; docs/api.md "Registrations and orders"): one row per outcome for each of the
// three use cases that call the gateway from a browser redirect. A row names the move of the payment the checkout
// charges (none for a key-only issuance), the move of the registration or order (fenced on the request's lease and
// releasing it; `release` alone when nothing was decided, so the redirect may be replayed), and the answer.
// The use cases classify the gateway's answer into a row (besides the gateway's four outcomes: a decline after an
// unknown, a window approved for a cancelled subscription), do what a row cannot say (the key stored, the
// subscription created or changed), then apply the row with applyCheckoutOutcome, passing the values it writes.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import { StaleLeaseError } from '../ledger/attempts.ts';
import { releaseCheckout, type CheckoutKind, type CheckoutMoveData } from '../ledger/checkout.state.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { failure, success, truncate, type CheckoutFailureCode, type CheckoutIds, type CheckoutResult } from './checkout.result.ts';

export interface OutcomeMove {
  payment: 'succeed' | 'fail' | 'lose' | null;
  checkout: 'complete' | 'fail' | 'hold' | 'release';
  answer: 'success' | CheckoutFailureCode;
  /** The failure's message (a decline answers the gateway's own message when it gave one). */
  message?: string;
}

const UNKNOWN = 'The gateway’s answer is unknown; an operator will resolve it';
const NOT_SENT = 'The gateway could not be reached; nothing was charged. Try again.';
const DECLINED = 'The gateway declined';

export const CHECKOUT_OUTCOMES = {
  /** A new subscription's registration (issue-key; it charges the INITIAL payment unless key-only). */
  registration: {
    SUCCEEDED: { payment: 'succeed', checkout: 'complete', answer: 'success' },
    DECLINED: { payment: 'fail', checkout: 'fail', answer: 'GATEWAY_DECLINED', message: DECLINED },
    /** An earlier call's outcome is unknown: a decline now may mean that call went through. Not guessed. */
    DECLINED_AFTER_UNKNOWN: { payment: null, checkout: 'hold', answer: 'PAYMENT_OUTCOME_UNKNOWN', message: UNKNOWN },
    UNKNOWN: { payment: 'lose', checkout: 'hold', answer: 'PAYMENT_OUTCOME_UNKNOWN', message: UNKNOWN },
    NOT_SENT: { payment: null, checkout: 'release', answer: 'GATEWAY_UNAVAILABLE', message: NOT_SENT },
  },
  /** A payment-method registration (issue-key; a MOBILE window charges the owed cycle's payment). */
  paymentMethod: {
    SUCCEEDED: { payment: 'succeed', checkout: 'complete', answer: 'success' },
    /** Cancelled while the customer was in the window: nothing is swapped; a MOBILE charge did move money. */
    CHARGED_AFTER_CANCEL: { payment: 'succeed', checkout: 'hold', answer: 'INVALID_STATE', message: 'The subscription was cancelled' },
    DECLINED: { payment: 'fail', checkout: 'fail', answer: 'GATEWAY_DECLINED', message: DECLINED },
    /** An earlier call's outcome is unknown: a decline now may mean that call went through. Not guessed. */
    DECLINED_AFTER_UNKNOWN: { payment: null, checkout: 'hold', answer: 'PAYMENT_OUTCOME_UNKNOWN', message: UNKNOWN },
    UNKNOWN: { payment: 'lose', checkout: 'hold', answer: 'PAYMENT_OUTCOME_UNKNOWN', message: UNKNOWN },
    NOT_SENT: { payment: null, checkout: 'release', answer: 'GATEWAY_UNAVAILABLE', message: NOT_SENT },
  },
  /** A one-time order (payments/confirm of its ONE_TIME payment). */
  order: {
    SUCCEEDED: { payment: 'succeed', checkout: 'complete', answer: 'success' },
    DECLINED: { payment: 'fail', checkout: 'fail', answer: 'GATEWAY_DECLINED', message: DECLINED },
    UNKNOWN: { payment: 'lose', checkout: 'hold', answer: 'PAYMENT_OUTCOME_UNKNOWN', message: UNKNOWN },
    NOT_SENT: { payment: null, checkout: 'release', answer: 'GATEWAY_UNAVAILABLE', message: NOT_SENT },
  },
} as const satisfies Record<string, Record<string, OutcomeMove>>;

/** The checkout whose lease a request holds, and the payment it charges (if any). */
export interface HeldCheckout {
  kind: CheckoutKind;
  id: string;
  leaseOwner: string;
  paymentId: string | undefined;
}

type PaymentValues = Omit<Prisma.PaymentUncheckedUpdateManyInput, 'status'>;

/**
 * Applies a row in the transaction that recorded the attempt: the payment's move with `payment`'s values ('moved':
 * the ledger's own writer already applied it), then the checkout's with `checkout`'s, fenced on our lease
 * (StaleLeaseError when it is no longer ours), and the answer with `answer`'s ids.
 */
export async function applyCheckoutOutcome(
  tx: Prisma.TransactionClient,
  held: HeldCheckout,
  move: OutcomeMove,
  values: { payment?: PaymentValues | 'moved'; checkout?: CheckoutMoveData; answer: CheckoutIds & { gatewayCode?: string }; message?: string },
): Promise<CheckoutResult> {
  if (move.payment && held.paymentId && values.payment !== 'moved') await transitionPayment(tx, held.paymentId, move.payment, values.payment);
  const transition = move.checkout === 'release' ? undefined : move.checkout;
  if (!(await releaseCheckout(tx, held.kind, held.id, held.leaseOwner, transition, values.checkout))) throw new StaleLeaseError(`${held.kind} ${held.id}`);
  if (move.answer === 'success') return success(values.answer);
  return failure(move.answer, values.message ?? move.message ?? move.answer, values.answer);
}

/** What a decline writes on the payment and on the checkout; what an unknown answer writes on the payment and on the checkout. */
export const declinedPayment = (result: GatewayResult): PaymentValues => ({ failureCode: result.code, failureMessage: result.message });
export const declinedCheckout = (result: GatewayResult): CheckoutMoveData => ({
  failureCode: 'GATEWAY_DECLINED',
  failureMessage: truncate(`${result.code}: ${result.message ?? ''}`),
});
export const lostPayment = (result: GatewayResult): PaymentValues => ({ attentionReason: result.reason });
export const unknownCheckout = (result: GatewayResult): CheckoutMoveData => ({ failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: result.reason });
