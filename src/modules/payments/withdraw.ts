// The customer's withdrawal (청약철회, docs/api.md "Subscription lifecycle"): within PORTAL_WITHDRAWAL of the
// subscription's first payment, before the merchant recorded use, it ends now (cancelReason WITHDRAWN) and every
// succeeded payment is refunded in full through the operators' refund path (payments/refund-payment.ts: its rules, its
// events, its write-before-call and unknown outcomes). Here, among the payments, since it sends refunds; the cancel
// itself is subscriptions/cancel.ts's. What the gateway no longer cancels (a MOBILE payment after its
// Korean month) is owed under attention WITHDRAWAL_REFUND_DUE (ledger/refund-due.ts) until an operator records the
// refund made outside the gateway.
// The database adds (prisma/functions/): subscription.canceled (events.sql), a CHURN movement (mrr.sql), the refunds' events.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayCapabilities } from '../../gateway/gateway.ts';
import { withDetails } from '../../lib/errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { PAID_STATUSES } from '../ledger/payment.state.ts';
import { raiseRefundDue } from '../ledger/refund-due.ts';
import { createRefunds, gatewayCancelsAt } from './refund-payment.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { checkStillOwned, loadSubscription, lockSubscription } from '../subscriptions/audited-change.ts';
import { applyCancel } from '../subscriptions/cancel.ts';
import { WithdrawalNotAvailableError } from '../subscriptions/customer.errors.ts';
import { readSubscription } from '../subscriptions/subscriptions.read.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';

type Tx = Prisma.TransactionClient;

export type WithdrawalRefusal = 'OFF' | 'NOT_PAID' | 'WINDOW_PASSED' | 'USED' | 'CANCELED' | 'NEEDS_ATTENTION';
export type WithdrawalOffer =
  | {
      available: true;
      until: Date;
      refundTotal: number;
      payments: Array<{ id: string; amount: number; approvedAt: Date | null; refundable: 'GATEWAY' | 'EXTERNAL' }>;
    }
  | { available: false; reason: WithdrawalRefusal };

/** The cancel reason of a withdrawal, and the reason its refunds give the gateway (bytes within its limit). */
export const WITHDRAWN = 'WITHDRAWN';
const REFUND_REASON = '청약철회';

interface PaidPayment {
  id: string;
  method: 'CARD' | 'MOBILE';
  status: string;
  amount: number;
  canceledAmount: number;
  approvedAt: Date | null;
  createdAt: Date;
}

/**
 * Whether the customer may withdraw at `now`, and what it refunds: the window (`windowMs`, null when off) counts from
 * the first paid payment's approval; use recorded, a CANCELED subscription, or one waiting for an operator (its single
 * attention reason would be overwritten) close it. Each SUCCEEDED payment is refunded what remains of it, through the
 * gateway where the gateway still cancels it (gatewayCancelsAt), else outside it (EXTERNAL).
 */
export function offerWithdrawal(
  capabilities: Pick<GatewayCapabilities, 'refundWindow'>,
  sub: { status: string; usageStartedAt: Date | null; needsAttention: boolean },
  paid: readonly PaidPayment[],
  now: Date,
  windowMs: number | null,
): WithdrawalOffer {
  if (windowMs === null) return { available: false, reason: 'OFF' };
  if (sub.status === 'CANCELED') return { available: false, reason: 'CANCELED' };
  const approvals = paid.map((p) => (p.approvedAt ?? p.createdAt).getTime());
  if (approvals.length === 0) return { available: false, reason: 'NOT_PAID' };
  if (sub.usageStartedAt !== null) return { available: false, reason: 'USED' };
  const until = new Date(Math.min(...approvals) + windowMs);
  if (now >= until) return { available: false, reason: 'WINDOW_PASSED' };
  if (sub.needsAttention) return { available: false, reason: 'NEEDS_ATTENTION' };
  const payments = paid
    .filter((p) => p.status === 'SUCCEEDED' && p.amount > p.canceledAmount)
    .map((p) => ({
      id: p.id,
      amount: p.amount - p.canceledAmount,
      approvedAt: p.approvedAt,
      refundable: gatewayCancelsAt(capabilities, p, now) ? ('GATEWAY' as const) : ('EXTERNAL' as const),
    }));
  return { available: true, until, refundTotal: payments.reduce((sum, p) => sum + p.amount, 0), payments };
}

/** The subscription's paid payments (PAID_STATUSES), oldest first. */
export function paidPaymentsOf(tx: Tx | ServiceDeps['db'], subscriptionId: string): Promise<PaidPayment[]> {
  return tx.payment.findMany({
    where: { subscriptionId, status: { in: [...PAID_STATUSES] } },
    select: { id: true, method: true, status: true, amount: true, canceledAmount: true, approvedAt: true, createdAt: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

export function createWithdrawal(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db, gateway, clock, config, log } = deps;
  const refunds = createRefunds(deps);

  /** The offer as it stands now (the portal shows the option only when it is available). */
  const withdrawalOffer = async (id: string) =>
    offerWithdrawal(gateway.capabilities, await loadSubscription(db, id), await paidPaymentsOf(db, id), clock.now(), config.portalWithdrawalMs);

  /**
   * Cancels now and raises everything owed (raiseRefundDue), audited, in one transaction under the subscription's row
   * lock (a double submit finds it CANCELED: 409); then sends each gateway refund through the operators' path, one
   * after another, none inside a transaction. A refund that does not succeed (declined, unknown, not sent) stays owed
   * under the attention, and the payment keeps what the refund path gave it (e.g. REFUND_OUTCOME_UNKNOWN).
   */
  async function withdraw(id: string, who: Actor) {
    const now = clock.now();
    const offer = await db.$transaction(async (tx) => {
      await lockSubscription(tx, id);
      const before = await loadSubscription(tx, id);
      checkStillOwned(before, who.actor);
      const found = offerWithdrawal(gateway.capabilities, before, await paidPaymentsOf(tx, id), now, config.portalWithdrawalMs);
      if (!found.available) throw withDetails(new WithdrawalNotAvailableError(`Withdrawal is not available (${found.reason})`), { reason: found.reason });
      await applyCancel(tx, id, { atPeriodEnd: false, reason: WITHDRAWN, now });
      await raiseRefundDue(tx, id);
      const after = await loadSubscription(tx, id);
      await writeAudit(tx, {
        ...who,
        action: 'subscription.withdraw',
        entityType: 'subscription',
        entityId: id,
        before: serializeSubscription(before),
        after: serializeSubscription(after),
      });
      return found;
    });
    let refunded = 0;
    for (const payment of offer.payments.filter((p) => p.refundable === 'GATEWAY')) {
      try {
        await refunds.refund(payment.id, {}, { ...who, reason: REFUND_REASON });
        refunded += payment.amount;
      } catch (error) {
        log.warn({ subscriptionId: id, paymentId: payment.id, code: (error as { code?: string }).code }, 'a withdrawal refund did not succeed: it stays owed');
      }
    }
    const subscription = serializeSubscription(await readSubscription(db, id));
    return { subscription, refunded, refundDue: subscription.refundDue ?? 0 };
  }

  return { withdrawalOffer, withdraw };
}
