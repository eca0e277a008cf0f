// What Toss Payments can do and what its codes mean (src/gateway/gateway.ts; docs/gateways.md "The gateway
// client"): written once here, read by the engine through the adapter (toss.adapter.ts) and by its classification.
// Nothing else states a Toss fact the engine decides by. The facts the adapter relies on, each marked documented
// (read on Toss's pages, docs.tosspayments.com, or its developer forum, techchat.tosspayments.com, where Toss's staff
// answer) or assumed (and why), are listed atop toss.adapter.ts; the sandbox's own list is atop
// src/sandbox/toss/toss.routes.ts.
import type { GatewayCapabilities, OutcomeTable } from './gateway.ts';

/** Toss's capabilities; keyDeletion only when the deletion call is configured (TOSS_KEY_DELETION). */
export function tossCapabilities(options: { keyDeletion: boolean }): GatewayCapabilities {
  return {
    // Idempotency-Key on every POST, the first answer replayed for 15 days (documented).
    idempotencyKey: true,
    // GET /v1/payments/orders/{orderId} answers what became of an orderId (documented).
    inquiry: true,
    // A card payment cancels in part, several times up to its balance (documented). MOBILE is Danal's only.
    partialRefund: { CARD: true, MOBILE: false },
    // Whether Toss deletes a billing key is not settled by its documentation: a configured call, off by default.
    keyDeletion: options.keyDeletion,
    // GET /v1/settlements serves the settlement lines by date (documented).
    settlementFeed: true,
    methods: ['CARD'],
    mobileChain: false,
    // Key issuance (POST /v1/billing/authorizations/issue) charges nothing: the first payment is a billing charge after it.
    issueCharges: false,
    // A card payment is cancelled at any time while it has a balance; no MOBILE payment exists to cancel.
    refundWindow: { CARD: 'ANY_TIME', MOBILE: 'ANY_TIME' },
  };
}

const MAY_RECOVER = { outcome: 'DECLINED', decline: 'MAY_RECOVER' } as const;
const INSTRUMENT_DEAD = { outcome: 'DECLINED', decline: 'INSTRUMENT_DEAD' } as const;
const MAYBE_PAID = { outcome: 'UNKNOWN' } as const;
const OUR_CONFIGURATION = { outcome: 'NOT_SENT' } as const;

/**
 * Toss's one outcome table, for the code of a well-formed, non-5xx error answer ({code, message} with a non-2xx
 * status; an approval is a 2xx Payment object and carries no code):
 * - declines that may recover: the card company or the payment refused this time; and any code not listed;
 * - a dead instrument: the card expired or stopped, the billing key is not (or no longer) valid, or it belongs to
 *   another customerKey: no retry until the customer gives a new payment method;
 * - maybe paid: the orderId was already approved (the same charge again, or another one reusing it), or the first
 *   call under this Idempotency-Key is still running: the charge may exist, UNKNOWN;
 * - our configuration: the secret key or the call itself refused before anything was processed: NOT_SENT (reason
 *   REFUSED_UNPROCESSED), nothing marked declined.
 */
export const TOSS_OUTCOMES: OutcomeTable = {
  codes: {
    REJECT_CARD_PAYMENT: MAY_RECOVER,
    REJECT_CARD_COMPANY: MAY_RECOVER,
    INVALID_CARD_EXPIRATION: INSTRUMENT_DEAD,
    INVALID_STOPPED_CARD: INSTRUMENT_DEAD,
    INVALID_BILL_KEY_REQUEST: INSTRUMENT_DEAD,
    NOT_MATCHES_CUSTOMER_KEY: INSTRUMENT_DEAD,
    ALREADY_PROCESSED_PAYMENT: MAYBE_PAID,
    DUPLICATED_ORDER_ID: MAYBE_PAID,
    IDEMPOTENT_REQUEST_PROCESSING: MAYBE_PAID,
    UNAUTHORIZED_KEY: OUR_CONFIGURATION,
    INVALID_API_KEY: OUR_CONFIGURATION,
    INCORRECT_BASIC_AUTH_FORMAT: OUR_CONFIGURATION,
    NOT_SUPPORTED_METHOD: OUR_CONFIGURATION,
  },
  otherwise: MAY_RECOVER,
};

/** The lookup's answer for an orderId Toss never saw (documented: 404 NOT_FOUND_PAYMENT). */
export const TOSS_NOT_FOUND = 'NOT_FOUND_PAYMENT';

/** Payment statuses (documented): DONE is an approval; ABORTED and EXPIRED charged nothing; the rest are undecided here. */
export const TOSS_APPROVED_STATUS = 'DONE';
export const TOSS_UNPAID_STATUSES: readonly string[] = ['ABORTED', 'EXPIRED'];
export const TOSS_CANCELED_STATUSES: readonly string[] = ['CANCELED', 'PARTIAL_CANCELED'];
