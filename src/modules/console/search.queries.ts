// The console's search (docs/console.md "Operator console": "any id, orderId, transactionId or userId"): every place a value can be one of
// those, each an indexed lookup, all at once. Kaui's search missed external keys; here an orderId finds a payment
// through any of its attempts (a retry carries a new orderId) and a transactionId through the payment, its attempts
// (refunds included), checkouts and settlement lines.
import type { Db } from '../../db/prisma.ts';
import { isUuid } from '../../lib/input.ts';
import type { Code } from './console-page.ts';

/**
 * One thing found: what it is (also its row's data-kind), the page that shows it, its label, and what the page says
 * of it (a status with its reasons, an amount, a userId), as data and codes: views/search.eta says them in words.
 */
export interface SearchHit {
  kind: 'Payment' | 'Subscription' | 'Registration' | 'Order' | 'Webhook endpoint' | 'Settlement line';
  id: string;
  href: string;
  label: string;
  status: Code;
  reasons?: Code[];
  amount?: number;
  userId?: string;
  at: Date;
}

const MAX_PER_KIND = 50;

/** What a value is looked up as: the text itself, and its lower-case form when it is a UUID (an id). */
interface Needle {
  q: string;
  id: string | undefined;
}

/** Every kind looked up at once; a row found twice (a payment by two of its attempts) is listed once. */
export async function search(db: Db, query: string): Promise<SearchHit[]> {
  const q = query.trim();
  if (q === '') return [];
  const needle = { q, id: isUuid(q) ? q.toLowerCase() : undefined };
  const kinds = await Promise.all([
    paymentHits(db, needle),
    subscriptionHits(db, needle),
    registrationHits(db, needle),
    orderHits(db, needle),
    endpointHits(db, needle),
    settlementLineHits(db, needle),
  ]);
  const hits = new Map<string, SearchHit>();
  for (const hit of kinds.flat()) hits.set(`${hit.kind}:${hit.id}`, hit);
  return [...hits.values()];
}

/** A payment by its id or transactionId, or through any of its attempts by their orderId or transactionId. */
async function paymentHits(db: Db, { q, id }: Needle): Promise<SearchHit[]> {
  const pay = { id: true, orderId: true, status: true, amount: true, createdAt: true } as const;
  const [payments, viaAttempts] = await Promise.all([
    db.payment.findMany({ where: { OR: [...(id ? [{ id }] : []), { transactionId: q }] }, select: pay, take: MAX_PER_KIND }),
    db.paymentAttempt.findMany({
      where: { OR: [{ orderId: q }, { transactionId: q }] },
      select: { payment: { select: pay } },
      take: MAX_PER_KIND,
    }),
  ]);
  return [...payments, ...viaAttempts.map((a) => a.payment)].map((p) => ({
    kind: 'Payment',
    id: p.id,
    href: `/console/payments/${p.id}`,
    label: p.orderId,
    status: { group: 'paymentStatus', code: p.status },
    amount: p.amount,
    at: p.createdAt,
  }));
}

async function subscriptionHits(db: Db, { q, id }: Needle): Promise<SearchHit[]> {
  const subscriptions = await db.subscription.findMany({
    where: { OR: [...(id ? [{ id }, { registrationId: id }, { billingKeyId: id }] : []), { userId: q }] },
    select: { id: true, orderName: true, userId: true, status: true, createdAt: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: MAX_PER_KIND,
  });
  return subscriptions.map((s) => ({
    kind: 'Subscription',
    id: s.id,
    href: `/console/subscriptions/${s.id}`,
    label: s.orderName,
    status: { group: 'subscriptionStatus', code: s.status },
    userId: s.userId,
    at: s.createdAt,
  }));
}

async function registrationHits(db: Db, { q, id }: Needle): Promise<SearchHit[]> {
  const registrations = await db.registration.findMany({
    where: { OR: [...(id ? [{ id }] : []), { orderId: q }, { transactionId: q }] },
    select: { id: true, orderId: true, status: true, createdAt: true, subscription: { select: { id: true } }, payments: { select: { id: true }, take: 1 } },
    take: MAX_PER_KIND,
  });
  return registrations.map((r) => {
    const target = r.subscription ? `/console/subscriptions/${r.subscription.id}` : r.payments[0] ? `/console/payments/${r.payments[0].id}` : undefined;
    return { kind: 'Registration', id: r.id, href: target ?? '', label: r.orderId, status: { group: 'checkoutStatus', code: r.status }, at: r.createdAt };
  });
}

async function orderHits(db: Db, { q, id }: Needle): Promise<SearchHit[]> {
  const orders = await db.order.findMany({
    where: { OR: [...(id ? [{ id }] : []), { orderId: q }, { transactionId: q }] },
    select: { id: true, orderId: true, status: true, createdAt: true, payment: { select: { id: true } } },
    take: MAX_PER_KIND,
  });
  return orders.map((o) => ({
    kind: 'Order',
    id: o.id,
    href: o.payment ? `/console/payments/${o.payment.id}` : '',
    label: o.orderId,
    status: { group: 'checkoutStatus', code: o.status },
    at: o.createdAt,
  }));
}

/** A webhook endpoint by its id only. */
async function endpointHits(db: Db, { id }: Needle): Promise<SearchHit[]> {
  if (!id) return [];
  const endpoints = await db.webhookEndpoint.findMany({ where: { id }, select: { id: true, url: true, status: true, disabledReason: true, createdAt: true } });
  return endpoints.map((e) => ({
    kind: 'Webhook endpoint',
    id: e.id,
    href: '',
    label: e.url,
    status: { group: 'endpointStatus', code: e.status },
    reasons: e.status === 'DISABLED' && e.disabledReason ? [{ group: 'endpointDisabledReason', code: e.disabledReason }] : [],
    at: e.createdAt,
  }));
}

async function settlementLineHits(db: Db, { q }: Needle): Promise<SearchHit[]> {
  const lines = await db.settlementLine.findMany({
    where: { transactionId: q },
    select: { id: true, transactionId: true, type: true, amount: true, tradedAt: true },
    take: MAX_PER_KIND,
  });
  return lines.map((l) => ({
    kind: 'Settlement line',
    id: l.id,
    href: '/console/reconciliation',
    label: l.transactionId,
    status: { group: 'settlementLineType', code: l.type },
    amount: l.amount,
    at: l.tradedAt,
  }));
}
