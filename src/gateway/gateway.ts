// The gateway interface (docs/gateways.md "The gateway client"): what a payment gateway's adapter implements
// for the engine, and the one place a gateway's facts are written down. The engine (charging, dunning, refunds,
// resolves, reconciliation) calls these operations and reads `capabilities`; it never asks which gateway it holds.
// A third gateway is one file implementing GatewayAdapter (src/gateway/danal.adapter.ts is the model) and its entry
// in the registry (src/gateway/registry.ts).
//
// The contract every operation keeps (docs/architecture.md, invariants 1, 3, 4):
// - Before: the engine has committed the attempt (with its orderId) that the call may move money for; no database
//   transaction is open. The adapter touches no database.
// - The call never throws for a gateway or network failure: it answers exactly one outcome class. NOT_SENT only when
//   the request provably never reached the gateway, or the gateway's outcome table says the code proves nothing was
//   processed (our credentials refused); UNKNOWN for anything short of a complete, well-formed answer (a timeout
//   after sending, a reset, a 5xx, an unreadable body) and for the codes the table says may have charged. An adapter
//   never guesses UNKNOWN away: not by retrying, not by asking the gateway inside the call, not by a timer.
// - SUCCEEDED only for an approval whose orderId and amount, when answered, are the ones sent (else UNKNOWN).
// - After: the answer carries the gateway's code and message as given (redacted: never a key, a secret or a phone
//   number), and the fields the engine records (transactionId, approval time, billing key, card).
import { sameCalendarMonth, KOREA_ZONE } from '../lib/calendar.ts';

export const PAYMENT_METHODS = ['CARD', 'MOBILE'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** A refund's reason, in bytes of UTF-8: every adapter takes one this long (Danal's cancelReason holds 200 bytes). */
export const REFUND_REASON_BYTES = 200;

/** The gateways the engine knows by name (only to pick an adapter from the registry, never to decide a rule). */
export type GatewayName = 'DANAL' | 'TOSS';

export type Outcome = 'SUCCEEDED' | 'DECLINED' | 'NOT_SENT' | 'UNKNOWN';

/** What a DECLINED answer says of the instrument: a retry may recover, or it is dead until the customer gives a new one. */
export type DeclineKind = 'MAY_RECOVER' | 'INSTRUMENT_DEAD';

export type GatewayOperationName = 'CONFIRM_PAYMENT' | 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'CANCEL' | 'INQUIRY' | 'DELETE_KEY' | 'SETTLEMENTS';

/** Why a call ended as it did: stable strings, stored with the attempt and shown to operators. */
export type OutcomeReason =
  | 'APPROVED'
  | 'DECLINED'
  | 'INVALID_REQUEST' // refused locally before sending
  | 'CONNECT_FAILED' // the connection was never established
  | 'NOT_CALLED' // prepared, but the process stopped before sending it (payments/charge.call.ts)
  | 'REFUSED_UNPROCESSED' // the gateway refused the call for a reason that proves nothing was processed (its outcome table)
  | 'MAY_HAVE_CHARGED' // the gateway's code says the charge may exist (its outcome table): UNKNOWN
  | 'TIMEOUT' // no complete answer in time after the request was sent
  | 'CONNECTION_RESET'
  | 'TRUNCATED_BODY'
  | 'HTTP_5XX'
  | 'MALFORMED_BODY'
  | 'UNEXPECTED_STATUS'
  | 'ORDER_ID_MISMATCH'
  | 'AMOUNT_MISMATCH'
  | 'MISSING_TRANSACTION_ID'
  | 'MISSING_BILLING_KEY';

export interface CardInfo {
  cardCode?: string;
  cardName?: string;
  cardNumber?: string;
  installmentMonth?: string;
  approvalNumber?: string;
}

/** Response fields, parsed leniently (docs/api.md "How we fill the gateway's gaps"); unknown fields are kept in `extra`. */
export interface GatewayFields {
  transactionId?: string;
  amount?: number;
  orderId?: string;
  transactionDateTime?: Date;
  billingKey?: string;
  issueKeyOnly?: boolean;
  cardInfo?: CardInfo;
  userName?: string;
  phoneNumber?: string;
  carrier?: string;
  cancelAmount?: number;
  extra: Record<string, unknown>;
}

