// Coded errors of the customer's own actions (docs/api.md "Errors"), the portal's and the rules behind them.
import { defineError } from '../../lib/errors.ts';

/** The right of withdrawal is not open (details.reason: OFF, CANCELED, NOT_PAID, USED, WINDOW_PASSED or NEEDS_ATTENTION). */
export const WithdrawalNotAvailableError = defineError('WITHDRAWAL_NOT_AVAILABLE', '%s', 409);
/** Nothing waits for the customer's decision: no pending increase, or a consent that counts is already recorded. */
export const ConsentAlreadyDecidedError = defineError('CONSENT_ALREADY_DECIDED', '%s', 409);
/**
 * The portal cannot send the customer to this gateway's payment-method window (it opens only through the gateway's
 * script on the merchant's own page): the merchant offers the change on its site.
 */
export const PaymentMethodChangeNotOfferedError = defineError('PAYMENT_METHOD_CHANGE_NOT_OFFERED', '%s', 409);
