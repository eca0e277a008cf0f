// An operator's charge of one subscription (POST /admin/subscriptions/:id/charge, and its dry run): through the
// charging engine with every rule the scheduler meets; the engine's report becomes the payment or a coded error.
import type { Db } from '../../db/prisma.ts';
import { NotFoundError, StateConflictError, withDetails } from '../../lib/errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RULE_ERRORS } from '../ledger/payment.errors.ts';
import type { ChargeService } from './charge.service.ts';
import { PAYMENT_DETAIL, serializePayment } from './payments.service.ts';

export function createChargeNow(deps: { db: Db; charges: ChargeService }) {
  const { db, charges } = deps;

  /** Charge now through the engine; answers the payment, or the refusal / gateway outcome as a coded error. */
  async function charge(id: string, who: Actor) {
    if (!(await db.subscription.findUnique({ where: { id }, select: { id: true } }))) throw new NotFoundError('Subscription');
    const report = await charges.chargeSubscription(id, {
      onPrepared: async (tx, info) => {
        await writeAudit(tx, { ...who, action: 'subscription.charge', entityType: 'subscription', entityId: id, after: info });
      },
    });
    const details = { paymentId: report.paymentId, subscriptionId: id };
    switch (report.outcome) {
      case 'SUCCEEDED': {
        const payment = await db.payment.findUniqueOrThrow({ where: { id: report.paymentId! }, include: PAYMENT_DETAIL });
        return serializePayment(payment);
      }
      case 'DECLINED':
        throw withDetails(new GatewayDeclinedError(report.gatewayCode ?? 'declined'), { ...details, gatewayCode: report.gatewayCode });
      case 'UNKNOWN': {
        // Also when the answer could not be recorded: the operator learns the payment's state, never a bare 500.
        const payment = report.paymentId ? await db.payment.findUnique({ where: { id: report.paymentId }, select: { status: true } }) : null;
        throw withDetails(new PaymentOutcomeUnknownError(report.message ?? report.code ?? 'no answer'), {
          ...details,
          paymentStatus: payment?.status,
          reason: report.code,
        });
      }
      case 'SKIPPED':
        if (report.code === 'NOT_SENT') throw withDetails(new GatewayUnavailableError(report.message ?? 'not sent'), details);
        if (report.code === 'LEASE_LOST') throw new RULE_ERRORS.CHARGE_IN_PROGRESS('The subscription is being charged right now');
        if (report.code === 'CANCELED_AT_PERIOD_END')
          throw new RULE_ERRORS.CANCEL_AT_PERIOD_END('The period ended and the subscription was cancelled as asked');
        if (report.code && report.code in RULE_ERRORS)
          throw withDetails(new RULE_ERRORS[report.code as keyof typeof RULE_ERRORS](report.message ?? report.code), details);
        throw new StateConflictError(report.message ?? 'The charge could not be made');
    }
  }

  async function explain(id: string) {
    const result = await charges.explainSubscriptionCharge(id);
    if (!result) throw new NotFoundError('Subscription');
    const { plan, rules } = result;
    return {
      dryRun: true as const,
      allowed: plan.action === 'CHARGE',
      ...(plan.action === 'CHARGE' ? { cycle: plan.cycle, amount: plan.amount, dueAt: plan.dueAt.toISOString() } : {}),
      ...(plan.action === 'REFUSE' ? { refusal: { code: plan.code, message: plan.message } } : {}),
      ...(plan.action === 'CANCEL_AT_PERIOD_END'
        ? { refusal: { code: 'CANCEL_AT_PERIOD_END', message: 'The period ended and the subscription is cancelled at its end' } }
        : {}),
      rules,
    };
  }

  return { charge, explain };
}

export type ChargeNow = ReturnType<typeof createChargeNow>;
