// What Needs attention lists (docs/operating.md "Operator console"): everything waiting for an operator, each kind read
// with its own named predicate or existing list query (needsAttentionWhere for payments, pageSubscriptions for
// subscriptions, listItems for reconciliation), all at once: one round of parallel indexed reads, each capped at
// PER_KIND rows (the lists behind the "All …" links page through the rest).
import type { Db } from '../../db/prisma.ts';
import { needsAttentionWhere } from '../ledger/payment.queries.ts';
import { REFUND_OUTCOME_UNKNOWN } from '../ledger/payment.state.ts';
import { listItems } from '../reconciliation/reconciliation.queries.ts';
import { pageSubscriptions } from '../subscriptions/subscriptions.read.ts';

export const PER_KIND = 50;
const PAGE = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** One row of the list: what waits, since when, why, and the page that deals with it. */
export interface AttentionRow {
  kind: 'Payment' | 'Refund' | 'Subscription' | 'Registration' | 'Order' | 'Settlement line' | 'Webhook endpoint';
  id: string;
  href: string;
  label: string;
  reason: string;
  at: Date;
}

export interface AttentionList {
  rows: AttentionRow[];
  /** Kinds with more rows than shown, with the list that shows them all (when there is one). */
  more: Array<{ kind: string; href?: string }>;
}

export async function readNeedsAttention(db: Db): Promise<AttentionList> {
  const take = PER_KIND + 1;
  const [payments, subscriptions, registrations, orders, lines, endpoints] = await Promise.all([
    db.payment.findMany({
      where: needsAttentionWhere,
      orderBy: PAGE,
      take,
      select: { id: true, status: true, attentionReason: true, orderId: true, amount: true, createdAt: true },
    }),
    pageSubscriptions(db, { needsAttention: true, limit: PER_KIND }),
    db.registration.findMany({
      where: { status: 'NEEDS_ATTENTION' },
      orderBy: PAGE,
      take,
      select: { id: true, orderId: true, userId: true, failureCode: true, createdAt: true, payments: { select: { id: true }, take: 1 } },
    }),
    db.order.findMany({
      where: { status: 'NEEDS_ATTENTION' },
      orderBy: PAGE,
      take,
      select: { id: true, orderId: true, failureCode: true, createdAt: true, payment: { select: { id: true } } },
    }),
    // Before any settlement file there is nothing to reconcile (and the items query reads every payment to say so).
    db.settlementImport
      .findFirst({ select: { id: true } })
      .then((any) => (any ? listItems(db, { status: ['MISMATCHED', 'UNMATCHED', 'MISSING'], limit: PER_KIND }) : { items: [], nextCursor: null })),
    db.webhookEndpoint.findMany({
      where: { status: 'DISABLED' },
      orderBy: PAGE,
      take,
      select: { id: true, url: true, disabledReason: true, updatedAt: true, createdAt: true },
    }),
  ]);

  const rows: AttentionRow[] = [];
  const more: AttentionList['more'] = [];
  for (const p of payments.slice(0, PER_KIND)) {
    const refund = p.attentionReason === REFUND_OUTCOME_UNKNOWN;
    rows.push({
      kind: refund ? 'Refund' : 'Payment',
      id: p.id,
      href: `/console/payments/${p.id}`,
      label: `${p.orderId} · ${p.amount.toLocaleString('en-US')} KRW`,
      reason: refund ? 'Refund outcome unknown' : p.status === 'UNKNOWN' ? 'Outcome unknown' : `${p.status}: ${p.attentionReason ?? ''}`,
      at: p.createdAt,
    });
  }
  if (payments.length > PER_KIND) more.push({ kind: 'payments', href: '/console/payments?needsAttention=true' });
  for (const s of subscriptions.items) {
    rows.push({
      kind: 'Subscription',
      id: s.id,
      href: `/console/subscriptions/${s.id}`,
      label: `${s.orderName} · ${s.userId}`,
      reason: s.attentionReason ?? 'Needs attention',
      at: s.createdAt,
    });
  }
  if (subscriptions.nextCursor) more.push({ kind: 'subscriptions', href: '/console/subscriptions?needsAttention=true' });
  for (const r of registrations.slice(0, PER_KIND)) {
    const payment = r.payments[0];
    rows.push({
      kind: 'Registration',
      id: r.id,
      // Its payment's page resolves it; without one, the search shows the registration.
      href: payment ? `/console/payments/${payment.id}` : `/console/search?q=${encodeURIComponent(r.id)}`,
      label: `${r.orderId} · ${r.userId}`,
      reason: r.failureCode ?? 'Key issuance outcome unknown',
      at: r.createdAt,
    });
  }
  if (registrations.length > PER_KIND) more.push({ kind: 'registrations' });
  for (const o of orders.slice(0, PER_KIND)) {
    rows.push({
      kind: 'Order',
      id: o.id,
      href: o.payment ? `/console/payments/${o.payment.id}` : `/console/search?q=${encodeURIComponent(o.id)}`,
      label: o.orderId,
      reason: o.failureCode ?? 'Payment outcome unknown',
      at: o.createdAt,
    });
  }
  if (orders.length > PER_KIND) more.push({ kind: 'orders' });
  for (const line of lines.items) {
    rows.push({
      kind: 'Settlement line',
      id: line.id,
      href: `/console/reconciliation?status=${line.status}`,
      label: `${line.transactionId ?? '(no transactionId)'} · ${line.amount.toLocaleString('en-US')} KRW`,
      reason: `${line.status}${line.reasons?.length ? `: ${line.reasons.join(', ')}` : ''}`,
      at: new Date(line.tradedAt),
    });
  }
  if (lines.nextCursor) more.push({ kind: 'settlement lines', href: '/console/reconciliation' });
  for (const e of endpoints.slice(0, PER_KIND)) {
    rows.push({
      kind: 'Webhook endpoint',
      id: e.id,
      href: `/console/search?q=${encodeURIComponent(e.id)}`,
      label: e.url,
      reason: e.disabledReason ?? 'Disabled',
      at: e.updatedAt,
    });
  }
  if (endpoints.length > PER_KIND) more.push({ kind: 'webhook endpoints' });
  return { rows, more };
}
