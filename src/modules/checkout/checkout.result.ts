// What a browser route answers (docs/api.md "Registrations and orders"): a success with ids, or a failure with a
// stable code. The routes turn it into a 303 redirect or, with Accept: application/json, a JSON answer.
export type CheckoutFailureCode =
  | 'INVALID_STATE'
  | 'STATE_EXPIRED'
  | 'WINDOW_FAILED'
  | 'ORDER_MISMATCH'
  | 'AMOUNT_MISMATCH'
  | 'GATEWAY_DECLINED'
  | 'PAYMENT_OUTCOME_UNKNOWN'
  | 'GATEWAY_UNAVAILABLE'
  | 'STATE_CONFLICT'
  | 'VALIDATION_ERROR';

/** JSON mode: 4xx for the caller's errors, 502/503 for gateway outcomes. */
export const FAILURE_STATUS: Record<CheckoutFailureCode, number> = {
  INVALID_STATE: 400,
  VALIDATION_ERROR: 400,
  STATE_EXPIRED: 410,
  WINDOW_FAILED: 422,
  ORDER_MISMATCH: 409,
  AMOUNT_MISMATCH: 409,
  STATE_CONFLICT: 409,
  GATEWAY_DECLINED: 502,
  PAYMENT_OUTCOME_UNKNOWN: 502,
  GATEWAY_UNAVAILABLE: 503,
};

/** The ids an answer about a checkout carries. */
export interface CheckoutIds {
  registrationId?: string;
  subscriptionId?: string;
  orderId?: string;
  paymentId?: string;
  returnUrl?: string | null;
}

export type CheckoutResult =
  | ({ status: 'success' } & CheckoutIds)
  | ({ status: 'failed'; code: CheckoutFailureCode; message: string; gatewayCode?: string; reason?: string } & CheckoutIds);

export function success(ids: CheckoutIds): CheckoutResult {
  return { status: 'success', ...ids };
}

export function failure(code: CheckoutFailureCode, message: string, extra: CheckoutIds & { gatewayCode?: string; reason?: string } = {}): CheckoutResult {
  return { status: 'failed', code, message, ...extra };
}

/** The checks every success redirect passes before anything is claimed or sent (docs/api.md "Registrations and orders"). */
export function precheckRedirect(
  row: { orderId: string; transactionId: string | null },
  input: { transactionId?: string; orderId?: string },
  ids: CheckoutIds,
  maxBytes = 20,
): CheckoutResult | undefined {
  if (!input.transactionId) return failure('VALIDATION_ERROR', 'transactionId is missing', ids);
  if (Buffer.byteLength(input.transactionId, 'utf8') > maxBytes) return failure('VALIDATION_ERROR', `transactionId is longer than ${maxBytes} bytes`, ids);
  if (input.orderId !== undefined && input.orderId !== row.orderId) return failure('ORDER_MISMATCH', 'The window answered for another order', ids);
  if (row.transactionId !== null && row.transactionId !== input.transactionId) {
    return failure('INVALID_STATE', 'Another transaction is already attached', ids);
  }
  return undefined;
}

/** A failure message as a registration stores it: at most 500 characters, cut with an ellipsis. */
export function truncate(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
