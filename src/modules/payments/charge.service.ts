// The charging engine (DESIGN.md §3, all rules): claims due subscriptions, charges them through the gateway and
// records every outcome. The scheduler's tick, POST /admin/scheduler/run and the admin charge all come here. Three
// parts: the planner decides (charge.rules.ts, pure), the steps prepare and record one charge (charge.prepare.ts,
// charge.record.ts),
// and this engine claims, runs passes with bounded concurrency and drains on shutdown.
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
import pLimit from 'p-limit';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { sweepExpiredAttempts as sweep } from '../ledger/attempts.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import { explainCharge } from '../ledger/charge.rules.ts';
import { noteTrialsEnding } from '../subscriptions/trials.ts';
import { claimDue, loadChargeInputs, stillDue, type ClaimedRow } from './charge.claim.ts';
import { createChargePrepare } from './charge.prepare.ts';
import { createChargeRecord } from './charge.record.ts';
import type { ChargeReport, OnPrepared, PassReport, Trigger } from './charge.types.ts';
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

export function createChargeService(deps: ChargeDeps, options: ChargeOptions = {}) {
  const oneStatement = options.oneStatement ?? true;
  const { db, gateway, clock, config, log } = deps;
  const { leaseMs, batchSize, concurrency } = config.scheduler;
  const zone = config.timezone;

  let stopping = false;
  const passes = new Set<Promise<PassReport>>();

  const release = releaseSubscription;
  const { prepare } = createChargePrepare(deps);
  const { record, recordAtOnce } = createChargeRecord(deps);

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
   * Charges one subscription whose lease `owner` holds, top-down: prepare (the plan, and the payment and its attempt
   * written, or a refusal answered), call, record (ledger/gateway-call.ts recordAnswer, with the one-statement
   * rendering first for a new cycle). Never throws for gateway outcomes. An answer that could not be recorded releases
   * nothing: the attempt stays IN_FLIGHT under both leases and becomes UNKNOWN in a sweep, which raises the
   * subscription.
   */
  async function chargeClaimed(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared, claimed?: ClaimedRow): Promise<ChargeReport> {
    const ready = await prepare(id, owner, trigger, onPrepared, oneStatement ? claimed : undefined);
    if (ready.kind === 'DONE') return ready.report;
    const result = await gateway.chargeBillingKey({
      method: ready.method,
      billingKey: ready.billingKey,
      userId: ready.userId,
      amount: ready.plan.amount,
      orderName: ready.orderName,
      orderId: ready.orderId,
      ...(ready.method === 'MOBILE' ? { lastTransactionId: ready.plan.lastTransactionId, itemCode: ready.itemCode ?? undefined } : {}),
    });
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
      subscriptionId: id,
      paymentId: ready.paymentId,
      outcome: 'UNKNOWN',
      code: answer.unrecorded,
      message: lost ? 'the lease was lost before the answer was recorded' : 'the gateway answered but the answer could not be recorded',
    };
  }

  async function chargeOrRelease(claimed: ClaimedRow, owner: string): Promise<ChargeReport> {
    const { id } = claimed;
    if (stopping) {
      await release(db, id, owner);
      return { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'shutting down' };
    }
    try {
      return await chargeClaimed(id, owner, 'SCHEDULER', undefined, claimed);
    } catch (error) {
      log.error({ subscriptionId: id, err: error }, 'charging a subscription failed');
      await release(db, id, owner).catch(() => undefined);
      return { subscriptionId: id, outcome: 'SKIPPED', code: 'ERROR' };
    }
  }

  /**
   * One charging pass: sweep dead attempts, then claim due subscriptions in batches until none is left, charging
   * each with bounded concurrency. Idempotent: running it twice, or on several replicas at once, charges every
   * due subscription once. The next batch is claimed as soon as fewer charges are waiting than there are slots, not
   * when the whole batch is done: waiting for a batch's slowest charge left slots idle (BENCHMARKS.md §1).
   */
  async function runPass(): Promise<PassReport> {
    const report: PassReport = { claimed: 0, succeeded: 0, declined: 0, unknown: 0, skipped: 0 };
    if (stopping) return report;
    const pass = (async () => {
      const owner = randomUUID();
      const limit = pLimit(concurrency);
      // The pass charges what was due when it started; what becomes due meanwhile waits for the next pass.
      const dueBy = clock.now();
      // Subscriptions this pass left due (NOT_SENT, a lost lease, an error): not claimed again in this pass.
      const leftDue: string[] = [];
      // Claimed by this pass and not yet checked for being left due (still charging, or done and unchecked): never
      // claimed again meanwhile. A charge can end, and give its lease back, while a claim is on its way to the
      // database, so what is still charging is excluded too, not only what has ended.
      const claimedNotChecked = new Set<string>();
      // Of those, the ones whose charge has ended.
      const unchecked = new Set<string>();
      const running = new Set<Promise<void>>();
      let finished: () => void = () => {};
      await sweepExpiredAttempts(dueBy);
      // Trials ending within 30 days without a consent: subscription.trial_will_end, once (rule 13, in time).
      await noteTrialsEnding(db, dueBy);
      while (!stopping) {
        if (limit.pendingCount >= concurrency) {
          await new Promise<void>((resolve) => (finished = resolve));
          continue;
        }
        const checking = [...unchecked];
        if (checking.length > 0) {
          leftDue.push(...(await stillDue(db, checking, dueBy)));
          for (const id of checking) {
            unchecked.delete(id);
            claimedNotChecked.delete(id);
          }
        }
        const claimed = await claimBatch(owner, dueBy, clock.now(), [...leftDue, ...claimedNotChecked]);
        if (claimed.length === 0) break;
        report.claimed += claimed.length;
        for (const row of claimed) {
          claimedNotChecked.add(row.id);
          const charge = limit(() => chargeOrRelease(row, owner)).then((r) => {
            if (r.outcome === 'SUCCEEDED') report.succeeded += 1;
            else if (r.outcome === 'DECLINED') report.declined += 1;
            else if (r.outcome === 'UNKNOWN') report.unknown += 1;
            else report.skipped += 1;
            unchecked.add(row.id);
            running.delete(charge);
            finished();
          });
          running.add(charge);
        }
      }
      await Promise.all(running);
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
   * Graceful stop: no new claims and no new calls; calls in flight finish and their outcomes are recorded;
   * subscriptions claimed but not started are released. Bounded by `timeoutMs`: after it, anything still in
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
