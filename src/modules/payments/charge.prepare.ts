// Everything before a charge's call (docs/architecture.md, invariants 1, 2, 5, 13): the plan checked again under the subscription's lease, then
// the payment and its IN_FLIGHT attempt with a deterministic orderId committed, or a refusal answered and nothing
// sent. Two renderings: new cycles claimed by the scheduler in one statement per batch (prepareNewCycles), everything
// else in one short transaction with every rule (prepare).
import { sqlQuery } from '../../db/prisma.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { readBillingKey, revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { firstAttempt, lockAttempts, prepareAttempt } from '../ledger/attempts.ts';
import { consentsMatter, periodEndCancelAt, planCharge } from '../ledger/charge.rules.ts';
import { LIVE } from '../ledger/schedule.rules.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { transitionSubscription } from '../ledger/subscription.state.ts';
import { loadChargeInputs, type ClaimedRow } from './charge.claim.ts';
import { chargeOrderId, type OnPrepared, type Prepared, type Ready, type Trigger } from './charge.types.ts';

export function createChargePrepare(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'keyring' | 'log'>) {
  const { db, clock, config, keyring, log } = deps;
  const { leaseMs } = config.scheduler;
  const zone = config.timezone;
  const release = releaseSubscription;

  /**
   * The common case of a scheduled charge, for a batch of claimed rows in one statement and no transaction: new cycles
   * of subscriptions with no payment for them yet and no consent that matters. planCharge decides each from the row
   * the claim read; then one statement renews each lease and writes each payment and its IN_FLIGHT attempt (invariant 1),
   * row by row only where the lease is still ours and nothing the plan read has changed since the claim (an
   * operator's pause, cancel or change in between is seen there: the row's version, which every write changes, and the
   * columns that decide what is charged). A row the statement did not write, or that the planner did not send here,
   * is absent from the answer: the transactional prepare below decides it, with every rule. A batch of one is the
   * single charge's form; test/modules/payments/charge-paths.test.ts compares both sizes with the transactional path.
   */
  async function prepareNewCycles(rows: readonly ClaimedRow[], owner: string): Promise<Map<string, Ready>> {
    const now = clock.now();
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    const planned: { row: ClaimedRow; plan: Ready['plan']; billingKey: string; orderId: string }[] = [];
    for (const row of rows) {
      if (row.hasPayment || consentsMatter(row, undefined, config.consentRequired)) continue;
      const plan = planCharge(row, undefined, { now, timezone: zone, trigger: 'SCHEDULER', consents: [], consentRequired: config.consentRequired });
      if (plan.action !== 'CHARGE' || plan.cycle !== row.cycle) continue;
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
        continue;
      }
      planned.push({ row, plan, billingKey, orderId: chargeOrderId(row.id, plan.cycle, 1) });
    }
    const ready = new Map<string, Ready>();
    if (planned.length === 0) return ready;
    const column = <T>(pick: (entry: (typeof planned)[number]) => T) => planned.map(pick);
    // Through the pg pool, named (db/prisma.ts), where Prisma's runtime was the cost (BENCHMARKS.md §4): one text for
    // every batch size (the rows are arrays), so one named statement. Each row is fenced on its own: a row whose guard
    // fails writes nothing and the others are written.
    const written = await sqlQuery<{ subscriptionId: string; paymentId: string; attemptId: string }>(
      db,
      `
      WITH i AS (
        SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::text[], $8::int[], $9::uuid[], $10::text[])
          AS i("id", "cycle", "method", "amount", "orderId", "dueAt", "version", "subscriptionAmount", "keyId", "lastTransactionId")),
      ok AS (
        UPDATE "subscriptions" s SET "leaseExpiresAt" = $13::timestamptz
          FROM i
         WHERE s."id" = i."id" AND s."leaseOwner" = $11 AND s."status"::text = ANY ($12::text[]) AND s."needsAttention" = false AND s."cycle" = i."cycle"
           AND s."xmin"::text = i."version" AND s."amount" = i."subscriptionAmount" AND s."pendingAmount" IS NULL AND s."cancelAtPeriodEnd" = false
           AND s."billingKeyId" = i."keyId" AND s."lastTransactionId" IS NOT DISTINCT FROM i."lastTransactionId"
           AND EXISTS (SELECT 1 FROM "billing_keys" k WHERE k."id" = i."keyId" AND k."status" = 'ACTIVE')
           AND NOT EXISTS (SELECT 1 FROM "payments" p WHERE p."subscriptionId" = i."id" AND p."cycle" = i."cycle")
        RETURNING i."id", i."cycle", i."method", i."amount", i."orderId", i."dueAt"),
      p AS (
        INSERT INTO "payments" ("subscriptionId", "cycle", "kind", "method", "amount", "orderId", "attemptCount", "dueAt", "createdAt", "updatedAt")
        SELECT ok."id", ok."cycle", 'RECURRING', ok."method"::"PaymentMethod", ok."amount", ok."orderId", 1, ok."dueAt", $14::timestamptz, $14::timestamptz FROM ok
        RETURNING "id", "subscriptionId", "orderId", "amount"),
      a AS (
        INSERT INTO "payment_attempts" ("paymentId", "attemptNumber", "operation", "orderId", "amount", "leaseOwner", "leaseExpiresAt", "createdAt", "updatedAt")
        SELECT p."id", 1, 'BILLING_CONFIRM', p."orderId", p."amount", $11::text, $13::timestamptz, $14::timestamptz, $14::timestamptz FROM p
        RETURNING "id", "paymentId")
      SELECT p."subscriptionId", a."paymentId", a."id" AS "attemptId" FROM a JOIN p ON p."id" = a."paymentId"`,
      [
        column((e) => e.row.id),
        column((e) => e.plan.cycle),
        column((e) => e.row.method),
        column((e) => e.plan.amount),
        column((e) => e.orderId),
        column((e) => e.plan.dueAt),
        column((e) => e.row.version),
        column((e) => e.row.amount),
        column((e) => e.row.keyId),
        column((e) => e.row.lastTransactionId),
        owner,
        [...LIVE],
        leaseExpiresAt,
        // The rows' createdAt and updatedAt: the service's clock, as db/clock-stamps.ts gives the Prisma writers.
        now,
      ],
    );
    const byId = new Map(planned.map((entry) => [entry.row.id, entry]));
    for (const { subscriptionId, paymentId, attemptId } of written) {
      const { row, plan, billingKey, orderId } = byId.get(subscriptionId)!;
      ready.set(subscriptionId, {
        kind: 'READY',
        leaseOwner: owner,
        subscriptionId,
        method: row.method,
        plan,
        paymentId,
        attemptId,
        orderId,
        billingKey,
        userId: row.userId,
        orderName: row.orderName,
        itemCode: row.itemCode,
        leaseExpiresAt,
        newCycle: { method: row.method, anchorAt: row.anchorAt, intervalUnit: row.intervalUnit, intervalCount: row.intervalCount },
      });
    }
    return ready;
  }

  /** Everything before the call, in one short transaction fenced on our lease. */
  async function prepare(id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared): Promise<Prepared> {
    const now = clock.now();
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
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
        await transitionSubscription(tx, id, 'cancel', {
          canceledAt: now,
          nextChargeAt: null,
          cancelReason: sub.cancelReason ?? 'CANCELED_AT_PERIOD_END',
          // It churns at the period's end (docs/operating.md "Revenue reports"), whenever the pass that ends it runs.
          changedAt: periodEndCancelAt(sub, now),
        });
        await release(tx, id, owner);
        await revokeBillingKey(tx, sub.billingKeyId, now);
        log.info({ subscriptionId: id }, 'subscription cancelled at the end of its period');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CANCELED_AT_PERIOD_END' } };
      }
      if (plan.action === 'CANCEL_CONSENT_MISSING') {
        await transitionSubscription(tx, id, 'cancel', { canceledAt: now, nextChargeAt: null, cancelReason: 'CONSENT_MISSING', changedAt: now });
        await release(tx, id, owner);
        await revokeBillingKey(tx, sub.billingKeyId, now);
        log.info({ subscriptionId: id }, 'trial ended without the customer’s consent to convert (the consent rule): cancelled, not charged');
        return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CONSENT_MISSING' } };
      }
      if (plan.action === 'REFUSE') {
        if (plan.pastDue) await transitionSubscription(tx, id, 'decline', { nextChargeAt: null, changedAt: now });
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
        // Read under the payment's row lock, the one every numbering of its attempts takes (prepareAttempt below).
        const { latest } = await lockAttempts(tx, open.id);
        if (latest?.status === 'IN_FLIGHT' && latest.leaseExpiresAt !== null && latest.leaseExpiresAt >= now) {
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
        // A retry makes a FAILED payment PENDING again while it is in flight (docs/architecture.md "Recurring charging").
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
        leaseExpiresAt,
      };
    });
  }

  return { prepare, prepareNewCycles };
}
