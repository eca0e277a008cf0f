// One charging pass (docs/architecture.md "Recurring charging"; issue 25): sweep dead attempts, note trials ending,
// then three stages over one queue (charge.queue.ts), so that a slot (SCHEDULER_CONCURRENCY) is held only for the
// gateway call:
// - the feeder claims batches and prepares them in one statement per batch of up to half the slots, two batches
//   at a time (prepareNewCycles; what it does not take goes through the transactional prepare), keeping at most
//   `concurrency` charges prepared (or being prepared) and waiting for a slot;
// - each slot takes a prepared charge, calls the gateway, hands the answer to the recorder and takes the next;
// - the recorder writes the answers waiting, new cycles' approvals in one statement per batch (recordApprovals)
//   and the others one by one (recordOne); the slots wait when `2 × concurrency` answers wait for it.
// A gateway that refuses our configuration (an answer NOT_SENT for REFUSED_UNPROCESSED) is not called again in this
// pass: its rows are left due, as they are, for the next pass; other gateways' rows go on.
// Every row keeps its own lease fence in each statement (invariant 5), every payment and attempt is committed before its
// call (invariant 1), and no transaction is open during a call. What waits in memory is bounded by the concurrency and
// the claim's batch size, whatever the size of the drain.
import { randomUUID } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { GatewayName, GatewayResult } from '../../gateway/gateway.ts';
import { refusesConfiguration } from '../health/gateway-refusals.ts';
import { sweepExpiredAttempts } from '../ledger/attempts.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { noteTrialsEnding } from '../subscriptions/trials.ts';
import { gatewayRefusedNotCalled, leaseHasRoom, leaseShortNotCalled, sendCharge, stoppingNotCalled } from './charge.call.ts';
import { claimBatch, stillDue, type ClaimedRow } from './charge.claim.ts';
import { prepareNewCycles } from './charge.prepare-batch.ts';
import { prepare } from './charge.prepare.ts';
import { createPassQueue, endCharge, notify, type PassQueue } from './charge.queue.ts';
import { recordApprovals, recordOne } from './charge.record.ts';
import { emptyPassReport, type ChargeDeps, type PassReport, type Ready } from './charge.types.ts';

/** One pass as its stages see it: the engine's dependencies, its lease owner and horizon, and its queue. */
interface Pass {
  deps: ChargeDeps;
  owner: string;
  /** The pass charges what was due when it started; what becomes due meanwhile waits for the next pass. */
  dueBy: Date;
  concurrency: number;
  isStopping: () => boolean;
  queue: PassQueue;
  /**
   * The one limit, of half the slots, that the pass's per-row transactions share (answers recorded one by one,
   * charges prepared one by one): well inside the pool (app.ts sizes it concurrency + ceil(webhooks / 2) + 4, and the
   * pass's batch statements, two prepares, one record and a claim, take their own connections). A burst of them
   * beyond what Prisma can start within its wait loses answers: left IN_FLIGHT, then UNKNOWN, though the gateway
   * answered a definite decline (docs/benchmarks.md, the charging bench). Only the uncommon answers wait on it: new
   * cycles' approvals are recorded in one statement per batch.
   */
  rowWrite: LimitFunction;
  /**
   * The gateways that refused our configuration in this pass: not called again by it. Charges already in a call finish
   * (NOT_SENT too, as they are refused alike); prepared ones are recorded NOT_SENT unsent; claimed ones are given back.
   */
  refused: Set<GatewayName>;
}

/**
 * Runs one charging pass to the end: sweep, note trials, then claims, calls and records until nothing due is left
 * (or the engine stops). Answers what it did; throws what stopped the feeder, once every call out is recorded.
 */
export async function runChargePass(deps: ChargeDeps, isStopping: () => boolean): Promise<PassReport> {
  const { db, clock, config, log } = deps;
  const report = emptyPassReport();
  const owner = randomUUID();
  const dueBy = clock.now();
  // Every attempt left IN_FLIGHT past its lease, of every operation, becomes UNKNOWN (attempts.ts).
  await sweepExpiredAttempts(db, dueBy, log);
  // Trials ending within 30 days without a consent: subscription.trial_will_end, once (invariant 13, in time).
  await noteTrialsEnding(db, dueBy);
  const { concurrency } = config.scheduler;
  const queue = createPassQueue(report);
  const pass: Pass = { deps, owner, dueBy, concurrency, isStopping, queue, rowWrite: pLimit(Math.ceil(concurrency / 2)), refused: new Set() };
  const [failure] = await Promise.all([feed(pass), ...Array.from({ length: concurrency }, () => slot(pass))]);
  while (queue.recorder) await queue.recorder;
  if (failure !== undefined) throw failure;
  if (report.claimed > 0) log.info(report, 'charging pass finished');
  return report;
}

