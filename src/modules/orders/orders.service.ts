// One-time orders (docs/api.md "Registrations and orders"): POST /api/v1/orders (the terms checked when the order is created, its
// single-use `state` and its orderId), GET, and the order's public and event shapes. Its success and fail redirects
// are complete-order.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { Config } from '../../config.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { checkoutUrls, validateTerms, windowParams, withoutCheckoutSecrets, type Method } from '../shared/terms.ts';
import { checkoutByState } from '../checkout/checkout-by-state.ts';
import { writeUnderCustomer } from '../shared/customers.ts';

/** An order with its payment. */
export type OrderRow = Prisma.OrderGetPayload<{ include: { payment: { select: { id: true } } } }>;
type OrderView = Omit<OrderRow, 'payment'> & { payment?: { id: string } | null };

/** An order by its state, with its payment (checkoutByState). */
export const orderByState = checkoutByState<OrderRow>('orders', Prisma.OrderScalarFieldEnum, {
  as: 'payment',
  sql: `(SELECT jsonb_build_object('id', p."id") FROM "payments" p WHERE p."oneTimeOrderId" = c."id")`,
});

export interface CreateOrderInput {
  userId?: string;
  method: Method;
  amount: number;
  orderName: string;
  itemCode?: string;
  returnUrl?: string;
}

export function oneTimeOrderId(id: string): string {
  return `O${id.replace(/-/g, '')}`;
}

/** The public shape (docs/api.md "Registrations and orders"). */
export function serializeOrder(row: OrderView, config: Config) {
  const urls = checkoutUrls(config, 'payments', row.state);
  return {
    id: row.id,
    state: row.state,
    status: row.status,
    orderId: row.orderId,
    amount: row.amount,
    ...urls,
    expiresAt: row.expiresAt.toISOString(),
    window: windowParams(config, {
      method: row.method,
      amount: row.amount,
      orderName: row.orderName,
      userId: row.userId ?? undefined,
      itemCode: row.itemCode ?? undefined,
      orderId: row.orderId,
      issueKeyOnly: false,
      ...urls,
    }),
    paymentId: row.payment?.id,
    failureCode: row.failureCode ?? undefined,
    failureMessage: row.failureMessage ?? undefined,
    createdAt: row.createdAt.toISOString(),
  };
}

/** An order as events show it: without the single-use `state` and the URLs and window that carry it. */
export function orderEventObject(row: OrderView, config: Config) {
  return withoutCheckoutSecrets(serializeOrder(row, config));
}

export function createOrdersService(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'>) {
  const { db, clock, config } = deps;
  const include = { payment: { select: { id: true } } } as const;

  async function createOrder(input: CreateOrderInput) {
    validateTerms(input, config, { recurring: false });
    const id = randomUUID();
    const row = await writeUnderCustomer(db, input.userId, (tx) =>
      tx.order.create({
        data: {
          id,
          state: randomBytes(32).toString('base64url'),
          orderId: oneTimeOrderId(id),
          userId: input.userId,
          method: input.method,
          amount: input.amount,
          orderName: input.orderName,
          itemCode: input.itemCode,
          returnUrl: input.returnUrl,
          expiresAt: new Date(clock.now().getTime() + config.registrationTtlMs),
        },
        include,
      }),
    );
    return serializeOrder(row, config);
  }

  async function getOrder(id: string) {
    const row = await db.order.findUnique({ where: { id }, include });
    if (!row) throw new NotFoundError('Order');
    return serializeOrder(row, config);
  }

  return { createOrder, getOrder };
}
