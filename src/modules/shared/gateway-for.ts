// Which adapter a row is charged, refunded or issued through (docs/api.md "Gateways"): the gateway its registration,
// billing key or payment names, never one chosen by a rule. What the engine then does depends only on that
// adapter's capabilities and outcome table. A gateway not configured here answers every call NOT_SENT
// (unconfiguredGateway): the row waits, recorded as not sent, and nothing is guessed.
import type { GatewayAdapter, GatewayName, PaymentMethod } from '../../gateway/gateway.ts';
import { gatewayOf, unconfiguredGateway } from '../../gateway/registry.ts';
import { defineError } from '../../lib/errors.ts';
import type { ServiceDeps } from './service-deps.ts';

export const MethodNotSupportedByGatewayError = defineError('METHOD_NOT_SUPPORTED_BY_GATEWAY', '%s', 400);
export const GatewayNotConfiguredError = defineError('GATEWAY_NOT_CONFIGURED', '%s', 422);

/** The adapter of `gateway` (a row's `gateway` column). */
export function gatewayFor(deps: Pick<ServiceDeps, 'gateway' | 'gateways'>, gateway: GatewayName): GatewayAdapter {
  const registry = deps.gateways ?? { DANAL: deps.gateway };
  return gatewayOf(registry, gateway) ?? unconfiguredGateway(gateway);
}

/**
 * The adapter a new registration's window goes through: the gateway asked for must run here (else 422
 * GATEWAY_NOT_CONFIGURED) and take the method by its capabilities (else 400 METHOD_NOT_SUPPORTED_BY_GATEWAY).
 */
export function chooseGateway(deps: Pick<ServiceDeps, 'gateway' | 'gateways'>, gateway: GatewayName, method: PaymentMethod): GatewayAdapter {
  const adapter = gatewayOf(deps.gateways ?? { DANAL: deps.gateway }, gateway);
  if (!adapter) throw new GatewayNotConfiguredError(`The ${gateway} gateway is not configured here`);
  if (!adapter.capabilities.methods.includes(method)) throw new MethodNotSupportedByGatewayError(`${gateway} does not take ${method}`);
  return adapter;
}
