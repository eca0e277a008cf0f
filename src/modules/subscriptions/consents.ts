// A customer's consent, recorded by the merchant (POST /api/v1/subscriptions/:id/consents, docs/architecture.md, invariant 13): a
// trial's conversion or a price increase is charged only with a consent obtained within the 30 days before the charge.
// The database adds (prisma/functions/): the guard that refuses any edit or delete of a consent (guards.sql).
import type { ServiceDeps } from '../shared/service-deps.ts';
import { StateConflictError, ValidationError } from '../../lib/errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { consentState } from '../ledger/consent.rules.ts';
import { changeSubscription, loadSubscription, lockSubscription } from './audited-change.ts';
import { ConsentAlreadyDecidedError } from './customer.errors.ts';
import { serializeConsent } from './subscriptions.shape.ts';

export interface ConsentInput {
  kind: 'TRIAL_CONVERSION' | 'PRICE_INCREASE';
  obtainedAt?: string;
  channel?: string;
  reference?: string;
}

export function createConsents(deps: Pick<ServiceDeps, 'db' | 'clock'>) {
  const { db, clock } = deps;

  /** Records a consent (immutable; the database refuses changes), audit-logged in the same transaction. */
  async function recordConsent(id: string, input: ConsentInput, actor: string, requestId?: string) {
    const now = clock.now();
    const obtainedAt = input.obtainedAt ? new Date(input.obtainedAt) : now;
    if (obtainedAt > now) throw new ValidationError('obtainedAt must not be in the future');
    return db.$transaction(async (tx) => {
      // Under the row lock: a subscription canceled meanwhile (by its customer's erasure too) takes no consent.
      await lockSubscription(tx, id);
      const row = await loadSubscription(tx, id);
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

  /**
   * The customer's own consent in the portal (channel PORTAL), only while one of its kind waits for them
   * (consentState): a decision already taken is 409 CONSENT_ALREADY_DECIDED; a consent asked before the window of the
   * charge it is for opens (a trial's end, a price increase's next charge), 409 STATE_CONFLICT (it would not count
   * there). Audited with the customer, in the transaction that records it; answers the subscription.
   */
  const consentFromCustomer = (id: string, kind: ConsentInput['kind'], who: Actor) =>
    changeSubscription(db, id, { ...who, action: 'subscription.consent', reason: kind }, async (tx, row) => {
      const now = clock.now();
      const state = consentState(row, kind, row.consents, now);
      if (state === 'TOO_EARLY') throw new StateConflictError('A consent is agreed to within the 30 days before the charge it is for');
      if (state === 'DECIDED') throw new ConsentAlreadyDecidedError(`No ${kind} consent waits for the customer’s decision`);
      await tx.consent.create({ data: { subscriptionId: id, kind, obtainedAt: now, channel: 'PORTAL' } });
    });

  return { recordConsent, consentFromCustomer };
}
