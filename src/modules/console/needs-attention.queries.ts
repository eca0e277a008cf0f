// What Needs attention lists (docs/console.md "Operator console"): everything waiting for an operator, each kind read
// with its own named predicate or existing list query (needsAttentionWhere for payments, pageSubscriptions for
// subscriptions, listItems for reconciliation), all at once: one round of parallel indexed reads, each capped at
// PER_KIND rows (the lists behind the "All …" links page through the rest). Rows carry data and codes, never words:
// views/needs-attention.eta says them in the operator's language.
import type { Db } from '../../db/prisma.ts';
import { needsAttentionWhere } from '../ledger/payment.queries.ts';
import { REFUND_OUTCOME_UNKNOWN } from '../ledger/payment.state.ts';
import { listItems } from '../reconciliation/reconciliation.queries.ts';
import { pageSubscriptions } from '../subscriptions/subscriptions.read.ts';
import type { Code } from './console-page.ts';

export const PER_KIND = 50;
const PAGE = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/**
 * Why a row waits: one of the console's sentences (catalog `console.frame.attention.reason`), or a status and the
 * service's codes ("MISMATCHED: AMOUNT, DATE").
 */
export type AttentionReason =
  | { say: 'refundOutcomeUnknown' | 'outcomeUnknown' | 'needsAttention' | 'keyIssuanceUnknown' | 'paymentOutcomeUnknown' | 'disabled' }
  | { status?: Code; codes: Code[] };

/** One row of the list: what waits (its label, and its amount when it has one), since when, why, and the page that deals with it. */
export interface AttentionRow {
  /** Also the row's data-kind; the page says it in words (catalog `console.frame.kind`). */
  kind: 'Payment' | 'Refund' | 'Subscription' | 'Registration' | 'Order' | 'Settlement line' | 'Webhook endpoint';
  id: string;
  href: string;
  /** An orderId, a name and a userId, a transactionId (undefined when the line has none), a URL. */
  label: string | undefined;
  amount?: number;
  reason: AttentionReason;
  at: Date;
}

export interface AttentionList {
  rows: AttentionRow[];
  /** Kinds with more rows than shown (catalog `console.frame.kinds`), with the list that shows them all (when there is one). */
  more: Array<{ kind: 'payments' | 'subscriptions' | 'registrations' | 'orders' | 'settlementLines' | 'webhookEndpoints'; href?: string }>;
}

/** One kind's part of the list: its first PER_KIND rows, and the list of the rest when there are more. */
interface KindRows {
  rows: AttentionRow[];
  more?: AttentionList['more'][number];
}

/** Every kind read at once (one round of parallel reads), listed in this order. */
export async function readNeedsAttention(db: Db): Promise<AttentionList> {
  const kinds = await Promise.all([paymentRows(db), subscriptionRows(db), registrationRows(db), orderRows(db), settlementLineRows(db), endpointRows(db)]);
  return { rows: kinds.flatMap((kind) => kind.rows), more: kinds.flatMap((kind) => (kind.more ? [kind.more] : [])) };
}

/** Payments by needsAttentionWhere; a refund of unknown outcome is its own kind. */
async function paymentRows(db: Db): Promise<KindRows> {
  const payments = await db.payment.findMany({
    where: needsAttentionWhere,
    orderBy: PAGE,
    take: PER_KIND + 1,
    select: { id: true, status: true, attentionReason: true, orderId: true, amount: true, createdAt: true },
  });
  const rows = payments.slice(0, PER_KIND).map((p): AttentionRow => {
    const refund = p.attentionReason === REFUND_OUTCOME_UNKNOWN;
    return {
      kind: refund ? 'Refund' : 'Payment',
      id: p.id,
      href: `/console/payments/${p.id}`,
      label: p.orderId,
      amount: p.amount,
      reason: refund
        ? { say: 'refundOutcomeUnknown' }
        : p.status === 'UNKNOWN'
          ? { say: 'outcomeUnknown' }
          : { status: { group: 'paymentStatus', code: p.status }, codes: p.attentionReason ? [{ group: 'attentionReason', code: p.attentionReason }] : [] },
      at: p.createdAt,
    };
  });
  return { rows, more: payments.length > PER_KIND ? { kind: 'payments', href: '/console/payments?needsAttention=true' } : undefined };
}

