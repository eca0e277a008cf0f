// Coded errors of the operator's charge and refund (docs/api.md "Errors"): a refused rule names itself; a gateway outcome maps
// to 402/502/503 with the payment's id in `details`.
import { defineError } from '../../lib/errors.ts';
import type { RefusalCode } from './charge.rules.ts';

export const GatewayDeclinedError = defineError('GATEWAY_DECLINED', 'The gateway declined: %s', 402);
export const PaymentOutcomeUnknownError = defineError('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown (%s); the payment needs an operator', 502);
export const GatewayUnavailableError = defineError('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged (%s)', 503);

const conflict = (code: string) => defineError(code, '%s', 409);
const unprocessable = (code: string) => defineError(code, '%s', 422);

/** Rule refusals: 409 when the subscription's state is the obstacle, 422 when a gateway rule forbids the call. */
export const RULE_ERRORS: Record<RefusalCode | 'CANCEL_AT_PERIOD_END' | 'BILLING_KEY_UNREADABLE' | 'CHARGE_IN_PROGRESS', ReturnType<typeof defineError>> = {
  NOT_DUE: conflict('NOT_DUE'),
  SUBSCRIPTION_NOT_ACTIVE: conflict('SUBSCRIPTION_NOT_ACTIVE'),
  NEEDS_ATTENTION: conflict('NEEDS_ATTENTION'),
  PAYMENT_OUTCOME_UNKNOWN: conflict('PAYMENT_OUTCOME_UNKNOWN'),
  BILLING_KEY_REVOKED: conflict('BILLING_KEY_REVOKED'),
  BILLING_KEY_UNREADABLE: conflict('BILLING_KEY_UNREADABLE'),
  CANCEL_AT_PERIOD_END: conflict('CANCEL_AT_PERIOD_END'),
  CHARGE_IN_PROGRESS: conflict('CHARGE_IN_PROGRESS'),
  MOBILE_CHAIN_MISSING: unprocessable('MOBILE_CHAIN_MISSING'),
  MOBILE_AMOUNT_MISMATCH: unprocessable('MOBILE_AMOUNT_MISMATCH'),
  MOBILE_WINDOW_CLOSED: unprocessable('MOBILE_WINDOW_CLOSED'),
  CONSENT_REQUIRED: unprocessable('CONSENT_REQUIRED'),
};

export const RefundRefusedError = {
  MOBILE_PARTIAL_CANCEL: unprocessable('MOBILE_PARTIAL_CANCEL'),
  MOBILE_CANCEL_MONTH_CLOSED: unprocessable('MOBILE_CANCEL_MONTH_CLOSED'),
  AMOUNT_EXCEEDS_REMAINING: unprocessable('AMOUNT_EXCEEDS_REMAINING'),
  PAYMENT_NOT_REFUNDABLE: conflict('PAYMENT_NOT_REFUNDABLE'),
};
