// POST /api/v1/registrations (docs/api.md "Registrations and orders"): the terms of a new subscription, checked before the window
// exists, and the registration that carries them. Its single-use `state` (256 random bits) is the only thing that
// binds a browser redirect to it; its orderId is derived from its id (docs/architecture.md, invariant 2).
import { randomBytes, randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { ValidationError } from '../../lib/errors.ts';
import type { IntervalUnit } from '../../lib/calendar.ts';
import { validateTerms, type Method } from '../shared/terms.ts';
import { serializeRegistration, WITH_SUBSCRIPTION_ID } from './registrations.read.ts';
import { writeUnderCustomer } from '../shared/customers.ts';
import { chooseGateway } from '../shared/gateway-for.ts';
import type { GatewayName } from '../../gateway/gateway.ts';

export interface CreateRegistrationInput {
  userId: string;
  method: Method;
  amount: number;
  orderName: string;
  interval?: { unit: 'day' | 'week' | 'month' | 'year'; count: number };
  itemCode?: string;
  issueKeyOnly?: boolean;
  trialDays?: number;
  userName?: string;
  userPhoneNumber?: string;
  returnUrl?: string;
  /** The gateway whose window issues the key (docs/api.md "Gateways"); default DANAL. */
  gateway?: GatewayName;
}

/** Terms whose rules were checked: a new subscription's (below) or a new payment method's (replace-payment-method.ts). */
export type CheckedTerms = CreateRegistrationInput & {
  interval: { unit: IntervalUnit; count: number };
  issueKeyOnly: boolean;
  targetSubscriptionId?: string;
};

type Deps = Pick<ServiceDeps, 'db' | 'clock' | 'config'> & Partial<Pick<ServiceDeps, 'gateway' | 'gateways'>>;

/** Our registration orderId: derived from the row id, 33 bytes, unique (invariant 2). */
export function registrationOrderId(id: string): string {
  return `R${id.replace(/-/g, '')}`;
}

export async function createRegistration(deps: Deps, input: CreateRegistrationInput) {
  const interval = input.interval ?? { unit: 'month' as const, count: 1 };
  // A trial is a key-only registration whose first charge is at the trial's end (docs/api.md "Subscription lifecycle").
  if (input.trialDays !== undefined) {
    if (input.method !== 'CARD') throw new ValidationError('trialDays is for CARD only: a MOBILE registration charges at once');
    if (input.issueKeyOnly === false) throw new ValidationError('trialDays implies issueKeyOnly: nothing is charged until the trial ends');
  }
  const issueKeyOnly = input.issueKeyOnly ?? input.trialDays !== undefined;
  validateTerms(input, deps.config, { recurring: true });
  const gateway = input.gateway ?? 'DANAL';
  // A gateway whose issuance charges nothing still charges a registration's first payment at once, with the new key
  // (complete-registration.ts): the terms are the same whichever gateway takes them.
  if (gateway !== 'DANAL') chooseGateway({ gateway: deps.gateway!, gateways: deps.gateways }, gateway, input.method);
  if (input.method === 'MOBILE') {
    if (interval.unit !== 'month' || interval.count !== 1) {
      throw new ValidationError('MOBILE subscriptions are billed monthly: interval must be {unit: "month", count: 1}');
    }
    if (issueKeyOnly) {
      throw new ValidationError('issueKeyOnly is not available for MOBILE: the registration’s payment starts the chain');
    }
  }
  return insertRegistration(deps, { ...input, interval, issueKeyOnly, gateway });
}

/** The registration row and its window; the rules of its terms are checked by the caller. */
export async function insertRegistration(deps: Deps, input: CheckedTerms) {
  const { db, clock, config } = deps;
  const id = randomUUID();
  const row = await writeUnderCustomer(db, input.userId, (tx) =>
    tx.registration.create({
      data: {
        id,
        state: randomBytes(32).toString('base64url'),
        orderId: registrationOrderId(id),
        userId: input.userId,
        method: input.method,
        amount: input.amount,
        orderName: input.orderName,
        intervalUnit: input.interval.unit,
        intervalCount: input.interval.count,
        itemCode: input.itemCode,
        issueKeyOnly: input.issueKeyOnly,
        trialDays: input.trialDays,
        purpose: input.targetSubscriptionId ? 'PAYMENT_METHOD' : 'SUBSCRIPTION',
        targetSubscriptionId: input.targetSubscriptionId,
        userName: input.userName,
        userPhoneNumber: input.userPhoneNumber,
        returnUrl: input.returnUrl,
        gateway: input.gateway ?? 'DANAL',
        // A Toss key is bound to a customerKey of ours: random, never the userId (a CHECK: Toss's rows only).
        customerKey: (input.gateway ?? 'DANAL') === 'DANAL' ? null : `ck_${randomBytes(24).toString('base64url')}`,
        expiresAt: new Date(clock.now().getTime() + config.registrationTtlMs),
      },
      include: WITH_SUBSCRIPTION_ID,
    }),
  );
  return serializeRegistration(row, config, deps.gateways);
}
