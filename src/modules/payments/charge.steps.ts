// One charge, step by step (the engine in charge.service.ts runs them through gateway-operation.ts):
// - prepare: in one short transaction fenced on the subscription's lease, every rule of the plan (charge.rules.ts)
//   checked again, then the payment and its IN_FLIGHT attempt with a deterministic orderId committed before the call
//   (rules 1, 2); a refusal is answered here and nothing is sent;
// - record: in the transaction that recorded the attempt, the outcome applied to the payment and the subscription
//   (charge.outcomes.ts), fenced on the lease (rule 5); UNKNOWN raises needsAttention and is never retried (rule 4).
import { sqlParams, sqlQuery, type Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { readBillingKey, revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { attemptOutcomeValues, firstAttempt, prepareAttempt, StaleLeaseError } from '../ledger/attempts.ts';
import { consentsMatter, planCharge, type ChargePlan, type PlanContext, type RefusalCode } from '../ledger/charge.rules.ts';
import { LIVE, periodAfterSuccess, type ChargeableSubscription } from '../ledger/schedule.rules.ts';
import { applyChargeDecline, applyChargeSuccess, countDeclines } from '../ledger/charge.outcomes.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { PAYMENT_TRANSITIONS, transitionPayment } from '../ledger/payment.state.ts';
import { SUBSCRIPTION_TRANSITIONS, transitionSubscription } from '../ledger/subscription.state.ts';

type Tx = Prisma.TransactionClient;
export type Trigger = 'SCHEDULER' | 'ADMIN';

/** How one claimed subscription ended. SKIPPED: a rule refused, the call was not sent, or the claim was lost. */
export type ChargeOutcome = 'SUCCEEDED' | 'DECLINED' | 'UNKNOWN' | 'SKIPPED';

export interface ChargeReport {
  subscriptionId: string;
  outcome: ChargeOutcome;
  paymentId?: string;
  /** Why nothing was sent: a rule's code, NOT_SENT, LEASE_LOST or CANCELED_AT_PERIOD_END. */
  code?:
    | RefusalCode
    | 'NOT_SENT'
    | 'LEASE_LOST'
    | 'CANCELED_AT_PERIOD_END'
    | 'CONSENT_MISSING'
    | 'BILLING_KEY_UNREADABLE'
    | 'ERROR'
    | 'RECORD_FAILED'
    | 'CHARGE_IN_PROGRESS';
  message?: string;
  gatewayCode?: string;
}

export interface PassReport {
  claimed: number;
  succeeded: number;
  declined: number;
  unknown: number;
  skipped: number;
}

/** Deterministic charge orderId (rule 2): subscription, cycle and attempt, at most 50 bytes. */
export function chargeOrderId(subscriptionId: string, cycle: number, attempt: number): string {
  const orderId = `S${subscriptionId.replace(/-/g, '')}-${cycle}-${attempt}`;
  if (Buffer.byteLength(orderId, 'utf8') > 50) throw new Error(`orderId for cycle ${cycle} attempt ${attempt} exceeds 50 bytes`);
  return orderId;
}

/** The statuses a charge is for. */

export interface Ready {
  kind: 'READY';
  leaseOwner: string;
  subscriptionId: string;
  method: 'CARD' | 'MOBILE';
  plan: Extract<ChargePlan, { action: 'CHARGE' }>;
  paymentId: string;
  attemptId: string;
  orderId: string;
  billingKey: string;
  userId: string;
  orderName: string;
  itemCode: string | null;
  /** Prepared by prepareNewCycle: what its success needs, so that it is recorded in one statement (recordAtOnce). */
  newCycle?: Pick<ChargeableSubscription, 'method' | 'anchorAt' | 'intervalUnit' | 'intervalCount'>;
}

export type Prepared = Ready | { kind: 'DONE'; report: ChargeReport };

/** Called in the transaction that commits a charge's payment and attempt, just before the call. */
export type OnPrepared = (tx: Tx, info: { paymentId: string; orderId: string; cycle: number; amount: number }) => Promise<void>;

/** The steps of one charge, over the service's dependencies. */
/**
 * What the planner decides from, loaded the same way for a charge and for an operator's dry run: the subscription
 * with its key, the current cycle's payment with its declines, and the consents.
 */
export async function loadChargeInputs(tx: Tx | Db, id: string, context: Omit<PlanContext, 'consents'>, known?: SubscriptionWithKey) {
  const sub = known ?? (await tx.subscription.findUnique({ where: { id }, include: { billingKey: true } }));
  if (!sub) return undefined;
  const open = await tx.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId: id, cycle: sub.cycle } } });
  const declines = open ? await countDeclines(tx, open) : 0;
  const consents = consentsMatter(sub, open ?? undefined, context.consentRequired)
    ? await tx.consent.findMany({ where: { subscriptionId: id }, select: { kind: true, obtainedAt: true } })
    : [];
  return {
    sub,
    open,
    planSub: { ...sub, billingKeyStatus: sub.billingKey.status },
    openInput: open?.dueAt ? { cycle: sub.cycle, status: open.status, amount: open.amount, dueAt: open.dueAt, declines } : undefined,
    ctx: { ...context, consents } satisfies PlanContext,
  };
}

