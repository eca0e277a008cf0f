// The admin routes of payments (docs/operating.md "Admin routes"): list, read, charge a subscription now (and its dry
// run), resolve an UNKNOWN payment, refund, settle a refund of unknown outcome, and record a refund made outside the
// gateway; each with a reason for the audit trail. Charge and refunds move money, so their Idempotency-Key is required.
import type { App } from '../../app-types.ts';
import { codesByStatus, IdempotencyKeyRequiredError, StateConflictError } from '../../lib/errors.ts';
import type { Idempotency } from '../idempotency/idempotency.ts';
import { GatewayDeclinedError, GatewayUnavailableError, PaymentOutcomeUnknownError, RefundRefusedError, RULE_ERRORS } from '../ledger/payment.errors.ts';
import { ACTION_ERRORS, adminActions, IDEMPOTENT, RequiredIdempotencyHeader, who } from '../shared/admin-actions.ts';
import { readDb } from '../shared/read-db.ts';
import { IdParams, ReasonBody } from '../shared/schemas.ts';
import { TAGS } from '../../lib/api-document.ts';
import type { ChargeNow } from './charge-now.ts';
import type { PaymentActions } from './payment-actions.service.ts';
import {
  AdminPaymentsQuery,
  ChargeDryRun,
  ChargeQuery,
  ExternalRefundBody,
  PaymentList,
  PaymentResponse,
  RefundBody,
  RefundResolveBody,
  ResolveBody,
} from './payments.schemas.ts';

const GATEWAY_OUTCOMES = [GatewayDeclinedError, PaymentOutcomeUnknownError, GatewayUnavailableError];
const CHARGE_ERRORS = codesByStatus(IdempotencyKeyRequiredError, StateConflictError, ...IDEMPOTENT, ...Object.values(RULE_ERRORS), ...GATEWAY_OUTCOMES);
const EXTERNAL_REFUND_ERRORS = codesByStatus(
  IdempotencyKeyRequiredError,
  StateConflictError,
  ...IDEMPOTENT,
  RefundRefusedError.AMOUNT_EXCEEDS_REMAINING,
  RefundRefusedError.PAYMENT_NOT_REFUNDABLE,
);
const REFUND_ERRORS = codesByStatus(IdempotencyKeyRequiredError, StateConflictError, ...IDEMPOTENT, ...Object.values(RefundRefusedError), ...GATEWAY_OUTCOMES);

interface PaymentsAdminDeps {
  chargeNow: ChargeNow;
  payments: PaymentActions;
  idempotency: Idempotency;
}

export function paymentsAdminRoutes(deps: PaymentsAdminDeps) {
  return async (app: App) => {
    const tags = [TAGS.adminPayments.name];
    registerChargeNow(app, deps, tags);
    registerPaymentReads(app, deps.payments, tags);
    registerOutcomeActions(adminActions(app, deps.idempotency, tags), deps.payments);
    registerExternalRefund(app, deps, tags);
  };
}

/** POST /subscriptions/:id/charge: charge now, or (dryRun) say which rules pass. */
function registerChargeNow(app: App, { chargeNow, idempotency }: PaymentsAdminDeps, tags: string[]) {
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
        responseDescriptions: { 200: 'dryRun=true: what a charge now would do, rule by rule; nothing is charged', 201: 'The payment, SUCCEEDED' },
        errors: CHARGE_ERRORS,
      },
      links: { 201: { getPayment: { operationId: 'adminGetPayment', parameters: { id: '$response.body#/id' }, description: 'The payment' } } },
    },
    async (request, reply) => {
      if (request.query.dryRun) return chargeNow.explain(request.params.id);
      return idempotency.run(request, reply, async () => ({
        statusCode: 201,
        body: await chargeNow.charge(request.params.id, who(request, request.body.reason)),
      }));
    },
  );
}

/** GET /payments and /payments/:id. */
function registerPaymentReads(app: App, payments: PaymentActions, tags: string[]) {
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
    async (request) => payments.listPayments(request.query, await readDb(request)),
  );
  app.get(
    '/payments/:id',
    {
      schema: {
        operationId: 'adminGetPayment',
        summary: 'Get a payment with its attempts',
        tags,
        params: IdParams,
        response: { 200: PaymentResponse },
        responseDescriptions: { 200: 'The payment with its attempts and refunds' },
      },
      links: {
        200: {
          refundPayment: {
            operationId: 'refundPayment',
            parameters: { id: '$response.body#/id' },
            description: 'Refund it; its refunds are listed in `refunds`',
          },
        },
      },
    },
    async (request) => payments.getPayment(request.params.id),
  );
}

/** The operator's actions on a payment's outcome: resolve an UNKNOWN payment, refund, settle a refund of unknown outcome. */
function registerOutcomeActions(action: ReturnType<typeof adminActions>, payments: PaymentActions) {
  action(
    'POST',
    '/payments/:id/resolve',
    {
      operationId: 'resolvePayment',
      summary: 'Settle an UNKNOWN payment as SUCCEEDED (with the gateway’s transactionId) or FAILED',
      body: ResolveBody,
      response: PaymentResponse,
      answer: 'The payment, SUCCEEDED or FAILED (and its subscription moved on accordingly)',
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
      answer: 'The payment with the refund in `refunds` (CANCELED once refunded in full)',
      errors: REFUND_ERRORS,
      moneyMoves: true,
      links: {
        resolveRefund: {
          operationId: 'resolveRefund',
          parameters: { id: '$response.body#/id' },
          description: 'Settle the refund when its outcome is unknown (refundOutcomeUnknown)',
        },
      },
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
      answer: 'The payment with the refund settled',
      errors: ACTION_ERRORS,
    },
    (id, body, request) => payments.resolveRefund(id, { outcome: body.outcome }, who(request, body.reason)),
  );
}

/** POST /payments/:id/refunds/external: a refund made outside the gateway. */
function registerExternalRefund(app: App, { payments, idempotency }: PaymentsAdminDeps, tags: string[]) {
  app.post(
    '/payments/:id/refunds/external',
    {
      schema: {
        operationId: 'recordExternalRefund',
        summary: 'Record a refund made outside the gateway (e.g. a bank transfer for a MOBILE payment after its month); 201 with the payment',
        tags,
        params: IdParams,
        headers: RequiredIdempotencyHeader,
        body: ExternalRefundBody,
        response: { 201: PaymentResponse },
        responseDescriptions: { 201: 'The payment with the refund in `refunds` (channel EXTERNAL)' },
        errors: EXTERNAL_REFUND_ERRORS,
      },
    },
    async (request, reply) =>
      idempotency.run(request, reply, async () => ({
        statusCode: 201,
        body: await payments.recordExternalRefund(
          request.params.id,
          { amount: request.body.amount, reference: request.body.reference },
          who(request, request.body.reason),
        ),
      })),
  );
}
