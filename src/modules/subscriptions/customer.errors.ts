// Coded errors of the customer's own actions (docs/api.md "Errors"), the portal's and the rules behind them.
import { defineError } from '../../lib/errors.ts';

/** The right of withdrawal is not open (details.reason: OFF, CANCELED, NOT_PAID, USED, WINDOW_PASSED or NEEDS_ATTENTION). */
export const WithdrawalNotAvailableError = defineError('WITHDRAWAL_NOT_AVAILABLE', '%s', 409);
/** Nothing waits for the customer's decision: no pending increase, or a consent that counts is already recorded. */
export const ConsentAlreadyDecidedError = defineError('CONSENT_ALREADY_DECIDED', '%s', 409);