type SubscriptionWithKey = Prisma.SubscriptionGetPayload<{ include: { billingKey: true } }>;

/**
 * What the scheduler's claim reads of each subscription it leases (charge.service.ts's claimBatch), for
 * prepareNewCycle: the subscription, its key and whether its cycle has a payment already.
 */
export interface ClaimedRow extends Omit<ChargeableSubscription, 'billingKeyStatus'> {
  billingKeyStatus: 'ACTIVE' | 'REVOKED';
  userId: string;
  orderName: string;
  itemCode: string | null;
  updatedAt: Date;
  keyId: string;
  encryptionKeyId: string;
  keyIv: Uint8Array;
  keyTag: Uint8Array;
  keyCiphertext: Uint8Array;
  hasPayment: boolean;
}

/** The RETURNING list of the claim (subscriptions `s`, billing keys `k`): a ClaimedRow. */
export const CLAIMED_COLUMNS = `s."id", s."method"::text AS "method", s."status"::text AS "status", s."amount", s."pendingAmount", s."pendingAmountRequestedAt",
  s."intervalUnit"::text AS "intervalUnit", s."intervalCount", s."anchorAt", s."cycle", s."currentPeriodEnd", s."nextChargeAt",
  s."cancelAtPeriodEnd", s."needsAttention", s."lastTransactionId", s."lastAmount", s."lastTransactionAt", s."userId", s."orderName", s."itemCode", s."updatedAt",
  k."id" AS "keyId", k."status"::text AS "billingKeyStatus", k."encryptionKeyId", k."keyIv", k."keyTag", k."keyCiphertext",
  EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = s."id" AND p."cycle" = s."cycle") AS "hasPayment"`;

