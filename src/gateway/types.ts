// What the gateway client returns (docs/architecture.md, invariant 3): every call ends in exactly one outcome class.
import type { PaymentMethod } from './fields.ts';

export type Outcome = 'SUCCEEDED' | 'DECLINED' | 'NOT_SENT' | 'UNKNOWN';
export type GatewayOperationName = 'CONFIRM_PAYMENT' | 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'CANCEL';

/** Why a call ended as it did: stable strings, stored with the attempt and shown to operators. */
export type OutcomeReason =
  | 'APPROVED'
  | 'DECLINED'
  | 'INVALID_REQUEST' // refused locally before sending
  | 'CONNECT_FAILED' // the connection was never established
  | 'NOT_CALLED' // prepared, but the process stopped before sending it (charge.call.ts)
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

export interface GatewayResult {
  operation: GatewayOperationName;
  outcome: Outcome;
  reason: OutcomeReason;
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

export interface ConfirmPaymentInput {
  method: PaymentMethod;
  transactionId: string;
  amount: number;
  /** The order's own orderId: an approval answering another orderId or amount is UNKNOWN. */
  expectedOrderId?: string;
}

export interface IssueBillingKeyInput {
  method: PaymentMethod;
  transactionId: string;
  /** What the registration asked for: an approval answering another orderId or amount is UNKNOWN. */
  expectedOrderId?: string;
  expectedAmount?: number;
}

export interface ChargeBillingKeyInput {
  method: PaymentMethod;
  billingKey: string;
  userId: string;
  amount: number;
  orderName: string;
  orderId: string;
  lastTransactionId?: string;
  itemCode?: string;
}

export interface CancelPaymentInput {
  method: PaymentMethod;
  transactionId: string;
  amount: number;
  cancelType: 'C' | 'P';
  cancelReason: string;
  cancelRequester: string;
}

export interface GatewayClient {
  confirmPayment(input: ConfirmPaymentInput): Promise<GatewayResult>;
  issueBillingKey(input: IssueBillingKeyInput): Promise<GatewayResult>;
  chargeBillingKey(input: ChargeBillingKeyInput): Promise<GatewayResult>;
  cancelPayment(input: CancelPaymentInput): Promise<GatewayResult>;
  close(): void;
}
