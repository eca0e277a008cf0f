// Subscriptions: created from a completed registration, read and cancelled through the merchant API.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../../db/prisma.ts';
import type { Clock } from '../../lib/clock.ts';
import { addInterval, type IntervalUnit } from '../../lib/calendar.ts';
import { maskPhoneNumber } from '../../lib/redact.ts';
import { pageSubscriptions, readSubscription, type SubscriptionView } from './subscriptions.read.ts';
import { createSubscription, transitionSubscription, type SubscriptionStatus } from '../ledger/subscription.state.ts';
import { revokeBillingKey } from '../billing-keys/billing-keys.service.ts';

type Tx = Prisma.TransactionClient;

/** What the public shape needs beside the row: the billing key's description and the consents, oldest first. */
export const WITH_KEY = { billingKey: true, consents: { orderBy: [{ obtainedAt: 'asc' }, { id: 'asc' }] } } satisfies Prisma.SubscriptionInclude;

/**
 * The public shape (DESIGN.md §5): the billing key itself never appears, phone numbers are masked. Takes a row read
 * by Prisma with WITH_KEY or by subscriptions.read.ts.
 */
export function serializeSubscription(row: SubscriptionView) {
  return {
    id: row.id,
    userId: row.userId,
    method: row.method,
    status: row.status,
    amount: row.amount,
    orderName: row.orderName,
    interval: { unit: row.intervalUnit, count: row.intervalCount },
    itemCode: row.itemCode ?? undefined,
    currentPeriodStart: row.currentPeriodStart.toISOString(),
    currentPeriodEnd: row.currentPeriodEnd.toISOString(),
    nextChargeAt: row.nextChargeAt?.toISOString() ?? null,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    canceledAt: row.canceledAt?.toISOString() ?? undefined,
    cancelReason: row.cancelReason ?? undefined,
    trialEnd: row.trialEnd?.toISOString(),
    pendingAmount: row.pendingAmount ?? undefined,
    pendingAmountReason: row.pendingAmount !== null ? ('CONSENT_REQUIRED' as const) : undefined,
    consents: row.consents.map(serializeConsent),
    needsAttention: row.needsAttention,
    attentionReason: row.attentionReason ?? undefined,
    billingKey: {
      id: row.billingKey.id,
      method: row.billingKey.method,
      status: row.billingKey.status,
      cardName: row.billingKey.cardName ?? undefined,
      cardNumber: row.billingKey.cardNumber ?? undefined,
      carrier: row.billingKey.carrier ?? undefined,
      phoneNumber: maskPhoneNumber(row.billingKey.phoneNumber),
    },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function serializeConsent(row: {
  id: string;
  kind: 'TRIAL_CONVERSION' | 'PRICE_INCREASE';
  obtainedAt: Date;
  channel: string | null;
  reference: string | null;
  createdAt: Date;
}) {
  return {
    id: row.id,
    kind: row.kind,
    obtainedAt: row.obtainedAt.toISOString(),
    channel: row.channel ?? undefined,
    reference: row.reference ?? undefined,
    createdAt: row.createdAt.toISOString(),
  };
}

export interface NewSubscriptionInput {
  registration: {
    id: string;
    userId: string;
    method: 'CARD' | 'MOBILE';
    amount: number;
    orderName: string;
    intervalUnit: IntervalUnit;
    intervalCount: number;
    itemCode: string | null;
    issueKeyOnly: boolean;
    trialDays: number | null;
  };
  billingKeyId: string;
  /** When the registration's payment (or key issuance) was approved: the anchor of every cycle. */
  anchorAt: Date;
  /** The registration's payment, when it charged one: it starts the MOBILE chain. */
  initialPayment?: { transactionId: string; amount: number; approvedAt: Date };
  now: Date;
  timezone: string;
}

/**
 * Cycle n is due at anchor + n intervals. A registration that charged its amount has paid cycle 0, so cycle 1 is
 * next, one interval after the approval; a CARD registration with issueKeyOnly paid nothing and is due at once
 * (DESIGN.md §5).
 */
export async function createSubscriptionFromRegistration(tx: Tx, input: NewSubscriptionInput) {
  const { registration } = input;
  if (registration.trialDays !== null) return createTrial(tx, input, registration.trialDays);
  const { anchorAt } = input;
  const unit = registration.intervalUnit;
  const periodEnd = addInterval(anchorAt, unit, registration.intervalCount, input.timezone);
  const paid = input.initialPayment !== undefined;
  return createSubscription(tx, 'ACTIVE', {
    ...termsOf(input),
    anchorAt,
    cycle: paid ? 1 : 0,
    currentPeriodStart: anchorAt,
    currentPeriodEnd: periodEnd,
    nextChargeAt: paid ? periodEnd : input.now,
    lastTransactionId: input.initialPayment?.transactionId,
    lastAmount: input.initialPayment?.amount,
    lastTransactionAt: input.initialPayment?.approvedAt,
    changedAt: input.now,
  });
}

/** What a subscription takes from the registration that creates it. */
function termsOf(input: NewSubscriptionInput) {
  const { registration } = input;
  return {
    registrationId: registration.id,
    billingKeyId: input.billingKeyId,
    userId: registration.userId,
    method: registration.method,
    amount: registration.amount,
    orderName: registration.orderName,
    intervalUnit: registration.intervalUnit,
    intervalCount: registration.intervalCount,
    itemCode: registration.itemCode,
  };
}

/**
 * A trial (DESIGN.md §5): TRIALING until trialEnd = approval + trialDays calendar days in BILLING_TIMEZONE, which is
 * its first charge and the anchor of its cycles. A trial ending within 30 days is noticed at once.
 */
async function createTrial(tx: Tx, input: NewSubscriptionInput, trialDays: number) {
  const { anchorAt: approvedAt } = input;
  const trialEnd = addInterval(approvedAt, 'day', trialDays, input.timezone);
  const created = await createSubscription(tx, 'TRIALING', {
    ...termsOf(input),
    anchorAt: trialEnd,
    cycle: 0,
    trialEnd,
    currentPeriodStart: approvedAt,
    currentPeriodEnd: trialEnd,
    nextChargeAt: trialEnd,
    changedAt: input.now,
  });
  await noteTrialsEnding(tx, input.now, created.id);
  return created;
}

/** When subscription.trial_will_end is due: the trial ends within this, and no TRIAL_CONVERSION consent is recorded. */
export const TRIAL_NOTICE_MS = 30 * 24 * 3600_000;

/**
 * Marks trials that end within 30 days and have no TRIAL_CONVERSION consent yet, once each; the events trigger turns
 * the mark into `subscription.trial_will_end` so that the merchant can ask for the consent in time. Run at every
 * charging pass and when a trial starts.
 */
export async function noteTrialsEnding(tx: Tx | Db, now: Date, subscriptionId?: string): Promise<number> {
  const horizon = new Date(now.getTime() + TRIAL_NOTICE_MS);
  const only = subscriptionId ? Prisma.sql`AND s."id" = ${subscriptionId}::uuid` : Prisma.empty;
  return tx.$executeRaw`
    UPDATE "subscriptions" s SET "trialWillEndAt" = ${now}
     WHERE s."status" = 'TRIALING' AND s."trialWillEndAt" IS NULL AND s."trialEnd" <= ${horizon} ${only}
       AND NOT EXISTS (SELECT 1 FROM "consents" c WHERE c."subscriptionId" = s."id" AND c."kind" = 'TRIAL_CONVERSION')`;
}

/**
 * Cancels now (no further charge; the billing key is revoked on our side, since the gateway documents no
 * termination call) or at the end of the current period (charging stops at the boundary). Shared by the merchant
 * API and the admin route, which adds its audit event in the same transaction.
 */
export async function applyCancel(tx: Tx, id: string, options: { atPeriodEnd: boolean; reason: string; now: Date }): Promise<void> {
  if (options.atPeriodEnd) {
    const updated = await tx.subscription.updateMany({
      where: { id, status: { in: ['ACTIVE', 'TRIALING', 'PAST_DUE', 'PAUSED'] } },
      data: { cancelAtPeriodEnd: true, cancelReason: options.reason },
    });
    if (updated.count === 0) await transitionSubscription(tx, id, 'cancel', { changedAt: options.now });
    return;
  }
  await transitionSubscription(tx, id, 'cancel', { canceledAt: options.now, nextChargeAt: null, cancelReason: options.reason, changedAt: options.now });
  const row = await tx.subscription.findUniqueOrThrow({ where: { id } });
  await revokeBillingKey(tx, row.billingKeyId, options.now);
}

export function createSubscriptionsService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  const getSubscription = (id: string) => readSubscription(db, id);

  async function listSubscriptions(filter: { userId?: string; status?: SubscriptionStatus; needsAttention?: boolean; limit: number; cursor?: string }) {
    return pageSubscriptions(db, filter);
  }

  /** Cancels now or at period end (applyCancel), for the merchant API. */
  async function cancelSubscription(id: string, options: { atPeriodEnd: boolean; reason?: string }) {
    await getSubscription(id);
    await db.$transaction((tx) =>
      applyCancel(tx, id, { atPeriodEnd: options.atPeriodEnd, reason: options.reason ?? 'CANCELED_BY_MERCHANT', now: clock.now() }),
    );
    return getSubscription(id);
  }

  return { getSubscription, listSubscriptions, cancelSubscription };
}
