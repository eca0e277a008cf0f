// Which adapter a row is charged, refunded or issued through (docs/api.md "Gateways"): the gateway its registration,
// billing key or payment names, never one chosen by a rule. What the engine then does depends only on that
// adapter's capabilities and outcome table. A gateway not configured here answers every call NOT_SENT
// (unconfiguredGateway): the row waits, recorded as not sent, and nothing is guessed.
import type { GatewayAdapter, GatewayName } from '../../gateway/gateway.ts';
import { gatewayOf, unconfiguredGateway } from '../../gateway/registry.ts';
import type { ServiceDeps } from './service-deps.ts';

/** The adapter of `gateway` (a row's `gateway` column). */
export function gatewayFor(deps: Pick<ServiceDeps, 'gateway' | 'gateways'>, gateway: GatewayName): GatewayAdapter {
  const registry = deps.gateways ?? { DANAL: deps.gateway };
  return gatewayOf(registry, gateway) ?? unconfiguredGateway(gateway);
}