/** Subscriptions by the subscriptions list's own needsAttention filter. */
async function subscriptionRows(db: Db): Promise<KindRows> {
  const subscriptions = await pageSubscriptions(db, { needsAttention: true, limit: PER_KIND });
  const rows = subscriptions.items.map(
    (s): AttentionRow => ({
      kind: 'Subscription',
      id: s.id,
      href: `/console/subscriptions/${s.id}`,
      label: `${s.orderName} · ${s.userId}`,
      reason: s.attentionReason ? { codes: [{ group: 'attentionReason', code: s.attentionReason }] } : { say: 'needsAttention' },
      at: s.createdAt,
    }),
  );
  return { rows, more: subscriptions.nextCursor ? { kind: 'subscriptions', href: '/console/subscriptions?needsAttention=true' } : undefined };
}

async function registrationRows(db: Db): Promise<KindRows> {
  const registrations = await db.registration.findMany({
    where: { status: 'NEEDS_ATTENTION' },
    orderBy: PAGE,
    take: PER_KIND + 1,
    select: { id: true, orderId: true, userId: true, failureCode: true, createdAt: true, payments: { select: { id: true }, take: 1 } },
  });
  const rows = registrations.slice(0, PER_KIND).map((r): AttentionRow => {
    const payment = r.payments[0];
    return {
      kind: 'Registration',
      id: r.id,
      // Its payment's page resolves it; without one, the search shows the registration.
      href: payment ? `/console/payments/${payment.id}` : `/console/search?q=${encodeURIComponent(r.id)}`,
      label: `${r.orderId} · ${r.userId}`,
      reason: r.failureCode ? { codes: [{ code: r.failureCode }] } : { say: 'keyIssuanceUnknown' },
      at: r.createdAt,
    };
  });
  return { rows, more: registrations.length > PER_KIND ? { kind: 'registrations' } : undefined };
}

async function orderRows(db: Db): Promise<KindRows> {
  const orders = await db.order.findMany({
    where: { status: 'NEEDS_ATTENTION' },
    orderBy: PAGE,
    take: PER_KIND + 1,
    select: { id: true, orderId: true, failureCode: true, createdAt: true, payment: { select: { id: true } } },
  });
  const rows = orders.slice(0, PER_KIND).map(
    (o): AttentionRow => ({
      kind: 'Order',
      id: o.id,
      href: o.payment ? `/console/payments/${o.payment.id}` : `/console/search?q=${encodeURIComponent(o.id)}`,
      label: o.orderId,
      reason: o.failureCode ? { codes: [{ code: o.failureCode }] } : { say: 'paymentOutcomeUnknown' },
      at: o.createdAt,
    }),
  );
  return { rows, more: orders.length > PER_KIND ? { kind: 'orders' } : undefined };
}

/** Settlement lines by the reconciliation list's own filter (MISMATCHED, UNMATCHED, MISSING). */
async function settlementLineRows(db: Db): Promise<KindRows> {
  // Before any settlement file there is nothing to reconcile (and the items query reads every payment to say so).
  const lines = (await db.settlementImport.findFirst({ select: { id: true } }))
    ? await listItems(db, { status: ['MISMATCHED', 'UNMATCHED', 'MISSING'], limit: PER_KIND })
    : { items: [], nextCursor: null };
  const rows = lines.items.map(
    (line): AttentionRow => ({
      kind: 'Settlement line',
      id: line.id,
      href: `/console/reconciliation?status=${line.status}`,
      label: line.transactionId ?? undefined,
      amount: line.amount,
      reason: {
        status: { group: 'reconciliationStatus', code: line.status },
        codes: (line.reasons ?? []).map((code) => ({ group: 'mismatchReason' as const, code })),
      },
      at: new Date(line.tradedAt),
    }),
  );
  return { rows, more: lines.nextCursor ? { kind: 'settlementLines', href: '/console/reconciliation' } : undefined };
}

async function endpointRows(db: Db): Promise<KindRows> {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { status: 'DISABLED' },
    orderBy: PAGE,
    take: PER_KIND + 1,
    select: { id: true, url: true, disabledReason: true, updatedAt: true, createdAt: true },
  });
  const rows = endpoints.slice(0, PER_KIND).map(
    (e): AttentionRow => ({
      kind: 'Webhook endpoint',
      id: e.id,
      href: `/console/search?q=${encodeURIComponent(e.id)}`,
      label: e.url,
      reason: e.disabledReason ? { codes: [{ group: 'endpointDisabledReason', code: e.disabledReason }] } : { say: 'disabled' },
      at: e.updatedAt,
    }),
  );
  return { rows, more: endpoints.length > PER_KIND ? { kind: 'webhookEndpoints' } : undefined };
}
