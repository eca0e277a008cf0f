// The gateways the service runs, by name (gateway.ts): built once by the gateway plugin. A payment or a billing key
// names its gateway only to find its adapter here; what the engine then does depends on the adapter's capabilities.
import type { GatewayAdapter, GatewayName } from './gateway.ts';

/** Danal always runs; another gateway is present only when it is configured. */
export type Gateways = { readonly DANAL: GatewayAdapter } & Readonly<Partial<Record<GatewayName, GatewayAdapter>>>;

/** The adapter of `name`; undefined when that gateway is not configured. */
export function gatewayOf(gateways: Gateways, name: GatewayName): GatewayAdapter | undefined {
  return gateways[name];
}