/**
 * The feeder: claims batches and starts their preparation while there is room, until nothing due is left or the
 * engine stops; then gives back what it claimed and never prepared. Answers the error that stopped it, if one did.
 */
async function feed(pass: Pass): Promise<unknown> {
  const { queue, concurrency } = pass;
  try {
    while (!pass.isStopping()) {
      // Never more than `concurrency` prepared (or being prepared) and unsent: after a crash each of them is an
      // UNKNOWN for an operator (nobody can know it was not sent), so the lead is one slot's worth and no more.
      const room = concurrency - queue.ready.length - queue.preparing;
      if (room <= 0 || queue.preparations.size >= 2 || queue.answered.length >= 2 * concurrency) {
        await queue.changed;
        continue;
      }
      if (queue.claimed.length > 0) startPreparation(pass, queue.claimed.splice(0, Math.min(room, Math.ceil(concurrency / 2))));
      else if (!(await claimNext(pass))) break;
    }
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await Promise.all(queue.preparations);
    // Claimed and never prepared (shutting down, or the claim failed): given back.
    for (const row of queue.claimed.splice(0)) {
      await releaseSubscription(pass.deps.db, row.id, pass.owner).catch(() => undefined);
      endCharge(queue, { subscriptionId: row.id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'shutting down' });
    }
    queue.feeding = false;
    notify(queue);
  }
}

/**
 * Notes which ended charges left their subscription due (never claimed again in this pass), then claims the next
 * batch into the queue, excluding those and what is still charging. False when nothing is left to claim.
 */
async function claimNext(pass: Pass): Promise<boolean> {
  const { queue, deps } = pass;
  const checking = [...queue.unchecked];
  if (checking.length > 0) {
    queue.leftDue.push(...(await stillDue(deps.db, checking, pass.dueBy)));
    for (const id of checking) {
      queue.unchecked.delete(id);
      queue.claimedNotChecked.delete(id);
    }
  }
  const rows = await claimBatch(deps, pass.owner, pass.dueBy, [...queue.leftDue, ...queue.claimedNotChecked]);
  if (rows.length === 0) return false;
  queue.report.claimed += rows.length;
  for (const row of rows) queue.claimedNotChecked.add(row.id);
  queue.claimed.push(...rows);
  return true;
}

/** Prepares `rows` in the background (up to two preparations at once: one's commit no longer idles the feeder). */
function startPreparation(pass: Pass, rows: ClaimedRow[]): void {
  const { queue } = pass;
  queue.preparing += rows.length;
  const preparation: Promise<void> = prepareRows(pass, rows).finally(() => {
    queue.preparing -= rows.length;
    queue.preparations.delete(preparation);
    notify(queue);
  });
  queue.preparations.add(preparation);
}

/**
 * Prepares claimed rows: the batch statement first, the rows it did not write one by one, with every rule. A row whose
 * key's gateway refused our configuration in this pass is given back unprepared, still due.
 */
async function prepareRows(pass: Pass, claimed: ClaimedRow[]): Promise<void> {
  const { deps, queue, owner } = pass;
  const rows = claimed.filter((row) => !pass.refused.has(row.keyGateway));
  for (const row of claimed.filter((r) => pass.refused.has(r.keyGateway))) {
    await releaseSubscription(deps.db, row.id, owner).catch(() => undefined);
    endCharge(queue, { subscriptionId: row.id, outcome: 'SKIPPED', code: 'GATEWAY_REFUSED', message: `${row.keyGateway} refused our configuration` });
  }
  let fast = new Map<string, Ready>();
  if (deps.oneStatement) {
    try {
      fast = await prepareNewCycles(deps, rows, owner);
    } catch (error) {
      // A batch that failed wrote nothing (one statement): each row is decided on its own below.
      deps.log.warn({ err: error, rows: rows.length }, 'preparing a batch in one statement failed; preparing its charges one by one');
    }
  }
  await Promise.all(
    rows.map(async (row) => {
      try {
        const prepared = fast.get(row.id) ?? (await pass.rowWrite(() => prepare(deps, row.id, owner, 'SCHEDULER')));
        if (prepared.kind === 'DONE') endCharge(queue, prepared.report);
        else queue.ready.push(prepared);
      } catch (error) {
        await failCharge(pass, row.id, error);
      }
    }),
  );
  notify(queue);
}

/** A charge that threw (a database error): logged, its lease given back, counted as skipped. */
async function failCharge(pass: Pass, id: string, error: unknown): Promise<void> {
  pass.deps.log.error({ subscriptionId: id, err: error }, 'charging a subscription failed');
  await releaseSubscription(pass.deps.db, id, pass.owner).catch(() => undefined);
  endCharge(pass.queue, { subscriptionId: id, outcome: 'SKIPPED', code: 'ERROR' });
}

