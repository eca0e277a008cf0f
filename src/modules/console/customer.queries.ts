// What the Customer page shows of one customer, found by their exact userId (docs/console.md "Operator console"):
// their latest subscriptions (the Subscriptions list's query), one-time orders and payments (GET /admin/payments?userId=,
// the same service), all at once. An erased customer's records carry the pseudonym in place of the userId, so a
// pseudonym finds them like a userId does; their erasure (the `erasures` row of that pseudonym) says they were erased.
import type { Db } from '../../db/prisma.ts';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import { pageSubscriptions } from '../subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';

/** How many of each kind the page lists; the Subscriptions and Payments lists (filtered by userId) page through the rest. */
export const CUSTOMER_ROWS = 20;

/** An erasure as the customer pages say it: when, until when the identity is kept, and whether it was destroyed. */
export interface ErasureFacts {
  id: string;
  pseudonym: string;
  erasedAt: Date;
  retainUntil: string;
  identityPurgedAt: Date | null;
}

const ERASURE_FACTS = { id: true, pseudonym: true, erasedAt: true, retainUntil: true, identityPurgedAt: true } as const;

/** The erasure whose pseudonym is `userId`, if it is one. */
export function erasureOf(db: Db, userId: string): Promise<ErasureFacts | null> {
  return db.erasure.findUnique({ where: { pseudonym: userId }, select: ERASURE_FACTS });
}

export async function readCustomer(db: Db, payments: PaymentActions, userId: string) {
  const [subscriptions, orders, paid, erasure] = await Promise.all([
    pageSubscriptions(db, { userId, limit: CUSTOMER_ROWS }),
    db.order.findMany({
      where: { userId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: CUSTOMER_ROWS + 1,
      select: { id: true, orderId: true, orderName: true, status: true, amount: true, method: true, createdAt: true, payment: { select: { id: true } } },
    }),
    payments.listPayments({ userId, limit: CUSTOMER_ROWS }, db),
    erasureOf(db, userId),
  ]);
  return {
    subscriptions: subscriptions.items.map(serializeSubscription),
    moreSubscriptions: subscriptions.nextCursor !== null,
    orders: orders.slice(0, CUSTOMER_ROWS),
    moreOrders: orders.length > CUSTOMER_ROWS,
    payments: paid.items,
    morePayments: paid.nextCursor !== null,
    erasure,
  };
}

export type CustomerRecords = Awaited<ReturnType<typeof readCustomer>>;

/** Whether the customer has any record: the erase action is offered only then (the service answers 404 otherwise). */
export const hasRecords = (records: CustomerRecords) => records.subscriptions.length + records.orders.length + records.payments.length > 0;
