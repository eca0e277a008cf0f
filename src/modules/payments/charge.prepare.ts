// Everything before a charge's call (docs/architecture.md, invariants 1, 2, 5, 13): the plan checked again under the subscription's lease, then
// the payment and its IN_FLIGHT attempt with a deterministic orderId committed, or a refusal answered and nothing
// sent. Two renderings: new cycles claimed by the scheduler in one statement per batch (prepareNewCycles,
// charge.prepare-batch.ts), everything else in one short transaction with every rule (prepare, here).
import type { Prisma } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { readBillingKey, revokeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { firstAttempt, lockAttempts, prepareAttempt } from '../ledger/attempts.ts';
import { periodEndCancelAt, planCharge, type ChargePlan } from '../ledger/charge.rules.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { transitionSubscription } from '../ledger/subscription.state.ts';
import { loadChargeInputs } from './charge.claim.ts';
import { chargeOrderId, type OnPrepared, type Prepared, type Ready, type Trigger } from './charge.types.ts';

type Tx = Prisma.TransactionClient;
type PrepareDeps = Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'keyring' | 'log'>;

/** Everything before the call, in one short transaction fenced on our lease. */
export async function prepare(deps: PrepareDeps, id: string, owner: string, trigger: Trigger, onPrepared?: OnPrepared): Promise<Prepared> {
  const { db, clock, config, keyring, log } = deps;
  const now = clock.now();
  const leaseExpiresAt = new Date(now.getTime() + config.scheduler.leaseMs);
  return db.$transaction(async (tx): Promise<Prepared> => {
    // Renewing the lease locks the row for this transaction, proves it is still ours, and reads it.
    const [renewed] = await tx.subscription.updateManyAndReturn({
      where: { id, leaseOwner: owner },
      data: { leaseExpiresAt },
      include: { billingKey: true },
    });
    if (!renewed) return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST' } };
    const inputs = (await loadChargeInputs(tx, id, { now, timezone: config.timezone, trigger, consentRequired: config.consentRequired }, renewed))!;
    const { sub, open } = inputs;
    const plan = planCharge(inputs.planSub, inputs.openInput, inputs.ctx);
    if (plan.action !== 'CHARGE') return settleRefusal(deps, tx, { sub, open, plan, owner, now });

    let billingKey: string;
    try {
      billingKey = readBillingKey(keyring, sub.billingKey);
    } catch {
      // The encryption key that sealed it is no longer configured: nothing can be sent until it is.
      await releaseSubscription(tx, id, owner, 'BILLING_KEY_UNREADABLE');
      log.error({ subscriptionId: id, encryptionKeyId: sub.billingKey.encryptionKeyId }, 'billing key cannot be decrypted with the configured keys');
      return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'BILLING_KEY_UNREADABLE' } };
    }

    if (plan.cycle !== sub.cycle) {
      await tx.subscription.update({ where: { id }, data: { cycle: plan.cycle } });
      log.info({ subscriptionId: id, from: sub.cycle, to: plan.cycle }, 'missed periods after downtime are not back-charged');
    }
    const attempt = open
      ? await writeRetryAttempt(tx, { id, paymentId: open.id, plan, owner, leaseExpiresAt, now, gateway: sub.billingKey.gateway })
      : await writeNewPayment(tx, { id, method: sub.method, gateway: sub.billingKey.gateway, plan, owner, trigger, leaseExpiresAt });
    if ('kind' in attempt) return attempt;
    await onPrepared?.(tx, { paymentId: attempt.paymentId, orderId: attempt.orderId, cycle: plan.cycle, amount: plan.amount });
    return {
      kind: 'READY',
      leaseOwner: owner,
      subscriptionId: id,
      method: sub.method,
      plan,
      ...attempt,
      billingKey,
      gateway: sub.billingKey.gateway,
      customerKey: sub.billingKey.customerKey,
      userId: sub.userId,
      orderName: sub.orderName,
      itemCode: sub.itemCode,
      leaseExpiresAt,
    };
  });
}

type Loaded = NonNullable<Awaited<ReturnType<typeof loadChargeInputs>>>;

