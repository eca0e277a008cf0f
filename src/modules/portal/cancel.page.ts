// Leaving (docs/portal.md "Customer portal"): "구독 해지" opens ONE confirmation page that says what happens and
// when, takes an optional reason and "해지 확인"; no retention offer, no second confirmation. The same page offers
// withdrawal (청약철회, a full refund) while the service says it is available, and says why not when a paid
// subscription cannot be withdrawn. "해지 예약 취소" undoes a cancellation at period end. Each action runs through the
// portal-actions service (its rules, its audit as customer:<userId>).
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { speech } from '../i18n/messages.ts';
import type { PortalDeps, Subscription, WithdrawalOffer } from './portal-deps.ts';
import { ownedSubscriptionId, PortalIdParams, portalForm, registerPortalAction, renderPortal, renderPortalError } from './portal-page.ts';

/** What the confirmation says happens: at the period's end, at the trial's end, or now (PAST_DUE, PAUSED). */
function whatHappens(s: Subscription, t: ReturnType<typeof speech>): string {
  if (s.status === 'ACTIVE') return t.t('portal.cancel.active', { date: t.date(s.currentPeriodEnd) });
  if (s.status === 'TRIALING') return t.t('portal.cancel.trialing', { date: t.date(s.trialEnd ?? s.currentPeriodEnd) });
  return t.t('portal.cancel.now');
}

/** Why a paid subscription cannot be withdrawn, in a sentence; nothing when it was never paid. */
function withdrawalRefusal(offer: WithdrawalOffer, t: ReturnType<typeof speech>): string | undefined {
  if (offer.available || offer.reason === 'NOT_PAID') return undefined;
  return t.t(`portal.cancel.withdrawal${offer.reason}`);
}

export function cancelPage(deps: PortalDeps) {
  const { actions } = deps;
  const { db } = deps.service;
  const actionDeps = { db, idempotency: deps.idempotency };
  const overview = (done: string) => () => `/portal?done=${done}`;
  return async function cancel(scope: App) {
    scope.get('/subscriptions/:id/cancel', { schema: { params: PortalIdParams } }, async function confirmCancel(request, reply) {
      const session = request.portal!;
      const say = speech(session.locale);
      const id = await ownedSubscriptionId(db, session, request.params.id);
      const subscription = id ? (await actions.subscriptionsOf(session.userId)).find((s) => s.id === id) : undefined;
      if (!id || !subscription) return renderPortalError(request, reply, 404, 'NOT_FOUND');
      const page = `/portal/subscriptions/${id}`;
      const live = subscription.status !== 'CANCELED';
      const offer = await actions.withdrawalOffer(id);
      return renderPortal(request, reply, 'cancel', {
        title: say.t('portal.cancel.heading'),
        subscription,
        whatHappens: live && !subscription.cancelAtPeriodEnd ? whatHappens(subscription, say) : undefined,
        confirm:
          live && !subscription.cancelAtPeriodEnd
            ? portalForm(`${page}/cancel`, say.t('portal.cancel.confirm'), {
                tone: 'danger',
                field: { name: 'reason', label: say.t('portal.cancel.reason'), hint: say.t('portal.cancel.reasonHint') },
              })
            : undefined,
        keep: live && subscription.cancelAtPeriodEnd ? portalForm(`${page}/keep`, say.t('portal.overview.keep')) : undefined,
        offer,
        withdraw: offer.available ? portalForm(`${page}/withdraw`, say.t('portal.cancel.withdraw'), { tone: 'danger' }) : undefined,
        withdrawalRefusal: withdrawalRefusal(offer, say),
      });
    });

    registerPortalAction(scope, actionDeps, {
      name: 'cancel',
      fields: { reason: Type.Optional(Type.String({ maxLength: 500 })) },
      act: (who, id, form) => actions.cancel(who, id, { reason: form.reason?.trim() || undefined }),
      done: overview('canceled'),
    });
    registerPortalAction(scope, actionDeps, { name: 'keep', act: (who, id) => actions.keep(who, id), done: overview('kept') });
    registerPortalAction(scope, actionDeps, {
      name: 'withdraw',
      act: (who, id) => actions.withdraw(who, id),
      // What the gateway did not refund (a MOBILE payment past its Korean month, a refund not sent or of unknown
      // outcome) the merchant owes: the notice says so rather than "refunded".
      done: (_id, result) => overview((result as { refundDue?: number } | null)?.refundDue ? 'withdrawnRefundDue' : 'withdrawn')(),
    });
  };
}
