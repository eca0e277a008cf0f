// One charging pass's queue (charge.pipeline.ts): every charge the pass has claimed and not yet finished sits in one
// of its three stages (claimed, ready, answered) or is being worked on between two of them (preparing, in a slot's
// call, recording). The feeder, the slots and the recorder read and change only this, and wait on its one signal.
// What waits here is bounded by the concurrency and the claim's batch size, whatever the size of the drain.
import type { ClaimedRow } from './charge.claim.ts';
import type { Answer, ChargeReport, PassReport, Ready } from './charge.types.ts';

export interface PassQueue {
  /** What the pass has done so far (the engine's answer). */
  report: PassReport;
  /** Claimed and not yet prepared. */
  claimed: ClaimedRow[];
  /** Rows being prepared, and their preparations (at most two at once). */
  preparing: number;
  preparations: Set<Promise<void>>;
  /** Prepared and waiting for a slot. */
  ready: Ready[];
  /** Answered and waiting for the recorder, and the number being recorded. */
  answered: Answer[];
  recording: number;
  /** The recorder writing, if one is (one at a time: what arrives meanwhile is its next batch). */
  recorder: Promise<void> | undefined;
  /** False once the feeder has stopped adding charges: slots leave when `ready` is empty. */
  feeding: boolean;
  /** Subscriptions this pass left due (NOT_SENT, a lost lease, an error): not claimed again in this pass. */
  leftDue: string[];
  /**
   * Claimed by this pass and not yet checked for being left due (still charging, or done and unchecked): never
   * claimed again meanwhile. A charge can end, and give its lease back, while a claim is on its way to the database,
   * so what is still charging is excluded too, not only what has ended.
   */
  claimedNotChecked: Set<string>;
  /** Of those, the ones whose charge has ended. */
  unchecked: Set<string>;
  /** Resolves at the queue's next change; each waiter then checks its own condition again. */
  changed: Promise<void>;
  wake: () => void;
}

export function createPassQueue(report: PassReport): PassQueue {
  const queue: PassQueue = {
    report,
    claimed: [],
    preparing: 0,
    preparations: new Set(),
    ready: [],
    answered: [],
    recording: 0,
    recorder: undefined,
    feeding: true,
    leftDue: [],
    claimedNotChecked: new Set(),
    unchecked: new Set(),
    changed: Promise.resolve(),
    wake: () => {},
  };
  queue.changed = new Promise<void>((resolve) => (queue.wake = resolve));
  return queue;
}

/** Wakes every waiter: something in the queue changed. */
export function notify(queue: PassQueue): void {
  const resolve = queue.wake;
  queue.changed = new Promise<void>((r) => (queue.wake = r));
  resolve();
}

/** A charge of this pass has ended: counted in the report, and its subscription checked for being left due. */
export function endCharge(queue: PassQueue, charge: ChargeReport): void {
  const { report } = queue;
  if (charge.outcome === 'SUCCEEDED') report.succeeded += 1;
  else if (charge.outcome === 'DECLINED') report.declined += 1;
  else if (charge.outcome === 'UNKNOWN') report.unknown += 1;
  else report.skipped += 1;
  queue.unchecked.add(charge.subscriptionId);
  notify(queue);
}
