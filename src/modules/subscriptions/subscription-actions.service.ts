// Operators' actions on subscriptions (DESIGN.md §5 admin routes): list, charge now (through the charging engine,
// every rule of §3), pause, resume, cancel and change terms. Each change and its audit event share a transaction.
import type { Config } from '../../config.ts';
import type { Db } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { NotFoundError, StateConflictError, withDetails } from '../../lib/errors.ts';
import { validateTerms } from '../checkout/terms.ts';
import type { ChargeService } from '../payments/charge.service.ts';
import { scheduleAfterResume } from '../payments/charge.rules.ts';
import { serializePayment } from '../payments/payments.service.ts';
import { applyCancel, serializeSubscription, WITH_KEY } from './subscriptions.service.ts';
import { pageSubscriptions, readSubscription, type SubscriptionFilter } from './subscriptions.read.ts';
import { applyPriceChange } from './lifecycle.service.ts';
import { transitionSubscription } from './subscription.state.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RULE_ERRORS } from '../payments/payment.errors.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';

type Tx = Prisma.TransactionClient;

export function createSubscriptionActions(deps: { db: Db; clock: Clock; config: Config; charges: ChargeService }) {
  const { db, clock, config, charges } = deps;
  const zone = config.timezone;

  async function load(tx: Tx | Db, id: string) {
    const row = await tx.subscription.findUnique({ where: { id }, include: WITH_KEY });
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }

  async function listSubscriptions(filter: SubscriptionFilter) {
    const page = await pageSubscriptions(db, filter);
    return { items: page.items.map(serializeSubscription), nextCursor: page.nextCursor };
  }

  /** One change: load, apply, audit with before and after, in one transaction. */
  async function change(id: string, who: Actor, action: string, apply: (tx: Tx, row: Awaited<ReturnType<typeof load>>) => Promise<void>) {
    return db.$transaction(async (tx) => {
      const before = await load(tx, id);
      await apply(tx, before);
      const after = await load(tx, id);
      await writeAudit(tx, {
        ...who,
        action,
        entityType: 'subscription',
        entityId: id,
        before: serializeSubscription(before),
        after: serializeSubscription(after),
      });
      return serializeSubscription(after);
    });
  }

  const pause = (id: string, who: Actor) =>
    change(id, who, 'subscription.pause', async (tx) => {
      await transitionSubscription(tx, id, 'pause', { pausedAt: clock.now(), nextChargeAt: null });
    });

  /** Resume: the schedule starts again where the scheduling rules say (scheduleAfterResume), never back-charged. */
  const resume = (id: string, who: Actor) =>
    change(id, who, 'subscription.resume', async (tx, row) => {
      await transitionSubscription(tx, id, 'resume', { ...scheduleAfterResume(row, clock.now(), zone), pausedAt: null });
    });

  const cancel = (id: string, options: { atPeriodEnd: boolean }, who: Actor) =>
    change(id, who, options.atPeriodEnd ? 'subscription.cancel_at_period_end' : 'subscription.cancel', (tx) =>
      applyCancel(tx, id, { atPeriodEnd: options.atPeriodEnd, reason: 'CANCELED_BY_OPERATOR', now: clock.now() }),
    );

  /**
   * New terms from the next cycle: a payment already started keeps its amount. The amount follows the price-change
   * rule (applyPriceChange: an increase waits for the customer's consent; MOBILE only through a new payment method).
   */
  const update = (id: string, input: { amount?: number; orderName?: string }, who: Actor) =>
    change(id, who, 'subscription.update', async (tx, row) => {
      if (row.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription cannot change');
      if (input.amount !== undefined) await applyPriceChange(tx, row, input.amount, { config, now: clock.now() });
      if (input.orderName !== undefined) {
        validateTerms({ method: row.method, amount: row.amount, orderName: input.orderName, itemCode: row.itemCode ?? undefined }, config, { recurring: true });
        await tx.subscription.update({ where: { id }, data: { orderName: input.orderName } });
      }
    });

  /** Charge now through the engine; answers the payment, or the refusal / gateway outcome as a coded error. */
  async function charge(id: string, who: Actor) {
    await load(db, id);
    const report = await charges.chargeSubscription(id, {
      onPrepared: async (tx, info) => {
        await writeAudit(tx, { ...who, action: 'subscription.charge', entityType: 'subscription', entityId: id, after: info });
      },
    });
    const details = { paymentId: report.paymentId, subscriptionId: id };
    switch (report.outcome) {
      case 'SUCCEEDED': {
        const payment = await db.payment.findUniqueOrThrow({ where: { id: report.paymentId! }, include: { attempts: { orderBy: { attemptNumber: 'asc' } } } });
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

  return {
    listSubscriptions,
    getSubscription: async (id: string) => serializeSubscription(await readSubscription(db, id)),
    pause,
    resume,
    cancel,
    update,
    charge,
    explain,
  };
}

export type SubscriptionActions = ReturnType<typeof createSubscriptionActions>;