/** One slot: the gateway call of one prepared charge at a time, while the recorder keeps up. */
async function slot(pass: Pass): Promise<void> {
  const { queue, deps, concurrency } = pass;
  for (;;) {
    if (queue.answered.length + queue.recording >= 2 * concurrency) {
      await queue.changed;
      continue;
    }
    const next = queue.ready.shift();
    if (!next) {
      if (!queue.feeding) return;
      await queue.changed;
      continue;
    }
    notify(queue);
    if (pass.isStopping()) {
      // Prepared but not sent: recorded NOT_SENT, sent again as itself (same attempt, same orderId) by a later pass.
      answer(pass, next, stoppingNotCalled);
      continue;
    }
    if (pass.refused.has(next.gateway)) {
      // Its gateway refused our configuration in this pass: the same credentials would be refused again.
      answer(pass, next, gatewayRefusedNotCalled);
      continue;
    }
    if (!leaseHasRoom(deps, next)) {
      // It waited too long for a slot (a slow gateway, a stalled recorder): its lease may run out during the call,
      // or has already, and a sweep may have made its attempt UNKNOWN. Never sent: recorded NOT_SENT, fenced on the
      // lease like every answer; when the lease is gone that write changes nothing and the sweep's UNKNOWN stands,
      // which is safe, as nothing was sent.
      deps.log.warn(
        { subscriptionId: next.subscriptionId, orderId: next.orderId, leaseExpiresAt: next.leaseExpiresAt },
        'prepared charge not sent: its lease has no room left for the call',
      );
      answer(pass, next, leaseShortNotCalled);
      continue;
    }
    let result: GatewayResult;
    try {
      result = await sendCharge(deps, next);
    } catch (error) {
      await failCharge(pass, next.subscriptionId, error);
      continue;
    }
    answer(pass, next, result);
  }
}

/** Queues an answer for the recorder, and starts the recorder if none is writing. */
function answer(pass: Pass, ready: Ready, result: GatewayResult): void {
  // An answer waits in memory until the recorder writes it (up to about 3 × concurrency of them). Should the
  // process die meanwhile, its attempt becomes UNKNOWN and an operator resolves it with the gateway's
  // transactionId: logged here, as it arrives, so it is not lost with the queue (no secrets: ids only).
  if (result.fields.transactionId !== undefined)
    pass.deps.log.info(
      {
        subscriptionId: ready.subscriptionId,
        paymentId: ready.paymentId,
        orderId: ready.orderId,
        outcome: result.outcome,
        transactionId: result.fields.transactionId,
      },
      'charge answered by the gateway; recording it',
    );
  if (refusesConfiguration(result) && !pass.refused.has(ready.gateway)) {
    pass.refused.add(ready.gateway);
    pass.deps.log.error(
      { gateway: ready.gateway, gatewayCode: result.code },
      'the gateway refused our configuration: its charges are left due for the next pass (GET /ready says why)',
    );
  }
  pass.queue.answered.push({ ready, result });
  startRecorder(pass);
}

/** One recorder at a time: what arrives while it writes is the next batch, taken by the next recorder. */
function startRecorder(pass: Pass): void {
  const { queue } = pass;
  queue.recorder ??= recordAnswers(pass).finally(() => {
    queue.recorder = undefined;
    if (queue.answered.length > 0) startRecorder(pass);
  });
}

/** The recorder: writes the answers waiting, new cycles' approvals in one statement, the others one by one. */
async function recordAnswers(pass: Pass): Promise<void> {
  const { queue, deps, concurrency } = pass;
  while (queue.answered.length > 0) {
    const batch = queue.answered.splice(0, 4 * concurrency);
    queue.recording += batch.length;
    let done = new Set<string>();
    if (deps.oneStatement) {
      try {
        done = await recordApprovals(deps, batch, deps.clock.now());
      } catch (error) {
        deps.log.warn({ err: error, answers: batch.length }, 'recording a batch in one statement failed; recording its answers one by one');
      }
    }
    await Promise.all(
      batch.map(async ({ ready, result }) => {
        const { subscriptionId: id, paymentId } = ready;
        try {
          endCharge(queue, done.has(id) ? { subscriptionId: id, paymentId, outcome: 'SUCCEEDED' } : await pass.rowWrite(() => recordOne(deps, ready, result)));
        } catch (error) {
          await failCharge(pass, id, error);
        }
      }),
    );
    queue.recording -= batch.length;
    notify(queue);
  }
}
