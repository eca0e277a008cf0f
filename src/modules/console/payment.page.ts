// The Payment page (/console/payments/:id): the payment's terms and status, its attempts and timeline, and the
// operators' actions on it, each through the admin route's own service (payment-actions.service.ts) under the admin
// route's idempotency scope: Resolve (POST /admin/payments/:id/resolve), Refund (POST /admin/payments/:id/cancel),
// settle a refund's unknown outcome (POST /admin/payments/:id/cancel/resolve), record a refund made outside the gateway
// (POST /admin/payments/:id/refunds/external, record-external-refund.ts).
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { readPayment, serializePayment } from '../payments/payments.service.ts';
import { who } from '../shared/admin-actions.ts';
import { IdParams } from '../shared/schemas.ts';
import { ExternalRefundBody, RefundBody, RefundResolveBody, ResolveBody } from '../payments/payments.schemas.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { actionForm, optional, registerAction, renderPage, wholeNumber, type ActionForm } from './console-page.ts';
import { codeInWords } from './code-words.ts';
import { readTimeline } from './timeline.queries.ts';
import { readDb } from '../shared/read-db.ts';

const OUTCOMES = [
  { value: 'SUCCEEDED', label: 'console.records.actions.resolve.succeeded' },
  { value: 'FAILED', label: 'console.records.actions.resolve.failed' },
] as const;
const PageQuery = Type.Object({ older: Type.Optional(Type.String({ maxLength: 300 })), done: Type.Optional(Type.String({ maxLength: 40 })) });
const Text = Type.Optional(Type.String({ maxLength: 200 }));

export function paymentPage(deps: ConsoleDeps) {
  const { payments, idempotency } = deps;
  const page = (id: string) => `/console/payments/${id}`;
  return async (scope: App) => {
    scope.get('/payments/:id', { schema: { params: IdParams, querystring: PageQuery } }, async (request, reply) => {
      const { id } = request.params;
      const from = await readDb(request);
      const [payment, timeline] = await Promise.all([
        readPayment(from, id).then((row) => serializePayment(row)),
        readTimeline(from, { paymentId: id }, request.query.older),
      ]);
      const refundable = payment.status === 'SUCCEEDED' && payment.canceledAmount < payment.amount && !payment.refundOutcomeUnknown;
      const forms: Record<string, ActionForm> = {};
      const rest = payment.amount - payment.canceledAmount;
      // Resolve: an UNKNOWN payment, or a FAILED one a settlement file shows approved (the service decides; 409 else).
      if (payment.status === 'UNKNOWN' || (payment.status === 'FAILED' && payment.needsAttention)) {
        forms.resolve = actionForm(`${page(id)}/resolve`, 'resolve', [
          { name: 'outcome', label: 'console.records.actions.resolve.outcome', kind: 'choice', choices: OUTCOMES },
          {
            name: 'transactionId',
            label: 'console.records.actions.resolve.transactionId',
            kind: 'text',
            hint: 'console.records.actions.resolve.transactionIdHint',
          },
        ]);
      }
      if (refundable) {
        forms.refund = actionForm(
          `${page(id)}/refund`,
          'refund',
          [
            {
              name: 'amount',
              label: 'console.records.actions.refund.amount',
              kind: 'number',
              hint: { key: 'console.records.actions.refund.amountHint', money: { rest } },
            },
          ],
          { danger: true },
        );
      }
      if (payment.refundOutcomeUnknown) {
        forms.settleRefund = actionForm(`${page(id)}/refund-outcome`, 'settleRefund', [
          { name: 'outcome', label: 'console.records.actions.settleRefund.outcome', kind: 'choice', choices: OUTCOMES },
        ]);
      }
      // Offered when a gateway refund would be (something remains, no refund of unknown outcome); the service decides
      // the rest (a gateway refund in flight: 409; more than what remains: 422), as for the admin route.
      if (refundable) {
        forms.externalRefund = actionForm(
          `${page(id)}/external-refund`,
          'externalRefund',
          [
            {
              name: 'amount',
              label: 'console.records.actions.externalRefund.amount',
              kind: 'number',
              required: true,
              hint: { key: 'console.records.actions.externalRefund.amountHint', money: { rest } },
            },
            {
              name: 'reference',
              label: 'console.records.actions.externalRefund.reference',
              kind: 'text',
              hint: 'console.records.actions.externalRefund.referenceHint',
            },
          ],
          { danger: true },
        );
      }
      return renderPage(request, reply, 'payment', { title: `Payment ${payment.orderId}`, payment, timeline, forms, codeInWords, done: request.query.done });
    });

    registerAction(scope, idempotency, {
      url: '/payments/:id/resolve',
      adminRoute: '/admin/payments/:id/resolve',
      fields: { outcome: Type.String({ maxLength: 20 }), transactionId: Text },
      labels: { outcome: 'Outcome', transactionId: 'Transaction ID' },
      adminBody: ResolveBody,
      toBody: (form) => ({ outcome: form.outcome, transactionId: optional(form.transactionId), reason: form.reason }),
      act: (id, { reason, ...input }, request) => payments.resolve(id, input, who(request, reason)),
      redirect: (id) => `${page(id)}?done=resolve`,
    });
    registerAction(scope, idempotency, {
      url: '/payments/:id/refund',
      adminRoute: '/admin/payments/:id/cancel',
      fields: { amount: Text },
      labels: { amount: 'Amount' },
      adminBody: RefundBody,
      toBody: (form) => ({ amount: wholeNumber(form.amount), reason: form.reason }),
      act: (id, body, request) => payments.refund(id, { amount: body.amount }, who(request, body.reason)),
      redirect: (id) => `${page(id)}?done=refund`,
    });
    registerAction(scope, idempotency, {
      url: '/payments/:id/refund-outcome',
      adminRoute: '/admin/payments/:id/cancel/resolve',
      fields: { outcome: Type.String({ maxLength: 20 }) },
      labels: { outcome: 'Refund outcome' },
      adminBody: RefundResolveBody,
      toBody: (form) => ({ outcome: form.outcome, reason: form.reason }),
      act: (id, body, request) => payments.resolveRefund(id, { outcome: body.outcome }, who(request, body.reason)),
      redirect: (id) => `${page(id)}?done=refund-outcome`,
    });
    registerAction(scope, idempotency, {
      url: '/payments/:id/external-refund',
      adminRoute: '/admin/payments/:id/refunds/external',
      adminStatus: 201,
      fields: { amount: Text, reference: Text },
      labels: { amount: 'Amount', reference: 'Reference' },
      adminBody: ExternalRefundBody,
      toBody: (form) => ({ amount: wholeNumber(form.amount), reference: optional(form.reference), reason: form.reason }),
      act: (id, body, request) => payments.recordExternalRefund(id, { amount: body.amount, reference: body.reference }, who(request, body.reason)),
      redirect: (id) => `${page(id)}?done=external-refund`,
    });
  };
}
