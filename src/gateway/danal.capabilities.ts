// What Danal can do and what its codes mean (src/gateway/gateway.ts; docs/gateways.md "The gateway client"):
// written once here, read by the engine through the adapter (danal.adapter.ts) and by the wire client's
// classification (client.ts). Nothing else states a Danal fact the engine decides by.
import type { GatewayCapabilities, OutcomeTable } from './gateway.ts';

export const DANAL_CAPABILITIES: GatewayCapabilities = {
  // The interface has no idempotency header: the orderId's uniqueness at the gateway is the only guard.
  idempotencyKey: false,
  // No call answers what became of an orderId: an UNKNOWN waits for an operator or a settlement file.
  inquiry: false,
  // CARD cancels in part (cancelType P); MOBILE only whole (the carrier's bill).
  partialRefund: { CARD: true, MOBILE: false },
  // Revoking a key is ours alone: the interface has no call to delete one.
  keyDeletion: false,
  // Settlements arrive as a file an operator imports.
  settlementFeed: false,
  methods: ['CARD', 'MOBILE'],
  mobileChain: true,
  // The window approves the registration's amount and issue-key charges it (unless issueKeyOnly): one call.
  issueCharges: true,
  // A MOBILE payment is cancelled only within its calendar month in Korea time; a CARD payment at any time.
  refundWindow: { CARD: 'ANY_TIME', MOBILE: 'CALENDAR_MONTH_KST' },
};

/**
 * Danal's one outcome table: SUCCESS approves; every other code of a well-formed, non-5xx answer is a decline that
 * charged nothing, and the interface names no code that marks the instrument dead, so a retry may recover
 * (the dunning schedule decides how often). Danal has no code that may have charged, nor one that proves nothing was
 * processed.
 */
export const DANAL_OUTCOMES: OutcomeTable = {
  codes: { SUCCESS: { outcome: 'SUCCEEDED' } },
  otherwise: { outcome: 'DECLINED', decline: 'MAY_RECOVER' },
};
