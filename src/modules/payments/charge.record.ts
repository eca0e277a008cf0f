// Everything after a charge's call: the gateway's answer applied to the payment and the subscription, fenced on the
// lease (docs/architecture.md, invariant 5); UNKNOWN raises needsAttention and is never retried (invariant 4). The success's values are the ledger's
// (chargeSuccessWrite, subscriptionAfterSuccess); new cycles' approvals render them in one statement per batch
// (recordApprovals; recordAtOnce is a batch of one), everything else applies them through Prisma in the transaction
// recordAnswer opens (record). recordOne is what the pipeline and an operator's charge call for one answer.
// The database adds (prisma/functions/): events (events.sql), MRR movements (mrr.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import { sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/gateway.ts';
import { StateConflictError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { attemptOutcomeValues, StaleLeaseError } from '../ledger/attempts.ts';
import { ATTEMPT_TRANSITIONS } from '../ledger/attempt.state.ts';
import { applyChargeDecline, applyChargeSuccess, chargeSuccessWrite, RECOVERING } from '../ledger/charge.outcomes.ts';
import { LIVE } from '../ledger/schedule.rules.ts';
import { PAYMENT_TRANSITIONS, transitionPayment } from '../ledger/payment.state.ts';
import { SUBSCRIPTION_TRANSITIONS } from '../ledger/subscription.state.ts';
import { recordAnswer } from '../ledger/gateway-call.ts';
import type { Answer, ChargeDeps, ChargeReport, Ready } from './charge.types.ts';

type Tx = Prisma.TransactionClient;
type RecordDeps = Pick<ServiceDeps, 'db' | 'config' | 'log'>;

/**
 * Records one answer (ledger/gateway-call.ts recordAnswer, with the one-statement rendering first for a new cycle).
 * An answer that could not be recorded releases nothing: the attempt stays IN_FLIGHT under both leases and becomes
 * UNKNOWN in a sweep, which raises the subscription.
 */
export async function recordOne(
  deps: Pick<ChargeDeps, 'db' | 'clock' | 'config' | 'log' | 'oneStatement'>,
  ready: Ready,
  result: GatewayResult,
): Promise<ChargeReport> {
  const answer = await recordAnswer(
    deps,
    ready,
    result,
    (tx, now) => record(deps, tx, ready, result, now),
    deps.oneStatement ? (now) => recordAtOnce(deps, ready, result, now) : undefined,
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

/** What an approved charge paid, for the ledger's success write: the same input on both renderings. */
const paidBy = (config: RecordDeps['config'], ready: Ready, result: GatewayResult, now: Date) => ({
  cycle: ready.plan.cycle,
  dueAt: ready.plan.dueAt,
  amount: ready.plan.amount,
  transactionId: result.fields.transactionId!,
  approvedAt: result.fields.transactionDateTime ?? now,
  timezone: config.timezone,
  now,
});

/** Whether recordApprovals renders this answer: a new cycle's approval (the common case). */
const recordsAtOnce = (ready: Ready, result: GatewayResult) => ready.newCycle !== undefined && result.outcome === 'SUCCEEDED';

/**
 * New cycles' approvals (the common case), a batch in one statement: the same write as the transactional record,
 * rendered in SQL, row by row. A guard locks each subscription under our lease, its attempt IN_FLIGHT under our
 * lease and its payment in a state `succeed` may leave (payment.state.ts), or nothing is written for that row (the
 * fencing is per row: the other rows are written); then the attempt records the answer (attemptOutcomeValues), the
 * payment takes chargeSuccessWrite's values, and the subscription takes subscriptionAfterSuccess's, decided by its
 * status in SQL (scheduled while live, kept while paused, nothing once cancelled, ACTIVE when RECOVERING). The
 * events trigger sees the same updates. Answers the subscriptions written (all three rows each); the caller records
 * the others through recordAnswer (recordAtOnce then classifies why nothing was written). subscriptionAfterSuccess's
 * pending-increase rule has no rendering here: the one-statement prepare only runs with no pendingAmount, and an
 * increase asked while the call is out is above the amount charged, so it never applies to this success.
 */
export async function recordApprovals(deps: RecordDeps, answers: readonly Answer[], now: Date): Promise<Set<string>> {
  const { db, config, log } = deps;
  const rows = answers
    .filter(({ ready, result }) => recordsAtOnce(ready, result))
    .map(({ ready, result }) => {
      const write = chargeSuccessWrite(ready.newCycle!, paidBy(config, ready, result, now));
      return { ready, write, outcome: attemptOutcomeValues(result, now) };
    });
  if (rows.length === 0) return new Set();
  const owners = new Set(rows.map(({ ready }) => ready.leaseOwner));
  if (owners.size !== 1) throw new Error('recordApprovals: one lease owner per batch');
  const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
  const [written] = await sqlQuery<{ a: string[]; p: string[]; s: string[] }>(db, RECORD_APPROVALS_SQL, [
    column((r) => r.ready.subscriptionId),
    column((r) => r.ready.attemptId),
    column((r) => r.ready.paymentId),
    column((r) => r.outcome.status),
    column((r) => r.outcome.sentAt),
    column((r) => r.outcome.completedAt),
    column((r) => r.outcome.gatewayCode),
    column((r) => r.outcome.gatewayMessage),
    column((r) => r.outcome.transactionId),
    column((r) => r.outcome.approvedAt),
    column((r) => JSON.stringify(r.outcome.rawResponse)),
    column((r) => r.write.payment.transactionId),
    column((r) => r.write.payment.approvedAt),
    column((r) => r.write.payment.failureCode),
    column((r) => r.write.payment.failureMessage),
    column((r) => r.write.payment.attentionReason),
    column((r) => r.write.payment.nextRetryAt),
    column((r) => r.write.nextCycle),
    column((r) => r.write.period.start),
    column((r) => r.write.period.end),
    column((r) => r.write.chainHead.lastTransactionId),
    column((r) => r.write.chainHead.lastAmount),
    column((r) => r.write.chainHead.lastTransactionAt),
    column((r) => r.write.changedAt),
    [...owners][0],
    [...ATTEMPT_TRANSITIONS.answer.from],
    [...PAYMENT_TRANSITIONS.succeed.from],
    PAYMENT_TRANSITIONS.succeed.to,
    [...LIVE],
    RECOVERING,
    SUBSCRIPTION_TRANSITIONS.recover.to,
    // updatedAt: the service's clock, as db/clock-stamps.ts gives the Prisma writers.
    now,
  ]);
  // Written: the subscriptions whose three rows were all updated (all or none, as they hang off one guard row).
  const ids = new Set(written!.s.filter((id) => written!.a.includes(id) && written!.p.includes(id)));
  for (const { ready } of rows) {
    if (ids.has(ready.subscriptionId))
      log.info({ subscriptionId: ready.subscriptionId, paymentId: ready.paymentId, cycle: ready.plan.cycle, orderId: ready.orderId }, 'charge approved');
  }
  return ids;
}

// One text for every batch size (the rows are arrays): one named statement (db/prisma.ts).
// The updates run in the order the last line reads them (attempt, payment, subscription), so the events trigger
// numbers each subscription's events in the transactional record's order.
const RECORD_APPROVALS_SQL = `
      WITH i AS (
        SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::text[], $9::text[],
                             $10::timestamptz[], $11::text[], $12::text[], $13::timestamptz[], $14::text[], $15::text[], $16::text[], $17::timestamptz[],
                             $18::int[], $19::timestamptz[], $20::timestamptz[], $21::text[], $22::int[], $23::timestamptz[], $24::timestamptz[])
          AS i("id", "attemptId", "paymentId", "attemptStatus", "sentAt", "completedAt", "gatewayCode", "gatewayMessage", "attemptTransactionId",
               "attemptApprovedAt", "rawResponse", "transactionId", "approvedAt", "failureCode", "failureMessage", "attentionReason", "nextRetryAt",
               "nextCycle", "periodStart", "periodEnd", "lastTransactionId", "lastAmount", "lastTransactionAt", "changedAt")),
      g AS (
        SELECT i.* FROM i, "subscriptions" s, "payment_attempts" a, "payments" p
         WHERE s."id" = i."id" AND s."leaseOwner" = $25
           AND a."id" = i."attemptId" AND a."status"::text = ANY ($26::text[]) AND a."leaseOwner" = $25
           AND p."id" = i."paymentId" AND p."status"::text = ANY ($27::text[])
         FOR UPDATE OF s, a, p),
      a AS (
        UPDATE "payment_attempts" t SET "status" = g."attemptStatus"::"AttemptStatus", "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "sentAt" = g."sentAt",
          "completedAt" = g."completedAt", "gatewayCode" = g."gatewayCode", "gatewayMessage" = g."gatewayMessage",
          "transactionId" = g."attemptTransactionId", "approvedAt" = g."attemptApprovedAt", "rawResponse" = g."rawResponse"::jsonb, "updatedAt" = $32::timestamptz
          FROM g WHERE t."id" = g."attemptId" RETURNING g."id"),
      p AS (
        UPDATE "payments" t SET "status" = $28::"PaymentStatus", "transactionId" = g."transactionId",
          "approvedAt" = g."approvedAt", "failureCode" = g."failureCode", "failureMessage" = g."failureMessage",
          "attentionReason" = g."attentionReason", "nextRetryAt" = g."nextRetryAt", "updatedAt" = $32::timestamptz
          FROM g WHERE t."id" = g."paymentId" RETURNING g."id"),
      s AS (
        UPDATE "subscriptions" t SET "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "cycle" = GREATEST(t."cycle", g."nextCycle"),
          "currentPeriodStart" = g."periodStart", "currentPeriodEnd" = g."periodEnd",
          "nextChargeAt" = CASE WHEN t."status"::text = ANY ($29::text[]) THEN g."periodEnd"
                                WHEN t."status" = 'PAUSED' THEN t."nextChargeAt" END,
          "lastTransactionId" = g."lastTransactionId", "lastAmount" = g."lastAmount", "lastTransactionAt" = g."lastTransactionAt",
          "status" = CASE WHEN t."status"::text = ANY ($30::text[]) THEN $31::"SubscriptionStatus" ELSE t."status" END,
          "changedAt" = g."changedAt", "updatedAt" = $32::timestamptz
          FROM g WHERE t."id" = g."id" RETURNING t."id")
      SELECT ARRAY (SELECT "id" FROM a) AS "a", ARRAY (SELECT "id" FROM p) AS "p", ARRAY (SELECT "id" FROM s) AS "s"`;

/**
 * One new cycle's approval in one statement (recordApprovals with one row), for recordAnswer's `atOnce`: undefined
 * when it does not apply; a row the guard refused throws why (throwWhyNotWritten).
 */
async function recordAtOnce(deps: RecordDeps, ready: Ready, result: GatewayResult, now: Date): Promise<ChargeReport | undefined> {
  if (!recordsAtOnce(ready, result)) return undefined;
  const written = await recordApprovals(deps, [{ ready, result }], now);
  if (!written.has(ready.subscriptionId)) await throwWhyNotWritten(deps.db, ready);
  return { subscriptionId: ready.subscriptionId, paymentId: ready.paymentId, outcome: 'SUCCEEDED' };
}

/**
 * Why the one-statement record wrote nothing, classified as the transactional record classifies it: a lease no
 * longer ours is a StaleLeaseError (LEASE_LOST); leases held but the payment in a state `succeed` may not leave is
 * the STATE_CONFLICT its transition would raise (RECORD_FAILED).
 */
async function throwWhyNotWritten(db: Db, ready: Ready): Promise<never> {
  const [held] = await sqlQuery<{ held: boolean }>(
    db,
    `SELECT EXISTS (SELECT 1 FROM "subscriptions" WHERE "id" = $1::uuid AND "leaseOwner" = $2)
        AND EXISTS (SELECT 1 FROM "payment_attempts" WHERE "id" = $3::uuid AND "status" = 'IN_FLIGHT' AND "leaseOwner" = $2) AS "held"`,
    [ready.subscriptionId, ready.leaseOwner, ready.attemptId],
  );
  if (held?.held) throw new StateConflictError(`Payment cannot succeed from its state (${ready.paymentId})`);
  throw new StaleLeaseError(`subscription ${ready.subscriptionId}`);
}

/** The charge's own write, in the transaction that recorded the attempt (ledger/gateway-call.ts recordAnswer). */
async function record(deps: RecordDeps, tx: Tx, ready: Ready, result: GatewayResult, now: Date): Promise<ChargeReport> {
  const { config, log } = deps;
  const { subscriptionId: id, plan, paymentId } = ready;
  const base = { subscriptionId: id, paymentId };
  // Releasing the lease proves it was still ours, locks the row for the rest of this transaction, and reads it.
  const [current] = await tx.subscription.updateManyAndReturn({
    where: { id, leaseOwner: ready.leaseOwner },
    data: { leaseOwner: null, leaseExpiresAt: null },
  });
  if (!current) throw new StaleLeaseError(`subscription ${id}`);

  switch (result.outcome) {
    case 'SUCCEEDED': {
      await applyChargeSuccess(tx, { subscriptionId: id, paymentId, ...paidBy(config, ready, result, now), current });
      log.info({ subscriptionId: id, paymentId, cycle: plan.cycle, orderId: ready.orderId }, 'charge approved');
      return { ...base, outcome: 'SUCCEEDED' };
    }
    case 'DECLINED': {
      const { plan: next, declines } = await applyChargeDecline(tx, {
        subscriptionId: id,
        paymentId,
        dueAt: plan.dueAt,
        failureCode: result.code ?? null,
        failureMessage: result.message ?? null,
        ...(result.decline ? { decline: result.decline } : {}),
        retryDelaysMs: config.retryDelaysMs,
        now,
        timezone: config.timezone,
      });
      log.info(
        { subscriptionId: id, paymentId, cycle: plan.cycle, declines, decline: result.decline, next: next.action, gatewayCode: result.code },
        'charge declined',
      );
      return { ...base, outcome: 'DECLINED', gatewayCode: result.code, message: result.message };
    }
    case 'NOT_SENT':
      // Same attempt row and orderId next time (docs/architecture.md "Recurring charging"); the payment stays PENDING.
      log.warn({ subscriptionId: id, paymentId, reason: result.reason, detail: result.detail }, 'charge not sent; it will be sent again');
      return { ...base, outcome: 'SKIPPED', code: 'NOT_SENT', message: result.detail };
    case 'UNKNOWN':
      await transitionPayment(tx, paymentId, 'lose', { attentionReason: result.reason });
      await tx.subscription.update({ where: { id }, data: { needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' } });
      log.warn({ subscriptionId: id, paymentId, orderId: ready.orderId, reason: result.reason }, 'charge outcome unknown; the subscription needs attention');
      return { ...base, outcome: 'UNKNOWN', message: result.reason };
  }
}
