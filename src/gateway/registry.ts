// The gateways the service runs, by name (gateway.ts): built once by the gateway plugin. A payment or a billing key
// names its gateway only to find its adapter here; what the engine then does depends on the adapter's capabilities.
import type { GatewayAdapter, GatewayName, GatewayOperationName, GatewayResult } from './gateway.ts';

/** Danal always runs; another gateway is present only when it is configured. */
export type Gateways = { readonly DANAL: GatewayAdapter } & Readonly<Partial<Record<GatewayName, GatewayAdapter>>>;

/**
 * Where an adapter's operations disagree with what its capabilities state (an optional operation present exactly
 * when its capability says so; MOBILE's chain only with MOBILE): the engine decides by the capabilities alone, so an
 * adapter that says one thing and does another is refused at start. Empty when the adapter is consistent.
 */
export function adapterProblems(adapter: GatewayAdapter): string[] {
  const { capabilities: can } = adapter;
  const problems: string[] = [];
  const pairs = [
    ['inquiry', 'inquire', can.inquiry, adapter.inquire],
    ['keyDeletion', 'deleteBillingKey', can.keyDeletion, adapter.deleteBillingKey],
    ['settlementFeed', 'fetchSettlements', can.settlementFeed, adapter.fetchSettlements],
  ] as const;
  for (const [capability, operation, stated, present] of pairs) {
    if (stated !== (present !== undefined)) problems.push(`${capability} is ${stated} but ${operation} is ${present ? 'present' : 'absent'}`);
  }
  if (can.mobileChain && !can.methods.includes('MOBILE')) problems.push('mobileChain without MOBILE in methods');
  // The chain starts with the registration's own payment, which the window approves and the issuance charges.
  if (can.mobileChain && !can.issueCharges) problems.push('mobileChain without issueCharges');
  return problems;
}

/** The registry, each adapter checked (adapterProblems) under its own name. */
export function createGateways(adapters: Gateways): Gateways {
  for (const [name, adapter] of Object.entries(adapters) as Array<[GatewayName, GatewayAdapter | undefined]>) {
    if (!adapter) continue;
    const problems = adapter.name === name ? adapterProblems(adapter) : [`registered as ${name} but named ${adapter.name}`];
    if (problems.length > 0) throw new Error(`gateway adapter ${name}: ${problems.join('; ')}`);
  }
  return adapters;
}

/**
 * The adapter that stands for a gateway not configured here (a Toss row while TOSS_* are unset): every call answers
 * NOT_SENT (the request provably never left: invariant 3), so a charge or a refund of such a row is recorded as not
 * sent and tried again as itself once the gateway is configured. It can do nothing, and says so in its capabilities.
 */
export function unconfiguredGateway(name: GatewayName): GatewayAdapter {
  const notSent = async (operation: GatewayOperationName): Promise<GatewayResult> => ({
    operation,
    outcome: 'NOT_SENT',
    reason: 'INVALID_REQUEST',
    detail: `the ${name} gateway is not configured`,
    fields: { extra: {} },
    durationMs: 0,
  });
  return {
    name,
    capabilities: {
      idempotencyKey: false,
      inquiry: false,
      partialRefund: { CARD: false, MOBILE: false },
      keyDeletion: false,
      settlementFeed: false,
      methods: [],
      mobileChain: false,
      issueCharges: false,
      refundWindow: { CARD: 'ANY_TIME', MOBILE: 'ANY_TIME' },
    },
    outcomes: { codes: {}, otherwise: { outcome: 'NOT_SENT' } },
    issueBillingKey: () => notSent('ISSUE_KEY'),
    chargeBillingKey: () => notSent('BILLING_CONFIRM'),
    confirmPayment: () => notSent('CONFIRM_PAYMENT'),
    refundPayment: () => notSent('CANCEL'),
    close: () => {},
  };
}

/** The adapter of `name`; undefined when that gateway is not configured. */
export function gatewayOf(gateways: Gateways, name: GatewayName): GatewayAdapter | undefined {
  return gateways[name];
}
