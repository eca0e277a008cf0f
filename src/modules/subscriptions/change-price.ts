// Changing a subscription's terms: the merchant's price change (POST /api/v1/subscriptions/:id/price-change), an
// operator's PATCH /admin/subscriptions/:id (amount, orderName), and the customer declining a pending increase. Both follow the one price-change rule below; the
// planner (ledger/charge.rules.ts) checks the consent rule again at every charge, whatever path set the amount.
// The database adds (prisma/functions/): subscription.updated (events.sql), an EXPANSION or CONTRACTION movement when the amount moves (mrr.sql).
import type { Prisma } from '../../generated/prisma/client.ts';
import { StateConflictError } from '../../lib/errors.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { validateTerms } from '../shared/terms.ts';
import type { Actor } from '../audit/audit.ts';
import { changeSubscription } from './audited-change.ts';
import { consentState } from '../ledger/consent.rules.ts';
import { ConsentAlreadyDecidedError } from './customer.errors.ts';

type Tx = Prisma.TransactionClient;

/**
 * A new amount (docs/api.md "Subscription lifecycle"): lower or equal applies from the next charge; higher waits as
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

export function createPriceChange(deps: Pick<ServiceDeps, 'db' | 'clock' | 'config'>) {
  const { db, clock, config } = deps;

  /** The merchant's price change, audited with the API key's name. */
  const changePrice = (id: string, amount: number, actor: string, requestId?: string) =>
    changeSubscription(db, id, { actor, action: 'subscription.price_change', reason: `amount ${amount}`, requestId }, (tx, row) =>
      applyPriceChange(tx, row, amount, { config, now: clock.now() }),
    );

  /**
   * An operator's new terms, from the next cycle: a payment already started keeps its amount. The amount follows the
   * price-change rule (applyPriceChange: an increase waits for the customer's consent; MOBILE only through a new
   * payment method).
   */
  const update = (id: string, input: { amount?: number; orderName?: string }, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.update' }, async (tx, row) => {
      if (row.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription cannot change');
      if (input.amount !== undefined) await applyPriceChange(tx, row, input.amount, { config, now: clock.now() });
      if (input.orderName !== undefined) {
        validateTerms({ method: row.method, amount: row.amount, orderName: input.orderName, itemCode: row.itemCode ?? undefined }, config, { recurring: true });
        await tx.subscription.update({ where: { id }, data: { orderName: input.orderName } });
      }
    });

  /**
   * The customer declines a price increase waiting for their consent (the portal): the pending amount is dropped and
   * the old amount goes on (subscription.updated carries the old pendingAmount), also before its consent window opens
   * (consentState TOO_EARLY). Nothing waiting (none pending, or already agreed) is 409 CONSENT_ALREADY_DECIDED.
   */
  const declineIncrease = (id: string, who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.decline_price_increase' }, async (tx, row) => {
      const now = clock.now();
      if (consentState(row, 'PRICE_INCREASE', row.consents, now) === 'DECIDED')
        throw new ConsentAlreadyDecidedError('No price increase waits for the customer’s decision');
      await tx.subscription.update({ where: { id }, data: { pendingAmount: null, pendingAmountRequestedAt: null, changedAt: now } });
    });

  return { changePrice, update, declineIncrease };
}
