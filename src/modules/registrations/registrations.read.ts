// How a registration is read and shown (docs/api.md "Registrations and orders"): the public shape the merchant API answers, the shape events
// carry (without the single-use `state`), and the read by `state` that starts every browser redirect.
import { Prisma } from '../../generated/prisma/client.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/prisma.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { checkoutUrls, tossWindowPageUrl, tossWindowParams, windowParams, withoutCheckoutSecrets } from '../shared/terms.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { checkoutByState } from '../checkout/checkout-by-state.ts';

/** A registration with the subscription it created. */
export type RegistrationRow = Prisma.RegistrationGetPayload<{ include: { subscription: { select: { id: true } } } }>;
type RegistrationView = Omit<RegistrationRow, 'subscription'> & { subscription?: { id: string } | null };

export const WITH_SUBSCRIPTION_ID = { subscription: { select: { id: true } } } as const;

/** A registration by its state, with the subscription it created (checkoutByState). */
export const registrationByState = checkoutByState<RegistrationRow>('registrations', Prisma.RegistrationScalarFieldEnum, {
  as: 'subscription',
  sql: `(SELECT jsonb_build_object('id', s."id") FROM "subscriptions" s WHERE s."registrationId" = c."id")`,
});

/**
 * The public shape (docs/api.md "Registrations and orders"). `gateways` give a Toss window its client key and page
 * (absent in an event's copy).
 */
export function serializeRegistration(row: RegistrationView, config: Config, gateways?: Pick<ServiceDeps, 'gateways'>['gateways']) {
  const urls = checkoutUrls(config, 'billing', row.state);
  const window =
    row.gateway === 'DANAL'
      ? windowParams(config, {
          method: row.method,
          amount: row.amount,
          orderName: row.orderName,
          userId: row.userId,
          itemCode: row.itemCode ?? undefined,
          userName: row.userName ?? undefined,
          userPhoneNumber: row.userPhoneNumber ?? undefined,
          orderId: row.orderId,
          issueKeyOnly: row.issueKeyOnly,
          ...urls,
        })
      : tossWindowParams(gateways?.[row.gateway]?.window, { customerKey: row.customerKey!, ...urls, ourPage: tossWindowPageUrl(config, row.state) });
  return {
    id: row.id,
    state: row.state,
    status: row.status,
    orderId: row.orderId,
    ...urls,
    expiresAt: row.expiresAt.toISOString(),
    gateway: row.gateway,
    window,
    purpose: row.purpose,
    subscriptionId: row.subscription?.id ?? row.targetSubscriptionId ?? undefined,
    trialDays: row.trialDays ?? undefined,
    failureCode: row.failureCode ?? undefined,
    failureMessage: row.failureMessage ?? undefined,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * A registration as events show it: the public shape without the single-use `state`, the URLs that carry it and
 * the window (which holds them and the customer's phone number). The event snapshot never stores either.
 */
export function registrationEventObject(row: RegistrationView, config: Config) {
  return withoutCheckoutSecrets(serializeRegistration(row, config));
}

/** GET /api/v1/registrations/:id */
export async function getRegistration(deps: { db: Db; config: Config } & Pick<ServiceDeps, 'gateways'>, id: string) {
  const row = await deps.db.registration.findUnique({ where: { id }, include: WITH_SUBSCRIPTION_ID });
  if (!row) throw new NotFoundError('Registration');
  return serializeRegistration(row, deps.config, deps.gateways);
}
