// A prepared charge's gateway call, or why it is not sent (docs/architecture.md, invariants 1, 3, 4 and 5): the call
// is made with no transaction open, only while the lease taken at preparation outlasts it; a charge not sent is
// answered NOT_SENT, recorded like any answer, and sent again as itself (same attempt, same orderId) by a later pass.
import type { GatewayResult } from '../../gateway/gateway.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { Ready } from './charge.types.ts';

/**
 * The gateway call of a prepared charge, through its key's gateway: no transaction is open (invariant 1); never
 * throws for gateway outcomes.
 */
export function sendCharge(deps: Pick<ServiceDeps, 'gateway' | 'gateways'>, ready: Ready): Promise<GatewayResult> {
  return gatewayFor(deps, ready.gateway).chargeBillingKey({
    method: ready.method,
    billingKey: ready.billingKey,
    userId: ready.userId,
    ...(ready.customerKey ? { customerKey: ready.customerKey } : {}),
    amount: ready.plan.amount,
    orderName: ready.orderName,
    orderId: ready.orderId,
    ...(ready.method === 'MOBILE' ? { lastTransactionId: ready.plan.lastTransactionId, itemCode: ready.itemCode ?? undefined } : {}),
  });
}

/**
 * What a prepared charge's lease must still have left when its call starts, beyond the gateway's timeout: the answer's
 * record, and clocks of replicas that disagree a little (the sweep that turns an expired attempt UNKNOWN may run on
 * another replica).
 */
const SEND_MARGIN_MS = 5_000;

/**
 * Whether a prepared charge may still be sent: the lease it took at preparation outlasts the longest call (the
 * gateway's timeout) and the margin. Past that, a sweep could make its attempt UNKNOWN while or before it is sent
 * (invariants 4, 5). A lease configured shorter than that (SCHEDULER_LEASE_MS is free) would never send anything: there
 * the room asked is half the lease, so a charge waits for a slot at most half its lease, and is sent, as a charge
 * prepared and called at once is, with the rest of it.
 */
export function leaseHasRoom(deps: Pick<ServiceDeps, 'clock' | 'config'>, ready: Ready): boolean {
  const { config, clock } = deps;
  const roomMs = Math.min(config.gateway.timeoutMs + SEND_MARGIN_MS, Math.floor(config.scheduler.leaseMs / 2));
  return clock.now().getTime() + roomMs < ready.leaseExpiresAt.getTime();
}

/** The answer recorded for a charge prepared and never sent (invariant 3: NOT_SENT): sent again as itself later. */
const notCalled = (detail: string): GatewayResult => ({
  operation: 'BILLING_CONFIRM',
  outcome: 'NOT_SENT',
  reason: 'NOT_CALLED',
  detail,
  fields: { extra: {} },
  durationMs: 0,
});
export const stoppingNotCalled = notCalled('the service was stopping before this charge was sent');
export const leaseShortNotCalled = notCalled('the lease taken at preparation had no room left for the call');
export const gatewayRefusedNotCalled = notCalled('its gateway refused our configuration earlier in this pass');
