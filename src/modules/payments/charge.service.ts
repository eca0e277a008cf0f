// The charging engine (DESIGN.md §3, all rules): claims due subscriptions, charges them through the gateway and
// records every outcome. The scheduler's tick, POST /admin/scheduler/run and the admin charge all come here.
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
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ServiceDeps } from '../service-deps.ts';
import { readBillingKey, revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { prepareAttempt, StaleLeaseError, sweepExpiredAttempts as sweep } from './attempts.ts';
import { createGatewayOperations } from './gateway-operation.ts';
import { explainCharge, planCharge, type ChargePlan, type RefusalCode } from './charge.rules.ts';
import { applyChargeDecline, applyChargeSuccess } from './charge.outcomes.ts';
import { transitionPayment } from './payment.state.ts';
import { transitionSubscription } from '../subscriptions/subscription.state.ts';

type Tx = Prisma.TransactionClient;
type Trigger = 'SCHEDULER' | 'ADMIN';

export type ChargeDeps = ServiceDeps;

/** How one claimed subscription ended. SKIPPED: a rule refused, the call was not sent, or the claim was lost. */
export type ChargeOutcome = 'SUCCEEDED' | 'DECLINED' | 'UNKNOWN' | 'SKIPPED';

export interface ChargeReport {
  subscriptionId: string;
  outcome: ChargeOutcome;
  paymentId?: string;
  /** Why nothing was sent: a rule's code, NOT_SENT, LEASE_LOST or CANCELED_AT_PERIOD_END. */
  code?: RefusalCode | 'NOT_SENT' | 'LEASE_LOST' | 'CANCELED_AT_PERIOD_END' | 'BILLING_KEY_UNREADABLE' | 'ERROR' | 'RECORD_FAILED' | 'CHARGE_IN_PROGRESS';
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

const LIVE = ['ACTIVE', 'PAST_DUE'] as const;

interface Ready {
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
}

type Prepared = Ready | { kind: 'DONE'; report: ChargeReport };

/** Called in the transaction that commits a charge's payment and attempt, just before the call. */
export type OnPrepared = (tx: Tx, info: { paymentId: string; orderId: string; cycle: number; amount: number }) => Promise<void>;

export function createChargeService(deps: ChargeDeps) {
  const { db, gateway, clock, config, keyring, log } = deps;
  const { leaseMs, batchSize, concurrency } = config.scheduler;
  const zone = config.timezone;
  const runOperation = createGatewayOperations({ db, clock, log });

  let stopping = false;
  const passes = new Set<Promise<PassReport>>();

  /**
   * Releases our lease on a subscription, raising it for an operator when `attention` names why; false when the lease
   * was no longer ours. Status moves go through subscription.state.ts before it.
   */
  async function release(tx: Tx | Db, id: string, owner: string, attention?: string) {
    const released = await tx.subscription.updateMany({
      where: { id, leaseOwner: owner },
      data: { leaseOwner: null, leaseExpiresAt: null, needsAttention: attention ? true : undefined, attentionReason: attention },
    });
    return released.count === 1;
  }

  /** Claims up to a batch of subscriptions due by `dueBy` whose lease is free at `now`. */
  async function claimBatch(owner: string, dueBy: Date, now: Date, exclude: string[]): Promise<string[]> {
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    const rows = await db.$queryRaw<{ id: string }[]>`
      UPDATE "subscriptions" SET "leaseOwner" = ${owner}, "leaseExpiresAt" = ${leaseExpiresAt}
      WHERE "id" IN (
        SELECT "id" FROM "subscriptions"
        WHERE "status" IN ('ACTIVE', 'PAST_DUE') AND "needsAttention" = false
          AND "nextChargeAt" <= ${dueBy}
          AND ("leaseExpiresAt" IS NULL OR "leaseExpiresAt" < ${now})
          AND NOT ("id" = ANY(${exclude}::uuid[]))
        ORDER BY "nextChargeAt"
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING "id"`;
    return rows.map((row) => row.id);
  }

  /** Takes the lease on one subscription for an operator's charge; false when someone else holds it. */
  async function claimOne(id: string, owner: string, now: Date): Promise<boolean> {
    const claimed = await db.subscription.updateMany({
      where: { id, OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }] },
      data: { leaseOwner: owner, leaseExpiresAt: new Date(now.getTime() + leaseMs) },
    });
    return claimed.count === 1;
  }

  /** Every attempt left IN_FLIGHT past its lease, of every operation, becomes UNKNOWN (attempts.ts). */
  const sweepExpiredAttempts = (now: Date) => sweep(db, now, log);

  /** Everything before the call, in one short transaction fenced on our lease. */
  async function prepare(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared): Promise<Prepared> {
    const now = clock.now();
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    return db.$transaction(async (tx): Promise<Prepared> => {
      // Renewing the lease locks the row for this transaction and proves it is still ours.
      const renewed = await tx.subscription.updateMany({ where: { id, leaseOwner: owner }, data: { leaseExpiresAt } });
      if (renewed.count === 0) return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST' } };
      const sub = await tx.subscription.findUniqueOrThrow({ where: { id }, include: { billingKey: true } });
      const open = await tx.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId: id, cycle: sub.cycle } } });
      const declines = open ? await tx.paymentAttempt.count({ where: { paymentId: open.id, status: 'DECLINED' } }) : 0;
      const plan = planCharge(
        { ...sub, billingKeyStatus: sub.billingKey.status },
        open && open.dueAt ? { cycle: sub.cycle, status: open.status, amount: open.amount, dueAt: open.dueAt, declines } : undefined,
        { now, timezone: zone, trigger },
      );

      if (plan.action === 'CANCEL_AT_PERIOD_END') {
        await transitionSubscription(tx, id, 'cancel', { canceledAt: now, nextChargeAt: null, cancelReason: sub.cancelReason ?? 'CANCELED_AT_PERIOD_END' });
        await release(tx, id, owner);
        await revokeBillingKey(tx, sub.billingKeyId, now);
        log.info({ subscriptionId: id }, 'subscription cancelled at the end of its period');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CANCELED_AT_PERIOD_END' } };
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

      const payment =
        open ??
        (await tx.payment.create({
          data: {
            subscriptionId: id,
            cycle: plan.cycle,
            kind: trigger === 'ADMIN' ? 'MANUAL' : 'RECURRING',
            method: sub.method,
            amount: plan.amount,
            orderId: chargeOrderId(id, plan.cycle, 1),
            dueAt: plan.dueAt,
          },
        }));
      // A call of this payment still in flight under a live lease (its answer not yet written): never a second one.
      const inFlight = await tx.paymentAttempt.count({ where: { paymentId: payment.id, status: 'IN_FLIGHT', leaseExpiresAt: { gte: now } } });
      if (inFlight > 0) {
        await release(tx, id, owner);
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CHARGE_IN_PROGRESS', paymentId: payment.id } };
      }
      if (plan.cycle !== sub.cycle) {
        await tx.subscription.update({ where: { id }, data: { cycle: plan.cycle } });
        log.info({ subscriptionId: id, from: sub.cycle, to: plan.cycle }, 'missed periods after downtime are not back-charged');
      }
      const attempt = await prepareAttempt(tx, {
        paymentId: payment.id,
        operation: 'BILLING_CONFIRM',
        orderId: (n) => chargeOrderId(id, plan.cycle, n),
        amount: plan.amount,
        leaseOwner: owner,
        leaseExpiresAt,
        now,
        allowAfterUnknown: false,
      });
      if (!attempt.attemptId) {
        await release(tx, id, owner, 'PAYMENT_OUTCOME_UNKNOWN');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'PAYMENT_OUTCOME_UNKNOWN', paymentId: payment.id } };
      }
      // A retry makes a FAILED payment PENDING again while it is in flight (DESIGN.md §5).
      await transitionPayment(tx, payment.id, 'send', { nextRetryAt: null });
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
    // Releasing the lease proves it was still ours and locks the row for the rest of this transaction.
    if (!(await release(tx, id, ready.leaseOwner))) throw new StaleLeaseError(`subscription ${id}`);

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

  /**
   * Charges one subscription whose lease `owner` holds, through the one gateway-operation engine. Never throws for
   * gateway outcomes. An answer that could not be recorded releases nothing: the attempt stays IN_FLIGHT under both
   * leases and becomes UNKNOWN in a sweep, which raises the subscription.
   */
  function chargeClaimed(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared): Promise<ChargeReport> {
    return runOperation<Ready, ChargeReport>({
      prepare: async () => {
        const prepared = await prepare(id, owner, trigger, onPrepared);
        return prepared.kind === 'DONE' ? { done: prepared.report } : { ready: prepared };
      },
      call: (ready) =>
        gateway.chargeBillingKey({
          method: ready.method,
          billingKey: ready.billingKey,
          userId: ready.userId,
          amount: ready.plan.amount,
          orderName: ready.orderName,
          orderId: ready.orderId,
          ...(ready.method === 'MOBILE' ? { lastTransactionId: ready.plan.lastTransactionId, itemCode: ready.itemCode ?? undefined } : {}),
        }),
      record,
      unrecorded: (ready, _result, reason) => ({
        subscriptionId: id,
        paymentId: ready.paymentId,
        outcome: 'UNKNOWN',
        code: reason,
        message: reason === 'LEASE_LOST' ? 'the lease was lost before the answer was recorded' : 'the gateway answered but the answer could not be recorded',
      }),
    });
  }

  async function chargeOrRelease(id: string, owner: string, trigger: Trigger): Promise<ChargeReport> {
    if (stopping) {
      await release(db, id, owner);
      return { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'shutting down' };
    }
    try {
      return await chargeClaimed(id, owner, trigger);
    } catch (error) {
      log.error({ subscriptionId: id, err: error }, 'charging a subscription failed');
      await release(db, id, owner).catch(() => undefined);
      return { subscriptionId: id, outcome: 'SKIPPED', code: 'ERROR' };
    }
  }

  /**
   * One charging pass: sweep dead attempts, then claim due subscriptions in batches until none is left, charging
   * each with bounded concurrency. Idempotent: running it twice, or on several replicas at once, charges every
   * due subscription once.
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
      await sweepExpiredAttempts(dueBy);
      while (!stopping) {
        const ids = await claimBatch(owner, dueBy, clock.now(), leftDue);
        if (ids.length === 0) break;
        report.claimed += ids.length;
        const results = await Promise.all(ids.map((id) => limit(() => chargeOrRelease(id, owner, 'SCHEDULER'))));
        for (const r of results) {
          if (r.outcome === 'SUCCEEDED') report.succeeded += 1;
          else if (r.outcome === 'DECLINED') report.declined += 1;
          else if (r.outcome === 'UNKNOWN') report.unknown += 1;
          else report.skipped += 1;
        }
        const stillDue = await db.subscription.findMany({
          where: { id: { in: ids }, nextChargeAt: { lte: dueBy }, status: { in: [...LIVE] }, needsAttention: false },
          select: { id: true },
        });
        leftDue.push(...stillDue.map((row) => row.id));
      }
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
    if (!(await claimOne(id, owner, clock.now()))) return { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'the subscription is being charged right now' };
    try {
      return await chargeClaimed(id, owner, 'ADMIN', options.onPrepared);
    } catch (error) {
      await release(db, id, owner).catch(() => undefined);
      throw error;
    }
  }

  /** The rules an operator's charge would meet now, without claiming or charging anything. */
  async function explainSubscriptionCharge(id: string) {
    const sub = await db.subscription.findUnique({ where: { id }, include: { billingKey: true } });
    if (!sub) return undefined;
    const open = await db.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId: id, cycle: sub.cycle } } });
    const declines = open ? await db.paymentAttempt.count({ where: { paymentId: open.id, status: 'DECLINED' } }) : 0;
    return explainCharge(
      { ...sub, billingKeyStatus: sub.billingKey.status },
      open && open.dueAt ? { cycle: sub.cycle, status: open.status, amount: open.amount, dueAt: open.dueAt, declines } : undefined,
      { now: clock.now(), timezone: zone, trigger: 'ADMIN' },
    );
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