/** What a plan other than CHARGE writes, in the prepare's transaction: the cancel or the refusal, and the lease given back. */
async function settleRefusal(
  deps: Pick<ServiceDeps, 'log'>,
  tx: Tx,
  input: { sub: Loaded['sub']; open: Loaded['open']; plan: Exclude<ChargePlan, { action: 'CHARGE' }>; owner: string; now: Date },
): Promise<Done> {
  const { sub, open, plan, owner, now } = input;
  const { log } = deps;
  const id = sub.id;
  if (plan.action === 'CANCEL_AT_PERIOD_END') {
    await transitionSubscription(tx, id, 'cancel', {
      canceledAt: now,
      nextChargeAt: null,
      cancelReason: sub.cancelReason ?? 'CANCELED_AT_PERIOD_END',
      // It churns at the period's end (docs/reconciliation.md "Revenue reports"), whenever the pass that ends it runs.
      changedAt: periodEndCancelAt(sub, now),
    });
    await releaseSubscription(tx, id, owner);
    await revokeBillingKey(tx, sub.billingKeyId, now);
    log.info({ subscriptionId: id }, 'subscription cancelled at the end of its period');
    return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CANCELED_AT_PERIOD_END' } };
  }
  if (plan.action === 'CANCEL_CONSENT_MISSING') {
    await transitionSubscription(tx, id, 'cancel', { canceledAt: now, nextChargeAt: null, cancelReason: 'CONSENT_MISSING', changedAt: now });
    await releaseSubscription(tx, id, owner);
    await revokeBillingKey(tx, sub.billingKeyId, now);
    log.info({ subscriptionId: id }, 'trial ended without the customer’s consent to convert (the consent rule): cancelled, not charged');
    return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CONSENT_MISSING' } };
  }
  if (plan.pastDue) await transitionSubscription(tx, id, 'decline', { nextChargeAt: null, changedAt: now });
  await releaseSubscription(tx, id, owner, plan.attention ? plan.code : undefined);
  if (plan.attention) log.warn({ subscriptionId: id, code: plan.code }, `subscription needs attention: ${plan.message}`);
  return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: plan.code, message: plan.message, paymentId: open?.id } };
}

/** The payment and attempt a charge is about to call with. */
type WrittenAttempt = Pick<Ready, 'paymentId' | 'attemptId' | 'orderId'>;
type Done = Exclude<Prepared, Ready>;

/** A new cycle's payment, PENDING with its first attempt: nothing to look up (the common case). */
async function writeNewPayment(
  tx: Tx,
  input: { id: string; method: Ready['method']; gateway: Ready['gateway']; plan: Ready['plan']; owner: string; trigger: Trigger; leaseExpiresAt: Date },
): Promise<WrittenAttempt> {
  const { id, plan } = input;
  const orderId = chargeOrderId(id, plan.cycle, 1);
  const payment = await tx.payment.create({
    data: {
      subscriptionId: id,
      cycle: plan.cycle,
      kind: input.trigger === 'ADMIN' ? 'MANUAL' : 'RECURRING',
      method: input.method,
      gateway: input.gateway,
      amount: plan.amount,
      orderId,
      attemptCount: 1,
      dueAt: plan.dueAt,
    },
    select: { id: true },
  });
  const { attemptId } = await firstAttempt(tx, {
    paymentId: payment.id,
    operation: 'BILLING_CONFIRM',
    orderId,
    amount: plan.amount,
    leaseOwner: input.owner,
    leaseExpiresAt: input.leaseExpiresAt,
  });
  return { paymentId: payment.id, attemptId: attemptId!, orderId };
}

/** The next attempt of the cycle's payment already open (a retry, or a NOT_SENT attempt sent again as itself). */
async function writeRetryAttempt(
  tx: Tx,
  input: { id: string; paymentId: string; plan: Ready['plan']; owner: string; leaseExpiresAt: Date; now: Date; gateway: Ready['gateway'] },
): Promise<WrittenAttempt | Done> {
  const { id, paymentId, plan, owner, now } = input;
  // A call of this payment still in flight under a live lease (its answer not yet written): never a second one.
  // Read under the payment's row lock, the one every numbering of its attempts takes (prepareAttempt below).
  const { latest } = await lockAttempts(tx, paymentId);
  if (latest?.status === 'IN_FLIGHT' && latest.leaseExpiresAt !== null && latest.leaseExpiresAt >= now) {
    await releaseSubscription(tx, id, owner);
    return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'CHARGE_IN_PROGRESS', paymentId } };
  }
  const prepared = await prepareAttempt(tx, {
    paymentId,
    operation: 'BILLING_CONFIRM',
    orderId: (n) => chargeOrderId(id, plan.cycle, n),
    amount: plan.amount,
    leaseOwner: owner,
    leaseExpiresAt: input.leaseExpiresAt,
    now,
    allowAfterUnknown: false,
  });
  if (!prepared.attemptId) {
    await releaseSubscription(tx, id, owner, 'PAYMENT_OUTCOME_UNKNOWN');
    return { kind: 'DONE', report: { subscriptionId: id, outcome: 'SKIPPED', code: 'PAYMENT_OUTCOME_UNKNOWN', paymentId } };
  }
  // A retry makes a FAILED payment PENDING again while it is in flight (docs/architecture.md "Recurring charging"). It
  // goes through the subscription's key as it is now: after a new payment method of another gateway, the payment is
  // that gateway's from this attempt on (its refunds go there too).
  await transitionPayment(tx, paymentId, 'send', { nextRetryAt: null, gateway: input.gateway });
  return { paymentId, attemptId: prepared.attemptId, orderId: prepared.orderId! };
}
