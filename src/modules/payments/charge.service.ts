// The charging engine (DESIGN.md §3, all rules): claims due subscriptions, charges them through the gateway and
// records every outcome. The scheduler's tick, POST /admin/scheduler/run and the admin charge all come here. Three
// parts: the planner decides (charge.rules.ts, pure), the steps prepare and record charges (charge.prepare.ts,
// charge.record.ts), and this engine runs passes (each a pipeline: charge.pipeline.ts), the operators' single
// charges, and drains on shutdown.
//
// Invariants kept here:
// - claims take a lease on the subscription row with FOR UPDATE SKIP LOCKED, so replicas never work on the same
//   subscription at once; every later write is fenced on that lease (rule 5);
// - the payment and an IN_FLIGHT attempt with a deterministic orderId are committed before the gateway is
//   called, and no transaction is open during the call (rules 1, 2);
// - the database allows one successful payment per cycle (payments_one_success_per_cycle), whatever happens here;
// - a MOBILE success stores its transactionId as the next chain head in the transaction that records it (rule 6);
// - UNKNOWN is never retried and never turned into a failure: it raises needsAttention (rule 4). An attempt left
//   IN_FLIGHT past its lease (a dead process) becomes UNKNOWN in the sweep that starts every pass;
// - a subscription is charged at most once per pass, for the period containing now (rule 10).
import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { sweepExpiredAttempts as sweep } from '../ledger/attempts.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import { explainCharge } from '../ledger/charge.rules.ts';
import { noteTrialsEnding } from '../subscriptions/trials.ts';
import { claimDue, loadChargeInputs, type ClaimedRow } from './charge.claim.ts';
import { runPassPipeline } from './charge.pipeline.ts';
import { createChargePrepare } from './charge.prepare.ts';
import { createChargeRecord } from './charge.record.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ChargeReport, OnPrepared, PassReport, Ready, Trigger } from './charge.types.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { leaseFreeWhere } from '../ledger/lease.queries.ts';

export { chargeOrderId, type ChargeReport, type PassReport } from './charge.types.ts';
export type ChargeDeps = ServiceDeps;

export interface ChargeOptions {
  /**
   * Prepare and record a new cycle's common case in one statement each (default). Off, every charge takes the
   * transactional steps: the same writes through Prisma (test/modules/payments/charge-paths.test.ts compares them).
   */
  oneStatement?: boolean;
}

/**
 * What a prepared charge's lease must still have left when its call starts, beyond the gateway's timeout: the answer's
 * record, and clocks of replicas that disagree a little (the sweep that turns an expired attempt UNKNOWN may run on
 * another replica).
 */
const SEND_MARGIN_MS = 5_000;

