// The public shape of a subscription and of a consent (docs/api.md "Shapes", "Subscription lifecycle"): the billing
// key itself never appears, phone numbers are masked. The merchant API, the admin routes, the events and the audit
// trail all show this one shape.
import type { Prisma } from '../../generated/prisma/client.ts';
import { maskPhoneNumber } from '../../lib/redact.ts';
import { BILLING_KEY_SUMMARY_FIELDS, PUBLIC_COLUMNS, type SubscriptionView } from './subscriptions.read.ts';

/** What the public shape needs beside the row: the billing key's description and the consents, oldest first. */
export const WITH_KEY = { billingKey: true, consents: { orderBy: [{ obtainedAt: 'asc' }, { id: 'asc' }] } } satisfies Prisma.SubscriptionInclude;

/**
 * The public shape (docs/api.md "Shapes"): the billing key itself never appears, phone numbers are masked. Takes a row read
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
    usageStartedAt: row.usageStartedAt?.toISOString() ?? null,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    canceledAt: row.canceledAt?.toISOString() ?? undefined,
    cancelReason: row.cancelReason ?? undefined,
    trialEnd: row.trialEnd?.toISOString(),
    pendingAmount: row.pendingAmount ?? undefined,
    pendingAmountReason: row.pendingAmount !== null ? ('CONSENT_REQUIRED' as const) : undefined,
    consents: row.consents.map(serializeConsent),
    needsAttention: row.needsAttention,
    attentionReason: row.attentionReason ?? undefined,
    refundDue: row.refundDue ?? undefined,
    billingKey: {
      id: row.billingKey.id,
      method: row.billingKey.method,
      gateway: row.billingKey.gateway,
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

/** The public columns serializeSubscription shows under another name, or with a field it derives from them. */
const SHOWN_AS: Partial<Record<(typeof PUBLIC_COLUMNS)[number], readonly string[]>> = {
  intervalUnit: ['interval.unit'],
  intervalCount: ['interval.count'],
  pendingAmount: ['pendingAmount', 'pendingAmountReason'],
};

/**
 * The public shape's fields in its order, as paths (nested ones dotted), consents left out (a list of their own):
 * each public column (PUBLIC_COLUMNS) as serializeSubscription names it, and the billing key's summary before the
 * times. The console's CSV export of subscriptions has these as its columns.
 */
export const PUBLIC_FIELD_PATHS: readonly string[] = PUBLIC_COLUMNS.flatMap((column) => [
  ...(column === 'createdAt' ? BILLING_KEY_SUMMARY_FIELDS.map((field) => `billingKey.${field}`) : []),
  ...(SHOWN_AS[column] ?? [column]),
]);

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
