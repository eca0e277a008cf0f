// An event row → the public event (docs/api.md "Events and webhooks"). The trigger stores the changed row as its transaction left it (its
// `snapshot`, Prisma field names, secrets removed; a payment's with its refunds as of the change) and the old values
// of the public columns that changed (`previous`); the object is rendered here by the same serializers the API uses,
// so an event's object is exactly what GET would have answered at that moment. previousAttributes are the public
// fields whose value differs between the shape of the old row and the new one.
import type { Config } from '../../config.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { serializePayment } from '../payments/payments.service.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import { BILLING_KEY_SUMMARY_JSON, consentsJson, reviveConsents, type BillingKeySummary } from '../subscriptions/subscriptions.read.ts';
import { registrationEventObject } from '../registrations/registrations.read.ts';
import { orderEventObject } from '../orders/orders.service.ts';

type ObjectType = 'subscription' | 'payment' | 'registration' | 'order' | 'customer';

/** Columns of the snapshot that are instants (the jsonb holds them as strings). */
export const INSTANT_FIELDS: Record<ObjectType, readonly string[]> = {
  subscription: [
    'anchorAt',
    'currentPeriodStart',
    'currentPeriodEnd',
    'nextChargeAt',
    'canceledAt',
    'pausedAt',
    'lastTransactionAt',
    'leaseExpiresAt',
    'trialEnd',
    'trialWillEndAt',
    'pendingAmountRequestedAt',
    'usageStartedAt',
    'changedAt',
    'createdAt',
    'updatedAt',
  ],
  payment: ['approvedAt', 'dueAt', 'nextRetryAt', 'canceledAt', 'retriesFrom', 'createdAt', 'updatedAt'],
  registration: ['expiresAt', 'completedAt', 'leaseExpiresAt', 'createdAt', 'updatedAt'],
  order: ['expiresAt', 'completedAt', 'leaseExpiresAt', 'createdAt', 'updatedAt'],
  customer: ['erasedAt'],
};

export interface EventRow {
  id: string;
  type: string;
  /** int8: a bigint through Prisma, a string through the pg pool. */
  sequence: bigint | string | null;
  createdAt: Date;
  objectType: ObjectType;
  objectId: string;
  snapshot: Record<string, unknown>;
  previous: Record<string, unknown> | null;
  /** Subscription events: the billing keys the snapshot and the old values name. */
  billingKeys: BillingKeySummary[] | null;
  /** Subscription events: the consents recorded by the time of the event (consents are immutable). */
  consents: Array<Record<string, unknown>> | null;
  /** Registration events: the subscription it created, if any. */
  subscriptionId: string | null;
  /** Order events: its payment, if any. */
  paymentId: string | null;
}

/**
 * A key's status as of the event: a key is revoked once (revokedAt, the service's clock, like the event's createdAt: the
 * row's updatedAt), so one revoked after the event was still ACTIVE then. Its display data never changes. A revocation
 * in the event's own transaction is dated by the use case's clock before its writes, so at or before the event (a
 * revocation in a later transaction at the very same instant, which only a frozen simulated clock makes, counts too).
 */
const KEY_STATUS_AS_OF_EVENT = `jsonb_build_object('status', CASE WHEN k."revokedAt" > e."createdAt" THEN 'ACTIVE' ELSE k."status"::text END)`;

/** The columns every event read selects (feed, one event, dispatcher), with what rendering needs beside the row. */
export const EVENT_COLUMNS_SQL = `
  e."id", e."type", e."sequence", e."createdAt", e."objectType", e."objectId", e."snapshot", e."previous",
  CASE WHEN e."objectType" = 'subscription' THEN (
    SELECT jsonb_agg(${BILLING_KEY_SUMMARY_JSON} || ${KEY_STATUS_AS_OF_EVENT}) FROM "billing_keys" k
     WHERE k."id" IN ((e."snapshot" ->> 'billingKeyId')::uuid, (e."previous" ->> 'billingKeyId')::uuid)) END AS "billingKeys",
  CASE WHEN e."objectType" = 'subscription' THEN ${consentsJson('c."subscriptionId" = e."objectId" AND c."createdAt" <= e."createdAt"')} END AS "consents",
  CASE WHEN e."objectType" = 'registration' THEN (SELECT s."id" FROM "subscriptions" s WHERE s."registrationId" = e."objectId") END AS "subscriptionId",
  CASE WHEN e."objectType" = 'order' THEN (SELECT p."id" FROM "payments" p WHERE p."oneTimeOrderId" = e."objectId") END AS "paymentId"`;