export function createChargeSteps(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'keyring' | 'log'>) {
  const { db, clock, config, keyring, log } = deps;
  const { leaseMs } = config.scheduler;
  const zone = config.timezone;
  const release = releaseSubscription;

  /**
   * The common case of a scheduled charge in one statement and no transaction: a new cycle of a subscription with no
   * payment for it yet and no consent that matters. planCharge decides from the row the claim read; then one statement
   * renews the lease and writes the payment and its IN_FLIGHT attempt (rule 1), only if the lease is still ours and
   * nothing the plan read has changed since the claim (an operator's pause, cancel or change in between is seen
   * there: updatedAt, which every Prisma write sets, and the columns that decide what is charged). Anything else
   * answers undefined: the transactional prepare below decides it, with every rule.
   */
  async function prepareNewCycle(row: ClaimedRow, owner: string, now: Date, leaseExpiresAt: Date): Promise<Prepared | undefined> {
    const { id } = row;
    if (row.hasPayment || consentsMatter(row, undefined, config.consentRequired)) return undefined;
    const plan = planCharge(row, undefined, { now, timezone: zone, trigger: 'SCHEDULER', consents: [], consentRequired: config.consentRequired });
    if (plan.action !== 'CHARGE' || plan.cycle !== row.cycle) return undefined;
    let billingKey: string;
    try {
      billingKey = readBillingKey(keyring, {
        id: row.keyId,
        encryptionKeyId: row.encryptionKeyId,
        keyIv: row.keyIv,
        keyTag: row.keyTag,
        keyCiphertext: row.keyCiphertext,
      });
    } catch {
      return undefined;
    }
    const orderId = chargeOrderId(id, plan.cycle, 1);
    // Through the pg pool, named (db/prisma.ts): Prisma's $queryRaw cost about 0.45 ms more CPU per statement than
    // node-postgres on a measured read (issue 15). Parameters whose type the statement does not fix are cast.
    const [written] = await sqlQuery<{ paymentId: string; attemptId: string }>(
      db,
      `
      WITH ok AS (
        UPDATE "subscriptions" s SET "leaseExpiresAt" = $9::timestamptz
         WHERE s."id" = $1::uuid AND s."leaseOwner" = $2 AND s."status"::text = ANY ($3::text[]) AND s."needsAttention" = false AND s."cycle" = $4::int
           AND s."updatedAt" = $10::timestamptz AND s."amount" = $11::int AND s."pendingAmount" IS NULL AND s."cancelAtPeriodEnd" = false
           AND s."billingKeyId" = $12::uuid AND s."lastTransactionId" IS NOT DISTINCT FROM $13::text
           AND EXISTS (SELECT 1 FROM "billing_keys" k WHERE k."id" = $12::uuid AND k."status" = 'ACTIVE')
           AND NOT EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = $1::uuid AND p."cycle" = $4::int)
        RETURNING s."id"),
      p AS (
        INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "amount", "orderId", "attemptCount", "dueAt", "updatedAt")
        SELECT ok."id", $4::int, 'RECURRING', $5::"PaymentMethod", $6::int, $7::text, 1, $8::timestamptz, now() FROM ok
        RETURNING "id"),
      a AS (
        INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "leaseOwner", "leaseExpiresAt", "updatedAt")
        SELECT p."id", 1, 'BILLING_CONFIRM', $7::text, $6::int, $2::text, $9::timestamptz, now() FROM p
        RETURNING "id", "paymentId")
      SELECT "paymentId", "id" AS "attemptId" FROM a`,
      [
        id,
        owner,
        [...LIVE],
        plan.cycle,
        row.method,
        plan.amount,
        orderId,
        plan.dueAt,
        leaseExpiresAt,
        row.updatedAt,
        row.amount,
        row.keyId,
        row.lastTransactionId,
      ],
    );
    if (!written) return undefined;
    return {
      kind: 'READY',
      leaseOwner: owner,
      subscriptionId: id,
      method: row.method,
      plan,
      paymentId: written.paymentId,
      attemptId: written.attemptId,
      orderId,
      billingKey,
      userId: row.userId,
      orderName: row.orderName,
      itemCode: row.itemCode,
      newCycle: { method: row.method, anchorAt: row.anchorAt, intervalUnit: row.intervalUnit, intervalCount: row.intervalCount },
    };
  }

  /**
   * A new cycle's approval (the common case) in one statement, with the rules of the transactional record: a guard
   * locks the subscription under our lease, the attempt IN_FLIGHT under our lease and the payment in a state
   * `succeed` may leave (payment.state.ts), or nothing is written and the lease counts as lost; then the attempt
   * records the answer (attemptOutcomeValues), the payment moves to SUCCEEDED, and the subscription is released on
   * its next period (periodAfterSuccess): scheduled if still live, left as it is if paused, nothing if cancelled,
   * ACTIVE again if it was recovering (subscription.state.ts's `recover`). The events trigger sees the same updates.
   * Any other outcome answers undefined: the transactional record handles it.
   */
  async function recordAtOnce(ready: Ready, result: GatewayResult, now: Date): Promise<ChargeReport | undefined> {
    if (!ready.newCycle || result.outcome !== 'SUCCEEDED') return undefined;
    const { subscriptionId: id, plan, paymentId, leaseOwner: owner } = ready;
    const approvedAt = result.fields.transactionDateTime ?? now;
    const transactionId = result.fields.transactionId!;
    const { nextCycle, period } = periodAfterSuccess(ready.newCycle, { cycle: plan.cycle, dueAt: plan.dueAt, approvedAt, timezone: zone });
    const outcome = attemptOutcomeValues(result, now);
    const succeedFrom = [...PAYMENT_TRANSITIONS.succeed.from];
    const recovering = SUBSCRIPTION_TRANSITIONS.recover.from.filter((s) => s !== SUBSCRIPTION_TRANSITIONS.recover.to);
    const { values, param: $ } = sqlParams();
    const [row] = await sqlQuery<{ written: number }>(
      db,
      `
      WITH g AS (
        SELECT s."id" FROM "subscriptions" s, "payment_attempts" a, "payments" p
         WHERE s."id" = ${$(id)}::uuid AND s."leaseOwner" = ${$(owner)}
           AND a."id" = ${$(ready.attemptId)}::uuid AND a."status" = 'IN_FLIGHT' AND a."leaseOwner" = ${$(owner)}
           AND p."id" = ${$(paymentId)}::uuid AND p."status"::text = ANY (${$(succeedFrom)}::text[])
         FOR UPDATE OF s, a, p),
      a AS (
        UPDATE "payment_attempts" SET "status" = 'SUCCEEDED', "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "sentAt" = ${$(outcome.sentAt)},
          "completedAt" = ${$(outcome.completedAt)}, "gatewayCode" = ${$(outcome.gatewayCode)}, "gatewayMessage" = ${$(outcome.gatewayMessage)},
          "transactionId" = ${$(outcome.transactionId)}, "approvedAt" = ${$(outcome.approvedAt)}, "rawResponse" = ${$(JSON.stringify(outcome.rawResponse))}::jsonb, "updatedAt" = now()
          FROM g WHERE "payment_attempts"."id" = ${$(ready.attemptId)}::uuid RETURNING 1),
      p AS (
        UPDATE "payments" SET "status" = 'SUCCEEDED', "transactionId" = ${$(transactionId)}, "approvedAt" = ${$(approvedAt)}, "failureCode" = NULL,
          "failureMessage" = NULL, "attentionReason" = NULL, "nextRetryAt" = NULL, "updatedAt" = now()
          FROM g WHERE "payments"."id" = ${$(paymentId)}::uuid RETURNING 1),
      s AS (
        UPDATE "subscriptions" SET "leaseOwner" = NULL, "leaseExpiresAt" = NULL, "cycle" = GREATEST("subscriptions"."cycle", ${$(nextCycle)}::int),
          "currentPeriodStart" = ${$(period.start)}, "currentPeriodEnd" = ${$(period.end)},
          "nextChargeAt" = CASE WHEN "subscriptions"."status"::text = ANY (${$([...LIVE])}::text[]) THEN ${$(period.end)}::timestamptz
                                WHEN "subscriptions"."status" = 'PAUSED' THEN "subscriptions"."nextChargeAt" END,
          "lastTransactionId" = ${$(transactionId)}, "lastAmount" = ${$(plan.amount)}, "lastTransactionAt" = ${$(approvedAt)},
          "status" = CASE WHEN "subscriptions"."status"::text = ANY (${$(recovering)}::text[]) THEN ${$(SUBSCRIPTION_TRANSITIONS.recover.to)}::"SubscriptionStatus"
                          ELSE "subscriptions"."status" END,
          "updatedAt" = now()
          FROM g WHERE "subscriptions"."id" = g."id" RETURNING 1)
      SELECT (SELECT count(*) FROM a)::int + (SELECT count(*) FROM p)::int + (SELECT count(*) FROM s)::int AS "written"`,
      values,
    );
    if (row?.written !== 3) throw new StaleLeaseError(`subscription ${id}`);
    log.info({ subscriptionId: id, paymentId, cycle: plan.cycle, orderId: ready.orderId }, 'charge approved');
    return { subscriptionId: id, paymentId, outcome: 'SUCCEEDED' };
  }

  /** Everything before the call, in one short transaction fenced on our lease. */
  async function prepare(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared, claimed?: ClaimedRow): Promise<Prepared> {
    const now = clock.now();
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    if (trigger === 'SCHEDULER' && !onPrepared && claimed) {
      const fast = await prepareNewCycle(claimed, owner, now, leaseExpiresAt);
      if (fast) return fast;
    }
    return db.$transaction(async (tx): Promise<Prepared> => {
      // Renewing the lease locks the row for this transaction, proves it is still ours, and reads it.
      const [renewed] = await tx.subscription.updateManyAndReturn({
        where: { id, leaseOwner: owner },
        data: { leaseExpiresAt },
        include: { billingKey: true },
      });
      if (!renewed) return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST' } };
      const { sub, open, planSub, openInput, ctx } = (await loadChargeInputs(
        tx,
        id,
        { now, timezone: zone, trigger, consentRequired: config.consentRequired },
        renewed,
      ))!;
      const plan = planCharge(planSub, openInput, ctx);

      if (plan.action === 'CANCEL_AT_PERIOD_END') {
        await transitionSubscription(tx, id, 'cancel', { canceledAt: now, nextChargeAt: null, cancelReason: sub.cancelReason ?? 'CANCELED_AT_PERIOD_END' });
        await release(tx, id, owner);
        await revokeBillingKey(tx, sub.billingKeyId, now);
        log.info({ subscriptionId: id }, 'subscription cancelled at the end of its period');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CANCELED_AT_PERIOD_END' } };
      }
      if (plan.action === 'CANCEL_CONSENT_MISSING') {
        await transitionSubscription(tx, id, 'cancel', { canceledAt: now, nextChargeAt: null, cancelReason: 'CONSENT_MISSING' });
        await release(tx, id, owner);
        await revokeBillingKey(tx, sub.billingKeyId, now);
        log.info({ subscriptionId: id }, 'trial ended without the customer’s consent to convert (rule 13): cancelled, not charged');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CONSENT_MISSING' } };
      }
      if (plan.action === 'REFUSE') {
        if (plan.pastDue) await transitionSubscription(tx, id, 'decline', { nextChargeAt: null });
        await release(tx, id, owner, plan.attention ? plan.code : undefined);
        if (plan.attention) log.warn({ subscriptionId: id, code: plan.code }, `subscription needs attention: ${plan.message}`);
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: plan.code, message: plan.message, paymentId: open?.id } };
      }

      let billingKey: string;
      try {
        billingKey = readBillingKey(keyring, sub.billingKey);
      } catch {
        // The encryption key that sealed it is no longer configured: nothing can be sent until it is.
        await release(tx, id, owner, 'BILLING_KEY_UNREADABLE');
        log.error({ subscriptionId: id, encryptionKeyId: sub.billingKey.encryptionKeyId }, 'billing key cannot be decrypted with the configured keys');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'BILLING_KEY_UNREADABLE' } };
      }

      if (plan.cycle !== sub.cycle) {
        await tx.subscription.update({ where: { id }, data: { cycle: plan.cycle } });
        log.info({ subscriptionId: id, from: sub.cycle, to: plan.cycle }, 'missed periods after downtime are not back-charged');
      }
      let payment: { id: string };
      let attempt: { attemptId: string; orderId: string };
      if (!open) {
        // A new cycle's payment, PENDING with its first attempt: nothing to look up (the common case).
        const orderId = chargeOrderId(id, plan.cycle, 1);
        payment = await tx.payment.create({
          data: {
            subscriptionId: id,
            cycle: plan.cycle,
            kind: trigger === 'ADMIN' ? 'MANUAL' : 'RECURRING',
            method: sub.method,
            amount: plan.amount,
            orderId,
            attemptCount: 1,
            dueAt: plan.dueAt,
          },
          select: { id: true },
        });
        attempt = {
          attemptId: (
            await firstAttempt(tx, { paymentId: payment.id, operation: 'BILLING_CONFIRM', orderId, amount: plan.amount, leaseOwner: owner, leaseExpiresAt })
          ).attemptId!,
          orderId,
        };
      } else {
        payment = open;
        // A call of this payment still in flight under a live lease (its answer not yet written): never a second one.
        const inFlight = await tx.paymentAttempt.count({ where: { paymentId: open.id, status: 'IN_FLIGHT', leaseExpiresAt: { gte: now } } });
        if (inFlight > 0) {
          await release(tx, id, owner);
          return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CHARGE_IN_PROGRESS', paymentId: open.id } };
        }
        const prepared = await prepareAttempt(tx, {
          paymentId: open.id,
          operation: 'BILLING_CONFIRM',
          orderId: (n) => chargeOrderId(id, plan.cycle, n),
          amount: plan.amount,
          leaseOwner: owner,
          leaseExpiresAt,
          now,
          allowAfterUnknown: false,
        });
        if (!prepared.attemptId) {
          await release(tx, id, owner, 'PAYMENT_OUTCOME_UNKNOWN');
          return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'PAYMENT_OUTCOME_UNKNOWN', paymentId: open.id } };
        }
        attempt = { attemptId: prepared.attemptId, orderId: prepared.orderId! };
        // A retry makes a FAILED payment PENDING again while it is in flight (DESIGN.md §5).
        await transitionPayment(tx, open.id, 'send', { nextRetryAt: null });
      }
      await onPrepared?.(tx, { paymentId: payment.id, orderId: attempt.orderId!, cycle: plan.cycle, amount: plan.amount });
      return {
        kind: 'READY',
        leaseOwner: owner,
        subscriptionId: id,
        method: sub.method,
        plan,
        paymentId: payment.id,
        attemptId: attempt.attemptId,
        orderId: attempt.orderId!,
        billingKey,
        userId: sub.userId,
        orderName: sub.orderName,
        itemCode: sub.itemCode,
      };
    });
  }

  /** The charge's domain step, in the engine's transaction that recorded the attempt (gateway-operation.ts). */
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
        await applyChargeSuccess(tx, {
          subscriptionId: id,
          paymentId,
          cycle: plan.cycle,
          dueAt: plan.dueAt,
          amount: plan.amount,
          transactionId: result.fields.transactionId!,
          approvedAt: result.fields.transactionDateTime ?? now,
          timezone: zone,
          current,
        });
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

  return { prepare, record, recordAtOnce };
}
