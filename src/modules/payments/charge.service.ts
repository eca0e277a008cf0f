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

/** The answer recorded for a charge prepared and never sent (rule 3: NOT_SENT): sent again as itself later. */
const notCalled = (detail: string): GatewayResult => ({
  operation: 'BILLING_CONFIRM',
  outcome: 'NOT_SENT',
  reason: 'NOT_CALLED',
  detail,
  fields: { extra: {} },
  durationMs: 0,
});
const stoppingNotCalled = notCalled('the service was stopping before this charge was sent');
const leaseShortNotCalled = notCalled('the lease taken at preparation had no room left for the call');

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
   * One charging pass: sweep dead attempts, then claim due subscriptions in batches until none is left. Idempotent:
   * running it twice, or on several replicas at once, charges every due subscription once.
   *
   * A pipeline of three stages, so that a slot (SCHEDULER_CONCURRENCY) is held only for the gateway call:
   * - the feeder claims batches and prepares them in one statement per batch of up to half the slots, two batches
   *   at a time (prepareNewCycles; what it does not take goes through the transactional prepare), keeping at most
   *   `concurrency` charges prepared (or being prepared) and waiting for a slot;
   * - each slot takes a prepared charge, calls the gateway, hands the answer to the recorder and takes the next;
   * - the recorder writes the answers waiting, new cycles' approvals in one statement per batch (recordApprovals)
   *   and the others one by one (recordOne); the slots wait when `2 × concurrency` answers wait for it.
   * Every row keeps its own lease fence in each statement (rule 5), every payment and attempt is committed before its
   * call (rule 1), and no transaction is open during a call. What waits in memory is bounded by the concurrency and
   * the claim's batch size, whatever the size of the drain.
   */
  async function runPass(): Promise<PassReport> {
    const report: PassReport = { claimed: 0, succeeded: 0, declined: 0, unknown: 0, skipped: 0 };
    if (stopping) return report;
    const pass = (async () => {
      const owner = randomUUID();
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
      // The stages' queues: claimed and not prepared; prepared and waiting for a slot; answered and not recorded.
      const claimed: ClaimedRow[] = [];
      const ready: Ready[] = [];
      const answered: { ready: Ready; result: GatewayResult }[] = [];
      let recording = 0;
      let feeding = true;
      // The per-row transactions of the pass (answers recorded one by one, charges prepared one by one) share one limit
      // of half the slots, well inside the pool (app.ts sizes it concurrency + ceil(webhooks / 2) + 4, and the pass's
      // batch statements, two prepares, one record and a claim, take their own connections). Unlimited, a batch of
      // declines opened up to 4 × concurrency transactions at once, and those Prisma could not start within its wait
      // were lost: left IN_FLIGHT, then UNKNOWN, though the gateway had answered a definite decline. With the limit at
      // concurrency, 1 of 384 declines was still lost that way at 64 slots on a loaded 2-core machine (the burst opens
      // new connections all at once); with half, none in two runs. Only the uncommon answers wait on it: new cycles'
      // approvals are recorded in one statement per batch.
      const rowWrite = pLimit(Math.ceil(concurrency / 2));
      let failure: unknown;
      // One signal for every change of the queues: each waiter checks its own condition again.
      let wake: () => void = () => {};
      let changed = new Promise<void>((resolve) => (wake = resolve));
      const notify = () => {
        const resolve = wake;
        changed = new Promise<void>((r) => (wake = r));
        resolve();
      };
      const ended = (report_: ChargeReport) => {
        if (report_.outcome === 'SUCCEEDED') report.succeeded += 1;
        else if (report_.outcome === 'DECLINED') report.declined += 1;
        else if (report_.outcome === 'UNKNOWN') report.unknown += 1;
        else report.skipped += 1;
        unchecked.add(report_.subscriptionId);
        notify();
      };
      const failed = async (id: string, error: unknown) => {
        log.error({ subscriptionId: id, err: error }, 'charging a subscription failed');
        await release(db, id, owner).catch(() => undefined);
        ended({ subscriptionId: id, outcome: 'SKIPPED', code: 'ERROR' });
      };

      /** Prepares claimed rows: the batch statement first, the rows it did not write one by one, with every rule. */
      async function prepareRows(rows: ClaimedRow[]) {
        let fast = new Map<string, Ready>();
        if (oneStatement) {
          try {
            fast = await prepareNewCycles(rows, owner);
          } catch (error) {
            // A batch that failed wrote nothing (one statement): each row is decided on its own below.
            log.warn({ err: error, rows: rows.length }, 'preparing a batch in one statement failed; preparing its charges one by one');
          }
        }
        await Promise.all(
          rows.map(async (row) => {
            try {
              const prepared = fast.get(row.id) ?? (await rowWrite(() => prepare(row.id, owner, 'SCHEDULER')));
              if (prepared.kind === 'DONE') ended(prepared.report);
              else ready.push(prepared);
            } catch (error) {
              await failed(row.id, error);
            }
          }),
        );
        notify();
      }

      // Rows being prepared (by up to two statements at once: one statement's commit no longer idles the feeder).
      let preparing = 0;
      const preparations = new Set<Promise<void>>();
      async function feed() {
        try {
          while (!stopping) {
            // Never more than `concurrency` prepared (or being prepared) and unsent: after a crash each of them is an
            // UNKNOWN for an operator (nobody can know it was not sent), so the lead is one slot's worth and no more.
            const room = concurrency - ready.length - preparing;
            if (room <= 0 || preparations.size >= 2 || answered.length >= 2 * concurrency) {
              await changed;
              continue;
            }
            if (claimed.length === 0) {
              const checking = [...unchecked];
              if (checking.length > 0) {
                leftDue.push(...(await stillDue(db, checking, dueBy)));
                for (const id of checking) {
                  unchecked.delete(id);
                  claimedNotChecked.delete(id);
                }
              }
              const rows = await claimBatch(owner, dueBy, clock.now(), [...leftDue, ...claimedNotChecked]);
              if (rows.length === 0) break;
              report.claimed += rows.length;
              for (const row of rows) claimedNotChecked.add(row.id);
              claimed.push(...rows);
              continue;
            }
            const rows = claimed.splice(0, Math.min(room, Math.ceil(concurrency / 2)));
            preparing += rows.length;
            const preparation: Promise<void> = prepareRows(rows).finally(() => {
              preparing -= rows.length;
              preparations.delete(preparation);
              notify();
            });
            preparations.add(preparation);
          }
        } catch (error) {
          failure = error;
        } finally {
          await Promise.all(preparations);
          // Claimed and never prepared (shutting down, or the claim failed): given back.
          for (const row of claimed.splice(0)) {
            await release(db, row.id, owner).catch(() => undefined);
            ended({ subscriptionId: row.id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'shutting down' });
          }
          feeding = false;
          notify();
        }
      }

      /** Writes the answers waiting: new cycles' approvals in one statement, the others (and the refused) one by one. */
      async function recordAnswers() {
        while (answered.length > 0) {
          const batch = answered.splice(0, 4 * concurrency);
          recording += batch.length;
          let done = new Set<string>();
          if (oneStatement) {
            try {
              done = await recordApprovals(batch, clock.now());
            } catch (error) {
              log.warn({ err: error, answers: batch.length }, 'recording a batch in one statement failed; recording its answers one by one');
            }
          }
          await Promise.all(
            batch.map(async ({ ready: prepared, result }) => {
              const { subscriptionId: id, paymentId } = prepared;
              try {
                ended(done.has(id) ? { subscriptionId: id, paymentId, outcome: 'SUCCEEDED' } : await rowWrite(() => recordOne(prepared, result)));
              } catch (error) {
                await failed(id, error);
              }
            }),
          );
          recording -= batch.length;
          notify();
        }
      }
      // One recorder at a time: what arrives while it writes is the next batch.
      let recorder: Promise<void> | undefined;
      const startRecorder = () => {
        recorder ??= recordAnswers().finally(() => {
          recorder = undefined;
          if (answered.length > 0) startRecorder();
        });
      };
      const answer = (prepared: Ready, result: GatewayResult) => {
        // An answer waits in memory until the recorder writes it (up to about 3 × concurrency of them). Should the
        // process die meanwhile, its attempt becomes UNKNOWN and an operator resolves it with the gateway's
        // transactionId: logged here, as it arrives, so it is not lost with the queue (no secrets: ids only).
        if (result.fields.transactionId !== undefined)
          log.info(
            {
              subscriptionId: prepared.subscriptionId,
              paymentId: prepared.paymentId,
              orderId: prepared.orderId,
              outcome: result.outcome,
              transactionId: result.fields.transactionId,
            },
            'charge answered by the gateway; recording it',
          );
        answered.push({ ready: prepared, result });
        startRecorder();
      };

      /** One slot: the gateway call of one prepared charge at a time. */
      async function slot() {
        for (;;) {
          if (answered.length + recording >= 2 * concurrency) {
            await changed;
            continue;
          }
          const next = ready.shift();
          if (!next) {
            if (!feeding) return;
            await changed;
            continue;
          }
          notify();
          if (stopping) {
            // Prepared but not sent: recorded NOT_SENT, sent again as itself (same attempt, same orderId) by a later pass.
            answer(next, stoppingNotCalled);
            continue;
          }
          if (!leaseHasRoom(next)) {
            // It waited too long for a slot (a slow gateway, a stalled recorder): its lease may run out during the call,
            // or has already, and a sweep may have made its attempt UNKNOWN. Never sent: recorded NOT_SENT, fenced on the
            // lease like every answer; when the lease is gone that write changes nothing and the sweep's UNKNOWN stands,
            // which is safe, as nothing was sent.
            log.warn(
              { subscriptionId: next.subscriptionId, orderId: next.orderId, leaseExpiresAt: next.leaseExpiresAt },
              'prepared charge not sent: its lease has no room left for the call',
            );
            answer(next, leaseShortNotCalled);
            continue;
          }
          let result: GatewayResult;
          try {
            result = await call(next);
          } catch (error) {
            await failed(next.subscriptionId, error);
            continue;
          }
          answer(next, result);
        }
      }

      await sweepExpiredAttempts(dueBy);
      // Trials ending within 30 days without a consent: subscription.trial_will_end, once (rule 13, in time).
      await noteTrialsEnding(db, dueBy);
      await Promise.all([feed(), ...Array.from({ length: concurrency }, slot)]);
      while (recorder) await recorder;
      if (failure !== undefined) throw failure;
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
