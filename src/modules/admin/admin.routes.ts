// Admin routes (DESIGN.md §5 "Admin routes"): ADMIN_TOKENS only (an API key is 401 here). Every POST/PATCH honours
// Idempotency-Key; the routes that move money (charge, refund) require it. Every action carries a reason that
// goes to the audit trail with who acted.
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app-types.ts';
import { isSimulated } from '../../lib/clock.ts';
import { codesByStatus, defineError, IdempotencyKeyRequiredError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { actorOf } from '../../plugins/auth.ts';
import { IdParams } from '../shared/schemas.ts';
import type { ChargeService } from '../payments/charge.service.ts';
import { PaymentList, PaymentResponse } from '../payments/payments.schemas.ts';
import { SubscriptionList, SubscriptionResponse } from '../subscriptions/subscriptions.schemas.ts';
import {
  AdminCancelBody,
  AdminPaymentsQuery,
  AdminSubscriptionsQuery,
  ChargeDryRun,
  ChargeQuery,
  ClockResponse,
  PassReport,
  RunPassBody,
  PatchSubscriptionBody,
  ReasonBody,
  RefundBody,
  RefundResolveBody,
  ResolveBody,
  SetClockBody,
} from './admin.schemas.ts';
import { IdempotencyInProgressError, IdempotencyKeyReusedError, idempotencyHeaders, type Idempotency } from '../idempotency/idempotency.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RefundRefusedError, RULE_ERRORS } from '../ledger/payment.errors.ts';
import { writeAudit, type AuditInput } from '../audit/audit.ts';
import { Type, type Static, type TSchema } from 'typebox';
import type { PaymentActions } from '../payments/payment-actions.service.ts';
import type { SubscriptionActions } from '../subscriptions/subscription-actions.service.ts';
import type { ChargeNow } from '../payments/charge-now.ts';

export const ClockNotSimulatedError = defineError('CLOCK_NOT_SIMULATED', 'The clock can be set only with CLOCK=simulated', 409);

export interface AdminDeps {
  charges: ChargeService;
  chargeNow: ChargeNow;
  subscriptions: SubscriptionActions;
  payments: PaymentActions;
  idempotency: Idempotency;
}

const IdempotencyHeader = idempotencyHeaders(false);
const RequiredIdempotencyHeader = idempotencyHeaders(true);

const IDEMPOTENT = [IdempotencyKeyReusedError, IdempotencyInProgressError];
const GATEWAY_OUTCOMES = [GatewayDeclinedError, PaymentOutcomeUnknownError, GatewayUnavailableError];
const ACTION_ERRORS = codesByStatus(StateConflictError, ...IDEMPOTENT);
const CHARGE_ERRORS = codesByStatus(IdempotencyKeyRequiredError, StateConflictError, ...IDEMPOTENT, ...Object.values(RULE_ERRORS), ...GATEWAY_OUTCOMES);
const REFUND_ERRORS = codesByStatus(IdempotencyKeyRequiredError, StateConflictError, ...IDEMPOTENT, ...Object.values(RefundRefusedError), ...GATEWAY_OUTCOMES);

export function adminRoutes(deps: AdminDeps) {
  const { charges, chargeNow, subscriptions, payments, idempotency } = deps;
  return async (app: App) => {
    app.addHook('onRequest', app.requireAdminToken);
    const { clock } = app;
    const who = (request: FastifyRequest, reason: string) => ({ actor: actorOf(request), reason, requestId: request.id });
    const audit = (input: AuditInput) => app.db.$transaction((tx) => writeAudit(tx, input));
    const tags = ['admin'];

    // Works with SCHEDULER_ENABLED=false too: operators and tests drive passes by hand.
    app.post(
      '/scheduler/run',
      {
        schema: {
          operationId: 'runSchedulerPass',
          summary: 'Run one charging pass now',
          tags,
          headers: IdempotencyHeader,
          body: Type.Optional(RunPassBody),
          response: { 200: PassReport },
          errors: codesByStatus(...IDEMPOTENT),
        },
      },
      async (request, reply) =>
        idempotency.run(request, reply, async () => {
          const report = await charges.runPass();
          await audit({
            ...who(request, request.body?.reason ?? '(none given)'),
            action: 'scheduler.run',
            entityType: 'scheduler',
            entityId: 'charging-pass',
            after: report,
          });
          return { statusCode: 200, body: report };
        }),
    );

    const clockState = () => ({ now: clock.now().toISOString(), kind: clock.kind, frozen: isSimulated(clock) ? clock.frozen : false });
    app.get('/clock', { schema: { operationId: 'getClock', summary: 'Read the service clock', tags, response: { 200: ClockResponse } } }, async () =>
      clockState(),
    );
    app.put(
      '/clock',
      {
        schema: {
          operationId: 'setClock',
          summary: 'Set the simulated clock (CLOCK=simulated only)',
          tags,
          body: SetClockBody,
          response: { 200: ClockResponse },
          errors: codesByStatus(ClockNotSimulatedError),
        },
      },
      async (request) => {
        if (!isSimulated(clock)) throw new ClockNotSimulatedError();
        const instant = new Date(request.body.now);
        if (Number.isNaN(instant.getTime())) throw new ValidationError(`now: "${request.body.now}" is not an instant`);
        const before = clockState();
        clock.set(instant);
        request.log.info({ now: instant.toISOString() }, 'simulated clock set');
        await audit({
          ...who(request, request.body.reason ?? '(none given)'),
          action: 'clock.set',
          entityType: 'clock',
          entityId: 'simulated',
          before,
          after: clockState(),
        });
        return clockState();
      },
    );

    app.get(
      '/subscriptions',
      {
        schema: {
          operationId: 'adminListSubscriptions',
          summary: 'List subscriptions (filters include needsAttention)',
          tags,
          querystring: AdminSubscriptionsQuery,
          response: { 200: SubscriptionList },
        },
      },
      async (request) => subscriptions.listSubscriptions(request.query),
    );
    app.get(
      '/subscriptions/:id',
      { schema: { operationId: 'adminGetSubscription', summary: 'Get a subscription', tags, params: IdParams, response: { 200: SubscriptionResponse } } },
      async (request) => subscriptions.getSubscription(request.params.id),
    );

    app.post(
      '/subscriptions/:id/charge',
      {
        schema: {
          operationId: 'chargeSubscription',
          summary: 'Charge a due or past-due subscription now (dryRun: say which rules pass, charge nothing)',
          tags,
          params: IdParams,
          querystring: ChargeQuery,
          headers: RequiredIdempotencyHeader,
          body: ReasonBody,
          response: { 200: ChargeDryRun, 201: PaymentResponse },
          errors: CHARGE_ERRORS,
        },
      },
      async (request, reply) => {
        if (request.query.dryRun) return chargeNow.explain(request.params.id);
        return idempotency.run(request, reply, async () => ({
          statusCode: 201,
          body: await chargeNow.charge(request.params.id, who(request, request.body.reason)),
        }));
      },
    );

    /**
     * An operator's action on one subscription or payment: the id in the path, a body with the reason for the audit
     * trail, an Idempotency-Key (required where money moves), answered 200 with `response`.
     */
    const action = <B extends TSchema>(
      method: 'POST' | 'PATCH',
      url: string,
      doc: { operationId: string; summary: string; body: B; response: TSchema; errors: Record<number, readonly string[]>; moneyMoves?: boolean },
      act: (id: string, body: Static<B>, request: FastifyRequest) => Promise<unknown>,
    ) =>
      app.route({
        method,
        url,
        schema: {
          operationId: doc.operationId,
          summary: doc.summary,
          tags,
          params: IdParams,
          headers: doc.moneyMoves ? RequiredIdempotencyHeader : IdempotencyHeader,
          body: doc.body,
          response: { 200: doc.response },
          errors: doc.errors,
        },
        handler: async (request, reply) =>
          idempotency.run(request, reply, async () => ({
            statusCode: 200,
            body: await act((request.params as { id: string }).id, request.body as Static<B>, request),
          })),
      });

    for (const verb of ['pause', 'resume'] as const) {
      action(
        'POST',
        `/subscriptions/:id/${verb}`,
        {
          operationId: `${verb}Subscription`,
          summary: verb === 'pause' ? 'Pause a subscription: nothing is charged until it is resumed' : 'Resume a paused subscription',
          body: ReasonBody,
          response: SubscriptionResponse,
          errors: ACTION_ERRORS,
        },
        (id, body, request) => subscriptions[verb](id, who(request, body.reason)),
      );
    }

    action(
      'POST',
      '/subscriptions/:id/cancel',
      {
        operationId: 'adminCancelSubscription',
        summary: 'Cancel a subscription now or at the end of its period',
        body: AdminCancelBody,
        response: SubscriptionResponse,
        errors: ACTION_ERRORS,
      },
      (id, body, request) => subscriptions.cancel(id, { atPeriodEnd: body.atPeriodEnd ?? false }, who(request, body.reason)),
    );

    action(
      'PATCH',
      '/subscriptions/:id',
      {
        operationId: 'updateSubscription',
        summary: 'Change a subscription’s amount or order name',
        body: PatchSubscriptionBody,
        response: SubscriptionResponse,
        errors: ACTION_ERRORS,
      },
      (id, { reason, amount, orderName }, request) => subscriptions.update(id, { amount, orderName }, who(request, reason)),
    );

    app.get(
      '/payments',
      {
        schema: {
          operationId: 'adminListPayments',
          summary: 'List payments (filters include status)',
          tags,
          querystring: AdminPaymentsQuery,
          response: { 200: PaymentList },
        },
      },
      async (request) => payments.listPayments(request.query),
    );
    app.get(
      '/payments/:id',
      { schema: { operationId: 'adminGetPayment', summary: 'Get a payment with its attempts', tags, params: IdParams, response: { 200: PaymentResponse } } },
      async (request) => payments.getPayment(request.params.id),
    );

    action(
      'POST',
      '/payments/:id/resolve',
      {
        operationId: 'resolvePayment',
        summary: 'Settle an UNKNOWN payment as SUCCEEDED (with the gateway’s transactionId) or FAILED',
        body: ResolveBody,
        response: PaymentResponse,
        errors: ACTION_ERRORS,
      },
      (id, { reason, ...input }, request) => payments.resolve(id, input, who(request, reason)),
    );

    action(
      'POST',
      '/payments/:id/cancel',
      {
        operationId: 'refundPayment',
        summary: 'Refund a payment in full or in part through the gateway’s cancellation',
        body: RefundBody,
        response: PaymentResponse,
        errors: REFUND_ERRORS,
        moneyMoves: true,
      },
      (id, body, request) => payments.refund(id, { amount: body.amount }, who(request, body.reason)),
    );

    action(
      'POST',
      '/payments/:id/cancel/resolve',
      {
        operationId: 'resolveRefund',
        summary: 'Settle a refund whose outcome is unknown as SUCCEEDED or FAILED, after asking the gateway',
        body: RefundResolveBody,
        response: PaymentResponse,
        errors: ACTION_ERRORS,
      },
      (id, body, request) => payments.resolveRefund(id, { outcome: body.outcome }, who(request, body.reason)),
    );
  };
}
