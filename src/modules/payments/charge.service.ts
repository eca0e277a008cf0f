// The charging engine (docs/architecture.md "Money-safety invariants", all of them): claims due subscriptions, charges them through the gateway and
// records every outcome. The scheduler's tick, POST /admin/scheduler/run and the admin charge all come here. This
// factory only wires the engine's dependencies and drains on shutdown: the planner decides (charge.rules.ts, pure),
// a pass runs top-down in charge.pipeline.ts (claim, prepare, call, record: charge.claim.ts, charge.prepare.ts,
// charge.call.ts, charge.record.ts), and an operator's single charge in charge.one.ts.
//
// Invariants kept here:
// - claims take a lease on the subscription row with FOR UPDATE SKIP LOCKED, so replicas never work on the same
//   subscription at once; every later write is fenced on that lease (invariant 5);
// - the payment and an IN_FLIGHT attempt with a deterministic orderId are committed before the gateway is
//   called, and no transaction is open during the call (invariants 1, 2);
// - the database allows one successful payment per cycle (payments_one_success_per_cycle), whatever happens here;
// - a MOBILE success stores its transactionId as the next chain head in the transaction that records it (invariant 6);
// - UNKNOWN is never retried and never turned into a failure: it raises needsAttention (invariant 4). An attempt left
//   IN_FLIGHT past its lease (a dead process) becomes UNKNOWN in the sweep that starts every pass;
// - a subscription is charged at most once per pass, for the period containing now (invariant 10).
import type { ServiceDeps } from '../shared/service-deps.ts';
import { createPassTracker } from '../shared/passes.ts';
import { sweepExpiredAttempts as sweep } from '../ledger/attempts.ts';
import { chargeOne, explainOne } from './charge.one.ts';
import { runChargePass } from './charge.pipeline.ts';
import { emptyPassReport, type ChargeDeps, type OnPrepared, type PassReport } from './charge.types.ts';

export { chargeOrderId, type ChargeReport, type PassReport } from './charge.types.ts';

export interface ChargeOptions {
  /**
   * Prepare and record a new cycle's common case in one statement each (default). Off, every charge takes the
   * transactional steps: the same writes through Prisma (test/modules/payments/charge-paths.test.ts compares them).
   */
  oneStatement?: boolean;
}

export function createChargeService(deps: ServiceDeps, options: ChargeOptions = {}) {
  const engine: ChargeDeps = { ...deps, oneStatement: options.oneStatement ?? true };
  let stopping = false;
  const passes = createPassTracker();

  /**
   * One charging pass (charge.pipeline.ts): sweep dead attempts, then claim due subscriptions in batches until none is
   * left. Idempotent: running it twice, or on several replicas at once, charges every due subscription once.
   */
  async function runPass(): Promise<PassReport> {
    if (stopping) return emptyPassReport();
    return passes.track(runChargePass(engine, () => stopping));
  }

  /**
   * Graceful stop: no new claims and no new calls; calls in flight finish and their outcomes are recorded; charges
   * prepared and not sent are recorded NOT_SENT (sent again as themselves by a later pass); subscriptions claimed but
   * not prepared are released. Bounded by `timeoutMs`: after it, anything still in
   * flight is left to its lease (and becomes UNKNOWN in a later sweep).
   */
  async function stop(timeoutMs: number): Promise<boolean> {
    stopping = true;
    return passes.drain(timeoutMs);
  }

  return {
    runPass,
    /** An operator's charge of one subscription, through the same rules (charge.one.ts; the admin routes). */
    chargeSubscription: (id: string, options: { onPrepared?: OnPrepared } = {}) => chargeOne(engine, id, options.onPrepared),
    /** The rules an operator's charge would meet now, without claiming or charging anything. */
    explainSubscriptionCharge: (id: string) => explainOne(engine, id),
    /** Every attempt left IN_FLIGHT past its lease, of every operation, becomes UNKNOWN (attempts.ts). */
    sweepExpiredAttempts: (now: Date) => sweep(deps.db, now, deps.log),
    stop,
    /** Resolves once no charging pass runs in this process: background work that must not slow one waits on it. */
    idle: () => passes.idle(),
  };
}

export type ChargeService = ReturnType<typeof createChargeService>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The charging engine of this app (app.ts), for tests and the bench. */
    charges: ChargeService;
  }
}