/** One call's answer: exactly one outcome class (docs/architecture.md, invariant 3). */
export interface GatewayResult {
  operation: GatewayOperationName;
  outcome: Outcome;
  reason: OutcomeReason;
  /** Present when DECLINED: what the gateway's outcome table says of the instrument. */
  decline?: DeclineKind;
  /** Human-readable detail (e.g. which field was invalid); never contains secrets. */
  detail?: string;
  httpStatus?: number;
  code?: string;
  message?: string;
  fields: GatewayFields;
  /** Redacted copy of the response: the parsed JSON, or the first characters of a non-JSON body. */
  raw?: unknown;
  durationMs: number;
}

/**
 * A gateway's one outcome table: what each code of a well-formed, non-5xx answer means. A code not listed takes
 * `otherwise`. SUCCEEDED still needs a 2xx and matching echoes (the client checks); NOT_SENT is allowed only for codes
 * that prove the gateway processed nothing; UNKNOWN for codes that say the charge may exist.
 */
export type OutcomeVerdict = { outcome: 'SUCCEEDED' } | { outcome: 'DECLINED'; decline: DeclineKind } | { outcome: 'UNKNOWN' } | { outcome: 'NOT_SENT' };

export interface OutcomeTable {
  codes: Readonly<Record<string, OutcomeVerdict>>;
  otherwise: OutcomeVerdict;
}

/** The verdict of `code` in `table`. */
export function verdictOf(table: OutcomeTable, code: string): OutcomeVerdict {
  return Object.hasOwn(table.codes, code) ? table.codes[code]! : table.otherwise;
}

/**
 * Until when the gateway still cancels a payment of a method: at any time, or only within the payment's calendar
 * month in Korea time (a mobile carrier bills monthly; after it, a refund is made outside the gateway).
 */
export type RefundWindow = 'ANY_TIME' | 'CALENDAR_MONTH_KST';

/** What a gateway can do; the engine decides by these, never by the gateway's name. */
export interface GatewayCapabilities {
  /**
   * The gateway keeps a key per call and answers a call sent again under it with the first answer. Even so the
   * engine never re-sends an UNKNOWN call (invariant 4): the key makes a retry of a NOT_SENT one safe twice over.
   */
  idempotencyKey: boolean;
  /** The gateway answers what became of an orderId (`inquire`): an UNKNOWN attempt may be finished by asking. Without it, an UNKNOWN waits for an operator or a settlement line. */
  inquiry: boolean;
  /** Per method: a payment may be refunded in part (several refunds up to its amount). */
  partialRefund: Readonly<Record<PaymentMethod, boolean>>;
  /** The gateway deletes a billing key on request (`deleteBillingKey`); without it, revoking a key is ours alone. */
  keyDeletion: boolean;
  /** The gateway serves its settlements by API (`fetchSettlements`); without it, an operator imports its file. */
  settlementFeed: boolean;
  /** The payment methods it takes. */
  methods: readonly PaymentMethod[];
  /** Its MOBILE charges run the carrier's chain (the last transactionId, the same amount, ±5 days: invariant 6). */
  mobileChain: boolean;
  /**
   * The key issuance call itself charges a registration's first payment (its window approved the amount): the
   * issuance's answer is the INITIAL payment's. Without it the issuance charges nothing, and a registration that
   * charges at once (not key-only, no trial) charges its INITIAL payment with the new key right after, as a billing
   * charge (chargeBillingKey) of its own attempt.
   */
  issueCharges: boolean;
  /** Per method: until when the gateway cancels a payment (refundWindowOpen). */
  refundWindow: Readonly<Record<PaymentMethod, RefundWindow>>;
}

/** Whether `window` still lets the gateway cancel a payment approved at `approvedAt`, at `now`. */
export function refundWindowOpen(window: RefundWindow, approvedAt: Date, now: Date): boolean {
  return window === 'ANY_TIME' || sameCalendarMonth(approvedAt, now, KOREA_ZONE);
}

