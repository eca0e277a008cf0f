// The Subscription page (/console/subscriptions/:id): terms and status, the billing key's masked description, its
// latest payments, the timeline, and the operators' actions, each through the admin route's own service under the
// admin route's idempotency scope: Charge now (POST /admin/subscriptions/:id/charge, charge-now.ts), Pause and Resume
// (POST /admin/subscriptions/:id/pause|resume, pause-resume.ts), Cancel subscription (POST /admin/subscriptions/:id/cancel,
// cancel.ts). A PAST_DUE subscription says why and when it is tried again (past-due.ts).
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { who } from '../shared/admin-actions.ts';
import { IdParams, ReasonBody } from '../shared/schemas.ts';
import { createCancel } from '../subscriptions/cancel.ts';
import { createPauseResume } from '../subscriptions/pause-resume.ts';
import { readSubscription } from '../subscriptions/subscriptions.read.ts';
import { AdminCancelBody } from '../subscriptions/subscriptions.schemas.ts';
import { serializeSubscription } from '../subscriptions/subscriptions.shape.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { actionForm, registerAction, renderPage, type ActionForm } from './console-page.ts';
import { codeInWords } from './code-words.ts';
import { erasureOf } from './customer.queries.ts';
import { pastDueFacts } from './past-due.ts';
import { readTimeline } from './timeline.queries.ts';
import { readDb } from '../shared/read-db.ts';

/** The latest payments shown; the Payments list (filtered by subscription) pages through all of them. */
const PAYMENTS_SHOWN = 36;
const PageQuery = Type.Object({ older: Type.Optional(Type.String({ maxLength: 300 })), done: Type.Optional(Type.String({ maxLength: 40 })) });
const WHEN = [
  { value: 'now', label: 'console.records.actions.cancel.now' },
  { value: 'periodEnd', label: 'console.records.actions.cancel.periodEnd' },
] as const;

export function subscriptionPage(deps: ConsoleDeps) {
  const { chargeNow, idempotency } = deps;
  const subscriptions = { ...createPauseResume({ ...deps.service, timezone: deps.service.config.timezone }), ...createCancel(deps.service) };
  const page = (id: string) => `/console/subscriptions/${id}`;
  return async (scope: App) => {
    scope.get('/subscriptions/:id', { schema: { params: IdParams, querystring: PageQuery } }, async (request, reply) => {
      const { id } = request.params;
      const db = await readDb(request);
      const [row, payments, timeline] = await Promise.all([
        readSubscription(db, id),
        db.payment.findMany({
          where: { subscriptionId: id },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: PAYMENTS_SHOWN + 1,
          select: { id: true, cycle: true, kind: true, gateway: true, status: true, amount: true, canceledAmount: true, orderId: true, createdAt: true },
        }),
        readTimeline(db, { subscriptionId: id }, request.query.older),
      ]);
      const subscription = serializeSubscription(row);
      const live = subscription.status !== 'CANCELED';
      const forms: Record<string, ActionForm> = {};
      if (live && subscription.status !== 'PAUSED') forms.charge = actionForm(`${page(id)}/charge`, 'charge', [], { danger: true });
      if (live && subscription.status !== 'PAUSED') forms.pause = actionForm(`${page(id)}/pause`, 'pause');
      if (subscription.status === 'PAUSED') forms.resume = actionForm(`${page(id)}/resume`, 'resume');
      if (live) {
        const when = { name: 'when', label: 'console.records.actions.cancel.when', kind: 'choice', choices: WHEN } as const;
        forms.cancel = actionForm(`${page(id)}/cancel`, 'cancel', [when], { danger: true });
      }
      return renderPage(request, reply, 'subscription', {
        title: `Subscription ${subscription.orderName}`,
        subscription,
        payments: payments.slice(0, PAYMENTS_SHOWN),
        morePayments: payments.length > PAYMENTS_SHOWN,
        timeline,
        pastDue: await pastDueFacts(db, deps.service.config, subscription),
        // An erased customer's subscription carries their pseudonym: nothing is left to erase.
        canErase: (await erasureOf(db, subscription.userId)) === null,
        forms,
        codeInWords,
        done: request.query.done,
      });
    });

    registerAction(scope, idempotency, {
      url: '/subscriptions/:id/charge',
      adminRoute: '/admin/subscriptions/:id/charge',
      adminStatus: 201,
      fields: {},
      labels: {},
      adminBody: ReasonBody,
      toBody: (form) => ({ reason: form.reason }),
      act: (id, body, request) => chargeNow.charge(id, who(request, body.reason)),
      redirect: (id) => `${page(id)}?done=charge`,
    });
    for (const verb of ['pause', 'resume'] as const) {
      registerAction(scope, idempotency, {
        url: `/subscriptions/:id/${verb}`,
        adminRoute: `/admin/subscriptions/:id/${verb}`,
        fields: {},
        labels: {},
        adminBody: ReasonBody,
        toBody: (form) => ({ reason: form.reason }),
        act: (id, body, request) => subscriptions[verb](id, who(request, body.reason)),
        redirect: (id) => `${page(id)}?done=${verb}`,
      });
    }
    registerAction(scope, idempotency, {
      url: '/subscriptions/:id/cancel',
      adminRoute: '/admin/subscriptions/:id/cancel',
      fields: { when: Type.Optional(Type.String({ maxLength: 20 })) },
      labels: { atPeriodEnd: 'When' },
      adminBody: AdminCancelBody,
      toBody: (form) => ({ reason: form.reason, atPeriodEnd: form.when === 'periodEnd' }),
      act: (id, body, request) => subscriptions.cancelForOperator(id, { atPeriodEnd: body.atPeriodEnd ?? false }, who(request, body.reason)),
      redirect: (id) => `${page(id)}?done=cancel`,
    });
  };
}
