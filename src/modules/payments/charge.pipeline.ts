// One charging pass's pipeline (DESIGN.md §3; issue 25): the engine (charge.service.ts) sweeps and notes trials, then
// runs this. Three stages, so that a slot (SCHEDULER_CONCURRENCY) is held only for the gateway call:
// - the feeder claims batches and prepares them in one statement per batch of up to half the slots, two batches
//   at a time (prepareNewCycles; what it does not take goes through the transactional prepare), keeping at most
//   `concurrency` charges prepared (or being prepared) and waiting for a slot;
// - each slot takes a prepared charge, calls the gateway, hands the answer to the recorder and takes the next;
// - the recorder writes the answers waiting, new cycles' approvals in one statement per batch (recordApprovals)
//   and the others one by one (recordOne); the slots wait when `2 × concurrency` answers wait for it.
// Every row keeps its own lease fence in each statement (rule 5), every payment and attempt is committed before its
// call (rule 1), and no transaction is open during a call. What waits in memory is bounded by the concurrency and
// the claim's batch size, whatever the size of the drain.
import pLimit from 'p-limit';
import type { GatewayResult } from '../../gateway/types.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { stillDue, type ClaimedRow } from './charge.claim.ts';
import type { createChargePrepare } from './charge.prepare.ts';
import type { createChargeRecord } from './charge.record.ts';
import type { ChargeReport, PassReport, Ready } from './charge.types.ts';

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

/** What one pass's pipeline works with: the engine's steps, bound to its configuration. */
export interface PassStages extends Pick<ServiceDeps, 'db' | 'clock' | 'log'> {
  /** This pass's lease owner, and the instant it charges what was due by. */
  owner: string;
  dueBy: Date;
  concurrency: number;
  oneStatement: boolean;
  isStopping: () => boolean;
  claimBatch: (owner: string, dueBy: Date, now: Date, exclude: string[]) => Promise<ClaimedRow[]>;
  prepare: ReturnType<typeof createChargePrepare>['prepare'];
  prepareNewCycles: ReturnType<typeof createChargePrepare>['prepareNewCycles'];
  recordApprovals: ReturnType<typeof createChargeRecord>['recordApprovals'];
  recordOne: (ready: Ready, result: GatewayResult) => Promise<ChargeReport>;
  call: (ready: Ready) => Promise<GatewayResult>;
  /** Whether a prepared charge's lease still has room for its call (charge.service.ts). */
  leaseHasRoom: (ready: Ready) => boolean;
}

/** Runs one pass's claims, calls and records to the end, counting them in `report`; throws what the feeder met. */
export async function runPassPipeline(stages: PassStages, report: PassReport): Promise<void> {
  const {
    db,
    clock,
    log,
    owner,
    dueBy,
    concurrency,
    oneStatement,
    isStopping,
    claimBatch,
    prepare,
    prepareNewCycles,
    recordApprovals,
    recordOne,
    call,
    leaseHasRoom,
  } = stages;
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
    await releaseSubscription(db, id, owner).catch(() => undefined);
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
      while (!isStopping()) {
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
        await releaseSubscription(db, row.id, owner).catch(() => undefined);
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
      if (isStopping()) {
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

  await Promise.all([feed(), ...Array.from({ length: concurrency }, slot)]);
  while (recorder) await recorder;
  if (failure !== undefined) throw failure;
}
