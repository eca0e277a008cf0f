// The subscription lifecycle through the merchant API (DESIGN.md §5 "Subscription lifecycle", §3 rule 13):
// consents and price changes. Every rule is checked here, before anything is written, and the planner
// (charge.rules.ts) checks rule 13 again at every charge, whatever path set the amount.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { validateTerms } from '../shared/terms.ts';
import { writeAudit } from '../audit/audit.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import { serializeConsent, serializeSubscription, WITH_KEY } from './subscriptions.service.ts';

type Tx = Prisma.TransactionClient;

export interface ConsentInput {
  kind: 'TRIAL_CONVERSION' | 'PRICE_INCREASE';
  obtainedAt?: string;
  channel?: string;
  reference?: string;
}

/**
 * A new amount (DESIGN.md §5 "Price change"): lower or equal applies from the next charge; higher waits as
 * `pendingAmount` for a PRICE_INCREASE consent obtained after now (at once where CONSENT_REQUIRED=false). MOBILE
 * amounts change only through a new payment method (the gateway requires the previous month's amount). Shared by the
 * merchant API and the admin PATCH.
 */
export async function applyPriceChange(
  tx: Tx,
  row: { id: string; status: string; method: 'CARD' | 'MOBILE'; amount: number; orderName: string; itemCode: string | null },
  amount: number,
  context: Pick<ServiceDeps, 'config'> & { now: Date },
): Promise<void> {
  if (row.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription cannot change');
  if (row.method === 'MOBILE') {
    if (amount === row.amount) return;
    throw new RULE_ERRORS.MOBILE_AMOUNT_MISMATCH(
      'A MOBILE amount changes only through a new payment method (the customer approves it in the gateway’s window)',
    );
  }
  validateTerms({ method: row.method, amount, orderName: row.orderName, itemCode: row.itemCode ?? undefined }, context.config, { recurring: true });
  const increase = amount > row.amount && context.config.consentRequired;
  await tx.subscription.update({
    where: { id: row.id },
    data: {
      amount: increase ? undefined : amount,
      pendingAmount: increase ? amount : null,
      pendingAmountRequestedAt: increase ? context.now : null,
      changedAt: context.now,
    },
  });
}

export function createLifecycleService(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'>) {
  const { db, clock, config } = deps;

  async function load(tx: Tx, id: string) {
    const row = await tx.subscription.findUnique({ where: { id }, include: WITH_KEY });
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }

  /** Records a consent (immutable; the database refuses changes), audit-logged in the same transaction. */
  async function recordConsent(id: string, input: ConsentInput, actor: string, requestId?: string) {
    const now = clock.now();
    const obtainedAt = input.obtainedAt ? new Date(input.obtainedAt) : now;
    if (obtainedAt > now) throw new ValidationError('obtainedAt must not be in the future');
    return db.$transaction(async (tx) => {
      const row = await load(tx, id);
      if (row.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription takes no consent');
      const consent = await tx.consent.create({
        data: { subscriptionId: id, kind: input.kind, obtainedAt, channel: input.channel, reference: input.reference },
      });
      await writeAudit(tx, {
        actor,
        action: 'subscription.consent',
        entityType: 'subscription',
        entityId: id,
        reason: input.kind,
        after: serializeConsent(consent),
        requestId,
      });
      return serializeConsent(consent);
    });
  }

  async function changePrice(id: string, amount: number, actor: string, requestId?: string) {
    return db.$transaction(async (tx) => {
      const before = await load(tx, id);
      await applyPriceChange(tx, before, amount, { config, now: clock.now() });
      const after = await load(tx, id);
      await writeAudit(tx, {
        actor,
        action: 'subscription.price_change',
        entityType: 'subscription',
        entityId: id,
        reason: `amount ${amount}`,
        before: serializeSubscription(before),
        after: serializeSubscription(after),
        requestId,
      });
      return serializeSubscription(after);
    });
  }

  return { recordConsent, changePrice };
}

export type LifecycleService = ReturnType<typeof createLifecycleService>;
