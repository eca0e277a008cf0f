// Which gateways refuse our configuration now (docs/operating.md "Metrics, audit and limits"): the one process-wide
// record of it, read by GET /ready (health.routes.ts) and by the metrics' gauge (src/plugins/metrics.ts; app.ts
// wires both). Every call of every gateway passes here through the instrumented adapter, whatever made it (a charging
// pass, an operator's charge, a refund, a key issuance). A call the gateway's outcome table answers NOT_SENT with
// REFUSED_UNPROCESSED (our secret key or the call itself refused before anything was processed) marks the gateway
// refused, with its code and since when; a later call the gateway answered under our credentials clears it. A call
// that proves nothing either way (a timeout, a refused connection, a 5xx) leaves it as it is. In memory: each replica
// learns it from its own calls, and a restart forgets it until the next call says so again. Never holds a secret: the
// gateway's name, its code and times only.
import type { GatewayName, GatewayResult } from '../../gateway/gateway.ts';
import type { Clock } from '../../lib/clock.ts';

export interface GatewayRefusal {
  gateway: GatewayName;
  /** The gateway's code (e.g. UNAUTHORIZED_KEY); null when it gave none. */
  code: string | null;
  /** The first refusal since the gateway last answered normally, and the latest. */
  since: Date;
  lastAt: Date;
}

/**
 * The gateway refused our configuration (its outcome table's NOT_SENT codes, reason REFUSED_UNPROCESSED): nothing was
 * processed, and every other call with the same credentials would be refused alike. The charging pass stops calling
 * that gateway on it (payments/charge.pipeline.ts).
 */
export function refusesConfiguration(result: Pick<GatewayResult, 'outcome' | 'reason'>): boolean {
  return result.outcome === 'NOT_SENT' && result.reason === 'REFUSED_UNPROCESSED';
}

/**
 * The gateway read the call under our credentials and answered it: an approval, a decline, a code that says the charge
 * may exist, or a 2xx it answered (even one we hold UNKNOWN for a mismatch).
 */
function answeredUnderOurCredentials(result: Pick<GatewayResult, 'outcome' | 'reason' | 'httpStatus'>): boolean {
  if (result.outcome === 'SUCCEEDED' || result.outcome === 'DECLINED') return true;
  if (result.reason === 'MAY_HAVE_CHARGED') return true;
  return result.httpStatus !== undefined && result.httpStatus >= 200 && result.httpStatus <= 299;
}

export function createGatewayRefusals(clock: Pick<Clock, 'now'>) {
  const refused = new Map<GatewayName, GatewayRefusal>();
  return {
    /** Notes one call's answer; true when the gateway refused our configuration on it. */
    observe(gateway: GatewayName, result: GatewayResult): boolean {
      if (refusesConfiguration(result)) {
        const now = clock.now();
        refused.set(gateway, { gateway, code: result.code ?? null, since: refused.get(gateway)?.since ?? now, lastAt: now });
        return true;
      }
      if (answeredUnderOurCredentials(result)) refused.delete(gateway);
      return false;
    },
    /** The gateways refusing our configuration now, by name. */
    refused(): GatewayRefusal[] {
      return [...refused.values()].sort((a, b) => a.gateway.localeCompare(b.gateway));
    },
  };
}

export type GatewayRefusals = ReturnType<typeof createGatewayRefusals>;
