// The console's search (docs/operating.md "Operator console": "any id, orderId, transactionId or userId"): every place a value can be one of
// those, each an indexed lookup, all at once. Kaui's search missed external keys; here an orderId finds a payment
// through any of its attempts (a retry carries a new orderId) and a transactionId through the payment, its attempts
// (refunds included), checkouts and settlement lines.
import type { Db } from '../../db/prisma.ts';
import { isUuid } from '../../lib/input.ts';

export interface SearchHit {
  kind: 'Payment' | 'Subscription' | 'Registration' | 'Order' | 'Webhook endpoint' | 'Settlement line';
  id: string;
  href: string;
  label: string;
  detail: string;
  at: Date;
}

const MAX_PER_KIND = 50;

export async function search(db: Db, query: string): Promise<SearchHit[]> {
  const q = query.trim();
  if (q === '') return [];
  const id = isUuid(q) ? q.toLowerCase() : undefined;
  const pay = { id: true, orderId: true, status: true, amount: true, createdAt: true } as const;
  const [payments, viaAttempts, subscriptions, registrations, orders, endpoints, lines] = await Promise.all([
    db.payment.findMany({ where: { OR: [...(id ? [{ id }] : []), { transactionId: q }] }, select: pay, take: MAX_PER_KIND }),
    db.paymentAttempt.findMany({
      where: { OR: [{ orderId: q }, { transactionId: q }] },
      select: { payment: { select: pay } },
      take: MAX_PER_KIND,
    }),
    db.subscription.findMany({
      where: { OR: [...(id ? [{ id }, { registrationId: id }, { billingKeyId: id }] : []), { userId: q }] },
      select: { id: true, orderName: true, userId: true, status: true, createdAt: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: MAX_PER_KIND,
    }),
    db.registration.findMany({
      where: { OR: [...(id ? [{ id }] : []), { orderId: q }, { transactionId: q }] },
      select: { id: true, orderId: true, status: true, createdAt: true, subscription: { select: { id: true } }, payments: { select: { id: true }, take: 1 } },
      take: MAX_PER_KIND,
    }),
    db.order.findMany({
      where: { OR: [...(id ? [{ id }] : []), { orderId: q }, { transactionId: q }] },
      select: { id: true, orderId: true, status: true, createdAt: true, payment: { select: { id: true } } },
      take: MAX_PER_KIND,
    }),
    id
      ? db.webhookEndpoint.findMany({ where: { id }, select: { id: true, url: true, status: true, disabledReason: true, createdAt: true } })
      : Promise.resolve([]),
    db.settlementLine.findMany({
      where: { transactionId: q },
      select: { id: true, transactionId: true, type: true, amount: true, tradedAt: true },
      take: MAX_PER_KIND,
    }),
  ]);

  const hits = new Map<string, SearchHit>();
  const add = (hit: SearchHit) => hits.set(`${hit.kind}:${hit.id}`, hit);
  for (const p of [...payments, ...viaAttempts.map((a) => a.payment)]) {
    add({
      kind: 'Payment',
      id: p.id,
      href: `/console/payments/${p.id}`,
      label: p.orderId,
      detail: `${p.status} · ${p.amount.toLocaleString('en-US')} KRW`,
      at: p.createdAt,
    });
  }
  for (const s of subscriptions) {
    add({ kind: 'Subscription', id: s.id, href: `/console/subscriptions/${s.id}`, label: s.orderName, detail: `${s.status} · ${s.userId}`, at: s.createdAt });
  }
  for (const r of registrations) {
    const target = r.subscription ? `/console/subscriptions/${r.subscription.id}` : r.payments[0] ? `/console/payments/${r.payments[0].id}` : undefined;
    add({ kind: 'Registration', id: r.id, href: target ?? '', label: r.orderId, detail: r.status, at: r.createdAt });
  }
  for (const o of orders) {
    add({ kind: 'Order', id: o.id, href: o.payment ? `/console/payments/${o.payment.id}` : '', label: o.orderId, detail: o.status, at: o.createdAt });
  }
  for (const e of endpoints) {
    add({
      kind: 'Webhook endpoint',
      id: e.id,
      href: '',
      label: e.url,
      detail: e.status === 'DISABLED' ? `DISABLED: ${e.disabledReason ?? ''}` : e.status,
      at: e.createdAt,
    });
  }
  for (const l of lines) {
    add({
      kind: 'Settlement line',
      id: l.id,
      href: '/console/reconciliation',
      label: l.transactionId,
      detail: `${l.type} · ${l.amount.toLocaleString('en-US')} KRW`,
      at: l.tradedAt,
    });
  }
  return [...hits.values()];
}
