// An operator's charge of one subscription (POST /admin/subscriptions/:id/charge, through charge-now.ts), top-down
// with the scheduler's steps and every rule it meets (docs/architecture.md "Recurring charging"): take the
// subscription's lease, prepare (charge.prepare.ts), call (charge.call.ts), record (charge.record.ts); and its dry run.
import { randomUUID } from 'node:crypto';
import { explainCharge } from '../ledger/charge.rules.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { sendCharge } from './charge.call.ts';
import { claimSubscription, loadChargeInputs } from './charge.claim.ts';
import { prepare } from './charge.prepare.ts';
import { recordOne } from './charge.record.ts';
import type { ChargeDeps, ChargeReport, OnPrepared } from './charge.types.ts';

/**
 * Charges one subscription now, as an operator. `onPrepared` runs inside the transaction that commits the payment and
 * its attempt (the admin audit event goes there). A charge that throws gives its lease back.
 */
export async function chargeOne(deps: ChargeDeps, id: string, onPrepared?: OnPrepared): Promise<ChargeReport> {
  const owner = randomUUID();
  if (!(await claimSubscription(deps, id, owner)))
    return { subscriptionId: id, outcome: 'SKIPPED', code: 'LEASE_LOST', message: 'the subscription is being charged right now' };
  try {
    const ready = await prepare(deps, id, owner, 'ADMIN', onPrepared);
    if (ready.kind === 'DONE') return ready.report;
    return await recordOne(deps, ready, await sendCharge(deps, ready));
  } catch (error) {
    await releaseSubscription(deps.db, id, owner).catch(() => undefined);
    throw error;
  }
}

/** The rules an operator's charge would meet now, without claiming or charging anything; undefined when it is not found. */
export async function explainOne(deps: Pick<ChargeDeps, 'db' | 'clock' | 'config'>, id: string) {
  const { db, clock, config } = deps;
  const inputs = await loadChargeInputs(db, id, { now: clock.now(), timezone: config.timezone, trigger: 'ADMIN', consentRequired: config.consentRequired });
  return inputs && explainCharge(inputs.planSub, inputs.openInput, inputs.ctx);
}
