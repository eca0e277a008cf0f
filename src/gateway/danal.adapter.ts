// Danal behind the gateway interface (gateway.ts): its wire client (client.ts, fields.ts: the requests and their
// bytes exactly as before), its capabilities and its outcome table (danal.capabilities.ts). The adapter only
// translates the interface's refund into Danal's cancellation; every other operation is the client's own call.
import type { GatewayAdapter } from './gateway.ts';
import type { GatewayClient } from './types.ts';
import { DANAL_CAPABILITIES, DANAL_OUTCOMES } from './danal.capabilities.ts';

/** Who asks Danal to cancel: the merchant's operator (the portal's withdrawal goes through the same refund path). */
const CANCEL_REQUESTER = 'MERCHANT_OPERATOR';

export function createDanalAdapter(client: GatewayClient): GatewayAdapter {
  return {
    name: 'DANAL',
    capabilities: DANAL_CAPABILITIES,
    outcomes: DANAL_OUTCOMES,
    issueBillingKey: (input) => client.issueBillingKey(input),
    chargeBillingKey: (input) => client.chargeBillingKey(input),
    confirmPayment: (input) => client.confirmPayment(input),
    // Danal keeps no idempotency key: the refund attempt's id stays ours.
    refundPayment: (input) =>
      client.cancelPayment({
        method: input.method,
        transactionId: input.transactionId,
        amount: input.amount,
        cancelType: input.whole ? 'C' : 'P',
        cancelReason: input.reason,
        cancelRequester: CANCEL_REQUESTER,
      }),
    close: () => client.close(),
  };
}
