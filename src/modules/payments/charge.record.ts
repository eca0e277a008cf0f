// Everything after a charge's call: the gateway's answer applied to the payment and the subscription, fenced on the
// lease (rule 5); UNKNOWN raises needsAttention and is never retried (rule 4). The success's values are the ledger's
// (chargeSuccessWrite, subscriptionAfterSuccess); a new cycle's approval renders them in one statement
// (recordAtOnce), everything else applies them through Prisma in the transaction recordAnswer opens (record).
import { sqlParams, sqlQuery } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import { StateConflictError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { attemptOutcomeValues, StaleLeaseError } from '../ledger/attempts.ts';
import { ATTEMPT_TRANSITIONS } from '../ledger/attempt.state.ts';
import { applyChargeDecline, applyChargeSuccess, chargeSuccessWrite, RECOVERING } from '../ledger/charge.outcomes.ts';
import { LIVE } from '../ledger/schedule.rules.ts';
import { PAYMENT_TRANSITIONS, transitionPayment } from '../ledger/payment.state.ts';
import { SUBSCRIPTION_TRANSITIONS } from '../ledger/subscription.state.ts';
import type { ChargeReport, Ready } from './charge.types.ts';

type Tx = Prisma.TransactionClient;

export function createChargeRecord(deps: Pick<ServiceDeps, 'db' | 'config' | 'log'>) {
  const { db, config, log } = deps;
  const zone = config.timezone;

  /** What an approved charge paid, for the ledger's success write: the same input on both renderings. */
  const paidBy = (ready: Ready, result: GatewayResult, now: Date) => ({
    cycle: ready.plan.cycle,
    dueAt: ready.plan.dueAt,
    amount: ready.plan.amount,
    transactionId: result.fields.transactionId!,
    approvedAt: result.fields.transactionDateTime ?? now,
    timezone: zone,
    now,
  });

  /**
   * A new cycle's approval (the common case) in one statement: the same write as the transactional record, rendered
   * in SQL. A guard locks the subscription under our lease, the attempt IN_FLIGHT under our lease and the payment in a
   * state `succeed` may leave (payment.state.ts), or nothing is written; then the attempt records the answer
   * (attemptOutcomeValues), the payment takes chargeSuccessWrite's values, and the subscription takes
   * subscriptionAfterSuccess's, decided by its status in SQL (scheduled while live, kept while paused, nothing once
   * cancelled, ACTIVE when RECOVERING). The events trigger sees the same updates. Any other outcome answers undefined:
   * the transactional record handles it. subscriptionAfterSuccess's pending-increase rule has no rendering here: the
   * one-statement prepare only runs with no pendingAmount, and an increase asked while the call is out is above the
   * amount charged, so it never applies to this success.
   */
  async function recordAtOnce(ready: Ready, result: GatewayResult, now: Date): Promise<ChargeReport | undefined> {
    if (!ready.newCycle || result.outcome !== 'SUCCEEDED') return undefined;
    const { subscriptionId: id, plan, paymentId, leaseOwner: owner } = ready;
    const write = chargeSuccessWrite(ready.newCycle, paidBy(ready, result, now));
    const { payment: pay, chainHead: head, period } = write;
    const outcome = attemptOutcomeValues(result, now);
    const { values, param: $ } = sqlParams();
    const [row] = await sqlQuery<{ written: number }>(
      db,
      `
      WITH g AS (
        SELECT s."id" FROM "subscriptions" s, "payment_attempts" a, "payments" p
         WHERE s."id" = ${$(id)}::uuid AND s."leaseOwner" = ${$(owner)}
           AND a."id" = ${$(ready.attemptId)}::uuid AND a."status"::text = ANY (${$([...ATTEMPT_TRANSITIONS.answer.from])}::text[]) AND a."leaseOwner" = ${$(owner)}
           AND p."id" = ${$(paymentId)}::uuid AND p."status"::text = ANY (${$([...PAYMENT_TRANSITIONS.succeed.from])}::text[])
         FOR UPDATE OF s, a, p),
      a AS (
        UPDATE "payment_attempts" SET "status" = ${$(outcome.status)}::"AttemptStatus", "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "sentAt" = ${$(outcome.sentAt)},
          "completedAt" = ${$(outcome.completedAt)}, "gatewayCode" = ${$(outcome.gatewayCode)}, "gatewayMessage" = ${$(outcome.gatewayMessage)},
          "transactionId" = ${$(outcome.transactionId)}, "approvedAt" = ${$(outcome.approvedAt)}, "rawResponse" = ${$(JSON.stringify(outcome.rawResponse))}::jsonb, "updatedAt" = now()
          FROM g WHERE "payment_attempts"."id" = ${$(ready.attemptId)}::uuid RETURNING 1),
      p AS (
        UPDATE "payments" SET "status" = ${$(PAYMENT_TRANSITIONS.succeed.to)}::"PaymentStatus", "transactionId" = ${$(pay.transactionId)},
          "approvedAt" = ${$(pay.approvedAt)}, "failureCode" = ${$(pay.failureCode)}, "failureMessage" = ${$(pay.failureMessage)},
          "attentionReason" = ${$(pay.attentionReason)}, "nextRetryAt" = ${$(pay.nextRetryAt)}::timestamptz, "updatedAt" = now()
          FROM g WHERE "payments"."id" = ${$(paymentId)}::uuid RETURNING 1),
      s AS (
        UPDATE "subscriptions" SET "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "cycle" = GREATEST("subscriptions"."cycle", ${$(write.nextCycle)}::int),
          "currentPeriodStart" = ${$(period.start)}, "currentPeriodEnd" = ${$(period.end)},
          "nextChargeAt" = CASE WHEN "subscriptions"."status"::text = ANY (${$([...LIVE])}::text[]) THEN ${$(period.end)}::timestamptz
                                WHEN "subscriptions"."status" = 'PAUSED' THEN "subscriptions"."nextChargeAt" END,
          "lastTransactionId" = ${$(head.lastTransactionId)}, "lastAmount" = ${$(head.lastAmount)}, "lastTransactionAt" = ${$(head.lastTransactionAt)},
          "status" = CASE WHEN "subscriptions"."status"::text = ANY (${$(RECOVERING)}::text[]) THEN ${$(SUBSCRIPTION_TRANSITIONS.recover.to)}::"SubscriptionStatus"
                          ELSE "subscriptions"."status" END,
          "changedAt" = ${$(write.changedAt)}, "updatedAt" = now()
          FROM g WHERE "subscriptions"."id" = g."id" RETURNING 1)
      SELECT (SELECT count(*) FROM a)::int + (SELECT count(*) FROM p)::int + (SELECT count(*) FROM s)::int AS "written"`,
      values,
    );
    if (row?.written !== 3) await throwWhyNotWritten(ready);
    log.info({ subscriptionId: id, paymentId, cycle: plan.cycle, orderId: ready.orderId }, 'charge approved');
    return { subscriptionId: id, paymentId, outcome: 'SUCCEEDED' };
  }

  /**
   * Why the one-statement record wrote nothing, classified as the transactional record classifies it: a lease no
   * longer ours is a StaleLeaseError (LEASE_LOST); leases held but the payment in a state `succeed` may not leave is
   * the STATE_CONFLICT its transition would raise (RECORD_FAILED).
   */
  async function throwWhyNotWritten(ready: Ready): Promise<never> {
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
  async function record(tx: Tx, ready: Ready, result: GatewayResult, now: Date): Promise<ChargeReport> {
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
        await applyChargeSuccess(tx, { subscriptionId: id, paymentId, ...paidBy(ready, result, now), current });
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
          retryDelaysMs: config.retryDelaysMs,
          now,
          timezone: zone,
        });
        log.info({ subscriptionId: id, paymentId, cycle: plan.cycle, declines, next: next.action, gatewayCode: result.code }, 'charge declined');
        return { ...base, outcome: 'DECLINED', gatewayCode: result.code, message: result.message };
      }
      case 'NOT_SENT':
        // Same attempt row and orderId next time (DESIGN.md §5); the payment stays PENDING.
        log.warn({ subscriptionId: id, paymentId, reason: result.reason, detail: result.detail }, 'charge not sent; it will be sent again');
        return { ...base, outcome: 'SKIPPED', code: 'NOT_SENT', message: result.detail };
      case 'UNKNOWN':
        await transitionPayment(tx, paymentId, 'lose', { attentionReason: result.reason });
        await tx.subscription.update({ where: { id }, data: { needsAttention: true, attentionReason: 'PAYMENT_OUTCOME_UNKNOWN' } });
        log.warn({ subscriptionId: id, paymentId, orderId: ready.orderId, reason: result.reason }, 'charge outcome unknown; the subscription needs attention');
        return { ...base, outcome: 'UNKNOWN', message: result.reason };
    }
  }

  return { record, recordAtOnce };
}
