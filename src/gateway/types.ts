// Danal's wire client (client.ts): its inputs and the client it makes. The answer's types are the gateway
// interface's (gateway.ts), named here too for the client's callers; the engine reaches Danal only through its
// adapter (danal.adapter.ts).
import type { ChargeInput, ConfirmInput, GatewayOperationName, GatewayResult, IssueKeyInput, PaymentMethod } from './gateway.ts';

export type { CardInfo, GatewayFields, GatewayOperationName, GatewayResult, Outcome, OutcomeReason } from './gateway.ts';

/** The operations Danal's interface has (its sandbox's fault targets). */
export type DanalOperationName = Extract<GatewayOperationName, 'CONFIRM_PAYMENT' | 'ISSUE_KEY' | 'BILLING_CONFIRM' | 'CANCEL'>;

export type ConfirmPaymentInput = ConfirmInput;
export type IssueBillingKeyInput = IssueKeyInput;
export type ChargeBillingKeyInput = ChargeInput;

/** Danal's cancellation as its wire has it: C cancels the whole payment, P a part. */
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
