// The inquiry pass (docs/architecture.md "Unknown outcomes a gateway can be asked about"): an UNKNOWN charge attempt
// whose payment's gateway answers what became of an orderId (its adapter's capabilities.inquiry; never decided by
// the gateway's name) is looked up on the gateway's inquiry delays (TOSS_INQUIRY_DELAYS), and finished by what the
// answer proves, through the one late-outcome path (payment-actions.service.ts `resolve`, invariant 14: the same
// transitions, events, subscription move and audit entry as an operator's resolve or a settlement line).
//
// Invariants kept here:
// - the lookup is a read that moves no money: nothing is ever sent again (invariant 4). An UNKNOWN is finished only by
//   an answer that proves the outcome: approved with our orderId and amount → SUCCEEDED; nothing charged under the
//   orderId (refused, expired, never seen) once the call's lease has long passed (settleAfter) → FAILED as a decline,
//   whose retry is a new attempt with a new orderId (invariant 2). Anything else is asked again at the next delay; after
//   the last one the attempt stays UNKNOWN for an operator, under attention as before;
// - replicas claim due attempts with FOR UPDATE SKIP LOCKED and hold each for one lease (the scheduler's) by moving
//   its inquiryNextAt that far ahead under their name: two replicas never ask at once. The gateway is called with no
//   transaction open (invariant 1);
// - exactly one outcome: the finish is `resolve`'s one transaction, fenced on the payment still being UNKNOWN and on
//   this attempt still being the one waiting (`expect`), and it locks the attempt to record the lookup with it. An
//   operator's resolve or a settlement import that came first wins; the pass then records nothing but its lookup;
// - the schedule's bookkeeping (count, next time, last result) is written only by the replica holding the lookup.
import { randomUUID } from 'node:crypto';
import { sqlQuery } from '../../db/prisma.ts';
import type { GatewayName, GatewayResult } from '../../gateway/gateway.ts';
import { StateConflictError } from '../../lib/errors.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { gatewayFor } from '../shared/gateway-for.ts';
import { createPassTracker } from '../shared/passes.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { PaymentActions } from './payment-actions.service.ts';

type Tx = Prisma.TransactionClient;

/**
 * What one lookup answered, as counted and stored (inquiryLastResult): APPROVED (our orderId and amount), MISMATCH
 * (approved with another amount: never finished by the pass), NOT_PAID (nothing charged under the orderId), UNDECIDED
 * (not finished at the gateway, an error, no answer), REFUSED (the gateway refused our credentials: nothing learnt).
 */
export type InquiryResult = 'APPROVED' | 'MISMATCH' | 'NOT_PAID' | 'UNDECIDED' | 'REFUSED';

/**
 * What became of the attempt: SUCCEEDED or FAILED (finished by the pass), ALREADY_FINISHED (an operator or a
 * settlement import came first), LEFT_FOR_OPERATOR (the delays ran out, or the approval does not match).
 */
export type InquiryOutcome = 'SUCCEEDED' | 'FAILED' | 'ALREADY_FINISHED' | 'LEFT_FOR_OPERATOR';

export interface InquiryObserver {
  inquiry(gateway: GatewayName, result: InquiryResult): void;
  outcome(gateway: GatewayName, outcome: InquiryOutcome): void;
}

export interface InquiryReport {
  asked: number;
  succeeded: number;
  failed: number;
  alreadyFinished: number;
  leftForOperator: number;
}

/**
 * How long after the call's lease a "nothing charged" answer is believed: the call may still be in the gateway's
 * hands up to its lease's end (at most the scheduler's lease from when the attempt was recorded UNKNOWN), and a
 * request delayed inside the gateway could be booked a little later still. Before it, the answer is asked again.
 */
export const INQUIRY_SETTLE_MARGIN_MS = 10 * 60_000;

/** Attempts claimed per statement, and lookups in flight at once: a read, kept small beside the charging pass (app.ts sizes the pool for them). */
const INQUIRY_BATCH = 50;
export const INQUIRY_CONCURRENCY = 4;