/** Exchange the window's answer for a billing key (and, unless key-only, the registration's first charge where capabilities.issueCharges). */
export interface IssueKeyInput {
  method: PaymentMethod;
  /** The window's single-use token (Danal: the window's transactionId; Toss: its authKey). */
  transactionId: string;
  /** The customer reference the window was opened with, for gateways that bind a key to one (Toss's customerKey). */
  customerKey?: string;
  /** What the registration asked for: an approval answering another orderId or amount is UNKNOWN. */
  expectedOrderId?: string;
  expectedAmount?: number;
}

/** Charge a billing key: the attempt's orderId is its idempotency key where the gateway keeps one. */
export interface ChargeInput {
  method: PaymentMethod;
  billingKey: string;
  userId: string;
  customerKey?: string;
  amount: number;
  orderName: string;
  orderId: string;
  /** MOBILE chain (capabilities.mobileChain): the last successful transaction and the item. */
  lastTransactionId?: string;
  itemCode?: string;
}

/** Confirm a one-time payment the customer approved in the window. */
export interface ConfirmInput {
  method: PaymentMethod;
  transactionId: string;
  amount: number;
  /** The order's own orderId: an approval answering another orderId or amount is UNKNOWN. */
  expectedOrderId?: string;
}

/** Refund (cancel) all or part of a payment. The engine has checked partialRefund and refundWindow before calling. */
export interface RefundInput {
  method: PaymentMethod;
  /** The gateway's id of the payment (Danal's transactionId, Toss's paymentKey). */
  transactionId: string;
  amount: number;
  /** Whether `amount` is all that remains of the payment. */
  whole: boolean;
  reason: string;
  /** The refund attempt's id: its idempotency key where the gateway keeps one. */
  idempotencyKey: string;
}

/** A settlement line as a gateway's feed gives it, in the statement's terms (reconciliation matches it like a file's). */
export interface SettlementFeedLine {
  transactionId: string;
  orderId: string | null;
  type: 'APPROVAL' | 'CANCEL';
  amount: number;
  tradedAt: Date;
  method: PaymentMethod | null;
  fee: number | null;
  settlementDate: string | null;
}

/**
 * What a customer's browser opens a gateway's own key window with, for a gateway whose window is opened by a key of
 * its own (Toss's client key). `url`: a page the gateway gives for it (the sandbox's window in development); without
 * one, the service's own page opens the window with the gateway's script (docs/api.md "Gateways").
 */
export interface GatewayWindow {
  clientKey: string;
  url?: string;
}

/** A gateway adapter: its operations, what it can do, and its outcome table. */
export interface GatewayAdapter {
  readonly name: GatewayName;
  /** Present for a gateway whose window takes a client key (Toss); Danal's window parameters are built from config. */
  readonly window?: GatewayWindow;
  readonly capabilities: GatewayCapabilities;
  readonly outcomes: OutcomeTable;
  issueBillingKey(input: IssueKeyInput): Promise<GatewayResult>;
  chargeBillingKey(input: ChargeInput): Promise<GatewayResult>;
  confirmPayment(input: ConfirmInput): Promise<GatewayResult>;
  refundPayment(input: RefundInput): Promise<GatewayResult>;
  /** Present exactly when capabilities.inquiry: what became of `orderId`. A read: it moves no money, and its UNKNOWN means "ask again later". */
  inquire?(input: { orderId: string }): Promise<GatewayResult>;
  /** Present exactly when capabilities.keyDeletion. */
  deleteBillingKey?(input: { billingKey: string; customerKey?: string }): Promise<GatewayResult>;
  /** Present exactly when capabilities.settlementFeed: the lines of Korea dates `from`..`to`, page by page. */
  fetchSettlements?(input: { from: string; to: string; page?: string }): Promise<{ result: GatewayResult; lines: SettlementFeedLine[]; nextPage?: string }>;
  close(): void;
}
