// The gateways the service runs, by name (gateway.ts): built once by the gateway plugin. A payment or a billing key
// names its gateway only to find its adapter here; what the engine then does depends on the adapter's capabilities.
import type { GatewayAdapter, GatewayName } from './gateway.ts';

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

/** The adapter of `name`; undefined when that gateway is not configured. */
export function gatewayOf(gateways: Gateways, name: GatewayName): GatewayAdapter | undefined {
  return gateways[name];
}