/** The actor of the entries the pass writes (the audit trail's `resolve` entry names it). */
export const inquiryActor = (gateway: GatewayName) => `gateway-inquiry:${gateway}`;

interface Claimed {
  id: string;
  paymentId: string;
  gateway: GatewayName;
  orderId: string;
  amount: number;
  inquiryCount: number;
  /** When the attempt was recorded UNKNOWN (its completedAt, else its creation). */
  unknownSince: Date;
}

/**
 * Due: UNKNOWN charge attempts of a payment still UNKNOWN (a subscription's cycle, or a registration's first payment
 * charged after its key's issuance: resolve completes or fails the registration with it), of the gateways given, not asked as
 * often as there are delays, whose next lookup (never asked: the first delay after they became UNKNOWN) has come.
 * Claimed for one lease under `owner`. The partial index payment_attempts_inquiry_due holds the UNKNOWN rows only.
 */
const CLAIM_SQL = `
  WITH due AS (
    SELECT a."id", p."gateway" FROM "payment_attempts" a JOIN "payments" p ON p."id" = a."paymentId"
     WHERE a."status" = 'UNKNOWN' AND a."operation" = 'BILLING_CONFIRM'
       AND p."status" = 'UNKNOWN' AND p."gateway"::text = ANY ($1::text[])
       AND (p."subscriptionId" IS NOT NULL AND p."kind" <> 'INITIAL' OR p."kind" = 'INITIAL' AND p."registrationId" IS NOT NULL)
       AND a."inquiryCount" < $2
       AND COALESCE(a."inquiryNextAt", COALESCE(a."completedAt", a."createdAt") + $3::bigint * INTERVAL '1 millisecond') <= $4::timestamptz
     LIMIT $5
     FOR UPDATE OF a SKIP LOCKED)
  UPDATE "payment_attempts" t SET "inquiryLeaseOwner" = $6, "inquiryNextAt" = $4::timestamptz + $7::bigint * INTERVAL '1 millisecond', "updatedAt" = $4::timestamptz
    FROM due WHERE t."id" = due."id"
  RETURNING t."id", t."paymentId", due."gateway"::text AS "gateway", t."orderId", t."amount", t."inquiryCount",
            COALESCE(t."completedAt", t."createdAt") AS "unknownSince"`;

type Finish = { outcome: 'SUCCEEDED'; transactionId: string; approvedAt: Date } | { outcome: 'FAILED'; code: string };
/** What an answer decides: `finish` the attempt, or ask again at the next delay (none with `stop`). */
export interface Verdict {
  result: InquiryResult;
  finish?: Finish;
  stop?: boolean;
}

/** What a lookup's answer proves for `claimed` at `now`; `settleAfter` is when "nothing charged" is believed. */
export function inquiryVerdict(result: GatewayResult, claimed: Pick<Claimed, 'amount'>, now: Date, settleAfter: Date): Verdict {
  switch (result.outcome) {
    case 'SUCCEEDED': {
      const { transactionId, amount, transactionDateTime } = result.fields;
      // The adapter checked the orderId; the amount and the gateway's payment id are ours to check.
      if (!transactionId || amount !== claimed.amount) return { result: 'MISMATCH', stop: true };
      return { result: 'APPROVED', finish: { outcome: 'SUCCEEDED', transactionId, approvedAt: transactionDateTime ?? now } };
    }
    case 'DECLINED':
      if (now.getTime() < settleAfter.getTime()) return { result: 'NOT_PAID' };
      return { result: 'NOT_PAID', finish: { outcome: 'FAILED', code: result.code ?? 'NOT_PAID' } };
    case 'NOT_SENT':
      return { result: 'REFUSED' };
    case 'UNKNOWN':
      return { result: 'UNDECIDED' };
  }
}