export const EVENT_COLUMNS = Prisma.raw(EVENT_COLUMNS_SQL);

export interface PublicEvent {
  id: string;
  type: string;
  sequence: number;
  createdAt: string;
  data: { object: Record<string, unknown>; previousAttributes?: Record<string, unknown> };
}

function revive(type: ObjectType, raw: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = { ...raw };
  // An event written before payments and registrations named their gateway (migration 20261201100000_gateways)
  // is of a Danal row: every row of that time went through Danal, and the column's default says so.
  if ((type === 'payment' || type === 'registration') && row.gateway === undefined) row.gateway = 'DANAL';
  for (const field of INSTANT_FIELDS[type]) {
    const value = row[field];
    if (typeof value === 'string') row[field] = new Date(value);
  }
  return row;
}

function objectOf(event: EventRow, raw: Record<string, unknown>, config: Config): Record<string, unknown> {
  const row = revive(event.objectType, raw);
  switch (event.objectType) {
    case 'subscription': {
      const key = event.billingKeys?.find((k) => k.id === row.billingKeyId);
      // A key we no longer hold is shown by its id alone (never invented).
      const billingKey = key ?? {
        id: String(row.billingKeyId),
        method: row.method,
        status: 'REVOKED',
        cardName: null,
        cardNumber: null,
        carrier: null,
        phoneNumber: null,
      };
      return serializeSubscription({ ...row, billingKey, consents: reviveConsents(event.consents) } as never);
    }
    case 'payment':
      return serializePayment(reviveRefunds(row) as never);
    case 'registration':
      return registrationEventObject({ ...row, state: '', subscription: event.subscriptionId ? { id: event.subscriptionId } : null } as never, config);
    case 'order':
      return orderEventObject({ ...row, state: '', payment: event.paymentId ? { id: event.paymentId } : null } as never, config);
    case 'customer':
      // An erasure (the erasures row's public columns: the trigger hides the rest).
      return { id: row.id, pseudonym: row.pseudonym, erasedAt: (row.erasedAt as Date).toISOString(), retainUntil: row.retainUntil };
  }
}

/**
 * A payment snapshot's refunds as the trigger took them in the transaction of the change (payment_refunds_snapshot,
 * prisma/functions/events.sql): its CANCEL attempts and external refunds, instants as strings. An event written
 * before the trigger took them (migration 20261128120000_payment_event_refunds) has neither, and shows no `refunds`.
 */
function reviveRefunds(row: Record<string, unknown>): Record<string, unknown> {
  const attempts = row.refundAttempts as Array<Record<string, unknown>> | undefined;
  const externals = row.externalRefunds as Array<Record<string, unknown>> | undefined;
  if (!attempts || !externals) return { ...row, refundAttempts: undefined, externalRefunds: undefined };
  const at = (value: unknown) => (typeof value === 'string' ? new Date(value) : value);
  return {
    ...row,
    refundAttempts: attempts.map((a) => ({ ...a, completedAt: at(a.completedAt), createdAt: at(a.createdAt) })),
    externalRefunds: externals.map((r) => ({ ...r, recordedAt: at(r.recordedAt) })),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function renderEvent(event: EventRow, config: Config): PublicEvent {
  const object = objectOf(event, event.snapshot, config);
  const data: PublicEvent['data'] = { object };
  if (event.previous) {
    const before = objectOf(event, { ...event.snapshot, ...event.previous }, config);
    const previousAttributes: Record<string, unknown> = {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(object)])) {
      if (!same(before[key], object[key])) previousAttributes[key] = before[key] ?? null;
    }
    if (Object.keys(previousAttributes).length > 0) data.previousAttributes = previousAttributes;
  }
  return { id: event.id, type: event.type, sequence: Number(event.sequence), createdAt: event.createdAt.toISOString(), data };
}