export function createChargeService(deps: ChargeDeps, options: ChargeOptions = {}) {
  const oneStatement = options.oneStatement ?? true;
  const { db, gateway, clock, config, log } = deps;
  const { leaseMs, batchSize, concurrency } = config.scheduler;
  const zone = config.timezone;

  let stopping = false;
  const passes = new Set<Promise<PassReport>>();

  const release = releaseSubscription;
  const { prepare, prepareNewCycles } = createChargePrepare(deps);
  const { record, recordAtOnce, recordApprovals } = createChargeRecord(deps);

  /** Claims up to a batch of subscriptions due by `dueBy` whose lease is free at `now` (charge.claim.ts). */
  const claimBatch = (owner: string, dueBy: Date, now: Date, exclude: string[]): Promise<ClaimedRow[]> =>
    claimDue(db, { owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), dueBy, now, exclude, limit: batchSize });

  /** Takes the lease on one subscription for an operator's charge; false when someone else holds it. */
  async function claimOne(id: string, owner: string, now: Date): Promise<boolean> {
    const claimed = await db.subscription.updateMany({
      where: { id, ...leaseFreeWhere(now) },
      data: { leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs) },
    });
    return claimed.count === 1;
  }

  /** Every attempt left IN_FLIGHT past its lease, of every operation, becomes UNKNOWN (attempts.ts). */
  const sweepExpiredAttempts = (now: Date) => sweep(db, now, log);

  /**
   * Whether a prepared charge may still be sent: the lease it took at preparation outlasts the longest call (the
   * gateway's timeout) and the margin. Past that, a sweep could make its attempt UNKNOWN while or before it is sent
   * (rules 4, 5). A lease configured shorter than that (SCHEDULER_LEASE_MS is free) would never send anything: there
   * the room asked is half the lease, so a charge waits for a slot at most half its lease, and is sent, as a charge
   * prepared and called at once is, with the rest of it.
   */
  const roomMs = Math.min(config.gateway.timeoutMs + SEND_MARGIN_MS, Math.floor(leaseMs / 2));
  const leaseHasRoom = (ready: Ready) => clock.now().getTime() + roomMs < ready.leaseExpiresAt.getTime();

  /** The gateway call of a prepared charge: no transaction is open (rule 1); never throws for gateway outcomes. */
  const call = (ready: Ready) =>
    gateway.chargeBillingKey({
      method: ready.method,
      billingKey: ready.billingKey,
      userId: ready.userId,
      amount: ready.plan.amount,
      orderName: ready.orderName,
      orderId: ready.orderId,
      ...(ready.method === 'MOBILE' ? { lastTransactionId: ready.plan.lastTransactionId, itemCode: ready.itemCode ?? undefined } : {}),
    });

  /**
   * Records one answer (ledger/gateway-call.ts recordAnswer, with the one-statement rendering first for a new cycle).
   * An answer that could not be recorded releases nothing: the attempt stays IN_FLIGHT under both leases and becomes
   * UNKNOWN in a sweep, which raises the subscription.
   */
  async function recordOne(ready: Ready, result: GatewayResult): Promise<ChargeReport> {
    const answer = await recordAnswer(
      { db, clock, log },
      ready,
      result,
      (tx, now) => record(tx, ready, result, now),
      oneStatement ? (now) => recordAtOnce(ready, result, now) : undefined,
    );
    if ('recorded' in answer) return answer.recorded;
    const lost = answer.unrecorded === 'LEASE_LOST';
    return {
      subscriptionId: ready.subscriptionId,
      paymentId: ready.paymentId,
      outcome: 'UNKNOWN',
      code: answer.unrecorded,
      message: lost ? 'the lease was lost before the answer was recorded' : 'the gateway answered but the answer could not be recorded',
    };
  }

  /** Charges one subscription whose lease `owner` holds, top-down: prepare (transactional), call, record. */
  async function chargeClaimed(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared): Promise<ChargeReport> {
    const ready = await prepare(id, owner, trigger, onPrepared);
    if (ready.kind === 'DONE') return ready.report;
    return recordOne(ready, await call(ready));
  }

  /**
   * One charging pass: sweep dead attempts, then claim due subscriptions in batches until none is left, through the
   * pipeline of charge.pipeline.ts (a slot holds only the gateway call). Idempotent: running it twice, or on several
   * replicas at once, charges every due subscription once.
   */
  async function runPass(): Promise<PassReport> {
    const report: PassReport = { claimed: 0, succeeded: 0, declined: 0, unknown: 0, skipped: 0 };
    if (stopping) return report;
    const pass = (async () => {
      const owner = randomUUID();
      // The pass charges what was due when it started; what becomes due meanwhile waits for the next pass.
      const dueBy = clock.now();
      await sweepExpiredAttempts(dueBy);
      // Trials ending within 30 days without a consent: subscription.trial_will_end, once (rule 13, in time).
      await noteTrialsEnding(db, dueBy);
      await runPassPipeline(
        {
          db,
          clock,
          log,
          owner,
          dueBy,
          concurrency,
          oneStatement,
          isStopping: () => stopping,
          claimBatch,
          prepare,
          prepareNewCycles,
          recordApprovals,
          recordOne,
          call,
          leaseHasRoom,
        },
        report,
      );
      if (report.claimed > 0) log.info(report, 'charging pass finished');
      return report;
    })();
    passes.add(pass);
    try {
      return await pass;
    } finally {
      passes.delete(pass);
    }
  }

  /**
   * An operator's charge of one subscription, through the same rules (used by the admin routes). `onPrepared`
   * runs inside the transaction that commits the payment and its attempt (the admin audit event goes there).
   */
  async function chargeSubscription(id: string, options: { onPrepared?: OnPrepared } = {}): Promise<ChargeReport> {
    const owner = randomUUID();
    if (!(await claimOne(id, owner, clock.now())))
      return { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'the subscription is being charged right now' };
    try {
      return await chargeClaimed(id, owner, 'ADMIN', options.onPrepared);
    } catch (error) {
      await release(db, id, owner).catch(() => undefined);
      throw error;
    }
  }

  /** The rules an operator's charge would meet now, without claiming or charging anything. */
  async function explainSubscriptionCharge(id: string) {
    const inputs = await loadChargeInputs(db, id, { now: clock.now(), timezone: zone, trigger: 'ADMIN', consentRequired: config.consentRequired });
    return inputs && explainCharge(inputs.planSub, inputs.openInput, inputs.ctx);
  }

  /**
   * Graceful stop: no new claims and no new calls; calls in flight finish and their outcomes are recorded; charges
   * prepared and not sent are recorded NOT_SENT (sent again as themselves by a later pass); subscriptions claimed but
   * not prepared are released. Bounded by `timeoutMs`: after it, anything still in
   * flight is left to its lease (and becomes UNKNOWN in a later sweep).
   */
  async function stop(timeoutMs: number): Promise<boolean> {
    stopping = true;
    if (passes.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = Promise.allSettled([...passes]).then(() => true as const);
    const finished = await Promise.race([drained, timedOut]);
    clearTimeout(timer);
    return finished;
  }

  return { runPass, chargeSubscription, explainSubscriptionCharge, sweepExpiredAttempts, stop };
}

export type ChargeService = ReturnType<typeof createChargeService>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The charging engine of this app (app.ts), for tests and the bench. */
    charges: ChargeService;
  }
}