export function createInquiryPass(
  deps: Pick<ServiceDeps, 'db' | 'gateway' | 'gateways' | 'clock' | 'config' | 'log'> & {
    payments: Pick<PaymentActions, 'resolve'>;
    observer?: InquiryObserver;
    /**
     * The charging engine of this process: a lookup is never urgent (its delays are minutes to days) and a due charge
     * is, so the pass claims and asks nothing while a charging pass runs here, and goes on once it ends. (A charging
     * pass on another replica is not waited for: each replica's tick runs its charges before its lookups.)
     */
    yieldTo?: { idle(): Promise<void> };
  },
) {
  const { db, clock, config, log, payments, observer, yieldTo } = deps;
  let stopping = false;
  const passes = createPassTracker();

  /** The gateways whose adapters answer a lookup: by capability, never by name. */
  function inquiring(): GatewayName[] {
    const registry = deps.gateways ?? { DANAL: deps.gateway };
    return Object.values(registry).flatMap((adapter) => (adapter?.capabilities.inquiry && adapter.inquire ? [adapter.name] : []));
  }

  /**
   * The delays of a gateway's lookups: TOSS_INQUIRY_DELAYS is the only schedule configured (the only gateway that can
   * be asked); a second such gateway would bring its own setting here.
   */
  const delays = (): number[] => config.toss.inquiryDelaysMs;

  /** Records the lookup on the attempt held by `owner`, with its next time (none once the delays ran out). */
  async function askAgain(claimed: Claimed, owner: string, result: InquiryResult, now: Date, stop: boolean): Promise<boolean> {
    const count = claimed.inquiryCount + 1;
    const next = !stop && count < delays().length ? new Date(now.getTime() + delays()[count]!) : null;
    await db.paymentAttempt.updateMany({
      where: { id: claimed.id, status: 'UNKNOWN', inquiryLeaseOwner: owner },
      data: {
        inquiryCount: stop ? Math.max(count, delays().length) : count,
        inquiryNextAt: next,
        inquiryLastResult: result,
        inquiryLastAt: now,
        inquiryLeaseOwner: null,
      },
    });
    return next === null;
  }

  /** The lookup of an attempt another writer finished first, recorded; nothing else is asked of it. */
  async function release(claimed: Claimed, owner: string, result: InquiryResult, now: Date): Promise<void> {
    await db.paymentAttempt.updateMany({
      where: { id: claimed.id, inquiryLeaseOwner: owner },
      data: { inquiryCount: { increment: 1 }, inquiryNextAt: null, inquiryLastResult: result, inquiryLastAt: now, inquiryLeaseOwner: null },
    });
  }

  /** Finishes the attempt through `resolve`, recording the lookup in its transaction; false when another came first. */
  async function finish(claimed: Claimed, result: InquiryResult, outcome: Finish, now: Date): Promise<boolean> {
    const recordLookup = async (tx: Tx) => {
      // Under resolve's fence on the payment: the attempt, locked, is recorded as asked with the outcome it gets.
      await tx.$queryRaw`SELECT 1 FROM "payment_attempts" WHERE "id" = ${claimed.id}::uuid FOR UPDATE`;
      await tx.paymentAttempt.update({
        where: { id: claimed.id },
        data: { inquiryCount: { increment: 1 }, inquiryNextAt: null, inquiryLastResult: result, inquiryLastAt: now, inquiryLeaseOwner: null },
      });
    };
    const who = { actor: inquiryActor(claimed.gateway), reason: `${claimed.gateway} lookup of order ${claimed.orderId}` };
    const expect = { amount: claimed.amount, orderId: claimed.orderId };
    try {
      if (outcome.outcome === 'SUCCEEDED') {
        const note = `${claimed.gateway} lookup: approved`;
        await payments.resolve(
          claimed.paymentId,
          { outcome: 'SUCCEEDED', transactionId: outcome.transactionId, approvedAt: outcome.approvedAt.toISOString(), expect, note },
          who,
          recordLookup,
        );
      } else {
        const note = `${claimed.gateway} lookup: nothing charged (${outcome.code})`;
        await payments.resolve(claimed.paymentId, { outcome: 'FAILED', expect, note, failureCode: outcome.code }, who, recordLookup);
      }
      return true;
    } catch (error) {
      if (!(error instanceof StateConflictError)) throw error;
      log.info({ attemptId: claimed.id, paymentId: claimed.paymentId }, `inquiry found the outcome already recorded: ${error.message}`);
      return false;
    }
  }

  /** One claimed attempt: asked with no transaction open, then finished or scheduled again. */
  async function inquireOne(claimed: Claimed, owner: string, report: InquiryReport): Promise<void> {
    // Held while a charging pass runs: a lookup whose hold runs out meanwhile may be asked by another replica too,
    // which is a read; resolve's fence still records one outcome.
    await yieldTo?.idle();
    const adapter = gatewayFor(deps, claimed.gateway);
    const result = await adapter.inquire!({ orderId: claimed.orderId });
    const now = clock.now();
    const settleAfter = new Date(claimed.unknownSince.getTime() + config.scheduler.leaseMs + INQUIRY_SETTLE_MARGIN_MS);
    const verdict = inquiryVerdict(result, claimed, now, settleAfter);
    report.asked += 1;
    observer?.inquiry(claimed.gateway, verdict.result);
    let outcome: InquiryOutcome | undefined;
    if (verdict.finish) {
      const finished = await finish(claimed, verdict.result, verdict.finish, now);
      outcome = finished ? verdict.finish.outcome : 'ALREADY_FINISHED';
      if (!finished) await release(claimed, owner, verdict.result, now);
    } else if (await askAgain(claimed, owner, verdict.result, now, verdict.stop === true)) {
      outcome = 'LEFT_FOR_OPERATOR';
      log.warn({ attemptId: claimed.id, paymentId: claimed.paymentId, result: verdict.result }, 'inquiry left the unknown outcome for an operator');
    }
    if (outcome === undefined) return;
    observer?.outcome(claimed.gateway, outcome);
    const key = ({ SUCCEEDED: 'succeeded', FAILED: 'failed', ALREADY_FINISHED: 'alreadyFinished', LEFT_FOR_OPERATOR: 'leftForOperator' } as const)[outcome];
    report[key] += 1;
  }

  async function run(): Promise<InquiryReport> {
    const report: InquiryReport = { asked: 0, succeeded: 0, failed: 0, alreadyFinished: 0, leftForOperator: 0 };
    const gateways = inquiring();
    if (gateways.length === 0 || delays().length === 0) return report;
    const owner = `inquiry:${randomUUID()}`;
    while (!stopping) {
      await yieldTo?.idle();
      if (stopping) break;
      const now = clock.now();
      const claimed = await sqlQuery<Claimed>(db, CLAIM_SQL, [gateways, delays().length, delays()[0]!, now, INQUIRY_BATCH, owner, config.scheduler.leaseMs]);
      if (claimed.length === 0) break;
      const queue = [...claimed];
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          try {
            await inquireOne({ ...next, unknownSince: new Date(next.unknownSince) }, owner, report);
          } catch (error) {
            // Left held: its lease runs out and a later pass asks again.
            log.error({ err: error, attemptId: next.id }, 'inquiry of an unknown outcome failed; it is asked again after its lease');
          }
        }
      };
      await Promise.all(Array.from({ length: INQUIRY_CONCURRENCY }, worker));
    }
    return report;
  }

  /**
   * One inquiry pass: claims due attempts in batches until none is left. Safe on several replicas at once and run
   * twice: each due attempt is asked once per lease.
   */
  function runPass(): Promise<InquiryReport> {
    return passes.track(run());
  }

  /** No new claims; lookups in flight finish (bounded by `timeoutMs`; what is still held then waits for its lease). */
  function stop(timeoutMs: number): Promise<boolean> {
    stopping = true;
    return passes.drain(timeoutMs);
  }

  return { runPass, stop };
}

export type InquiryPass = ReturnType<typeof createInquiryPass>;
