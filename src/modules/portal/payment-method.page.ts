// "결제수단 변경" / "Change payment method" (docs/portal.md "Customer portal"): starts the payment-method
// registration of POST /api/v1/subscriptions/:id/payment-method (the same service and rules: a MOBILE one only while
// a cycle is owed, else NOT_DUE, shown as a sentence) and sends the browser to the gateway's window; the window's
// return lands on the result page here, which reads the registration itself (never the query string's word for it).
// A gateway whose window has no address (the real Danal's opens through its script on the merchant's page) is refused
// with PAYMENT_METHOD_CHANGE_NOT_OFFERED, a sentence saying the merchant's own site offers the change.
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { speech } from '../i18n/messages.ts';
import { createPaymentMethodRegistration } from '../registrations/replace-payment-method.ts';
import { windowHasUrl } from '../shared/terms.ts';
import { PaymentMethodChangeNotOfferedError } from '../subscriptions/customer.errors.ts';
import type { PortalDeps } from './portal-deps.ts';
import { ownedSubscriptionId, PortalIdParams, registerPortalAction, renderPortal, renderPortalError } from './portal-page.ts';

const ResultQuery = Type.Object({ registrationId: Type.Optional(Type.String({ maxLength: 100 })) });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function paymentMethodPage(deps: PortalDeps) {
  const { db, config } = deps.service;
  const resultPath = (id: string) => `/portal/subscriptions/${id}/payment-method/result`;
  return async function paymentMethod(scope: App) {
    registerPortalAction(
      scope,
      { db, idempotency: deps.idempotency },
      {
        name: 'payment-method',
        act: async (_who, id) => {
          // The sandbox's window is a page of its own; the real gateway's opens only through its script on the
          // merchant's page, which this page cannot be: refused before a registration is made, in words.
          if (!windowHasUrl(config)) throw new PaymentMethodChangeNotOfferedError('This gateway’s payment-method window opens only on the merchant’s own page');
          return createPaymentMethodRegistration(deps.service, id, { returnUrl: `${config.publicBaseUrl}${resultPath(id)}` });
        },
        done: (_id, registration) => (registration as { window?: { url?: string } }).window?.url,
      },
    );

    scope.get(
      '/subscriptions/:id/payment-method/result',
      { schema: { params: PortalIdParams, querystring: ResultQuery } },
      async function paymentMethodResult(request, reply) {
        const session = request.portal!;
        const { t } = speech(session.locale);
        const id = await ownedSubscriptionId(db, session, request.params.id);
        const registrationId = request.query.registrationId;
        const registration =
          id && registrationId && UUID.test(registrationId)
            ? await db.registration.findFirst({ where: { id: registrationId, targetSubscriptionId: id }, select: { status: true } })
            : null;
        if (!id) return renderPortalError(request, reply, 404, 'NOT_FOUND');
        const outcome =
          registration?.status === 'COMPLETED'
            ? 'succeeded'
            : registration?.status === 'PENDING' || registration?.status === 'NEEDS_ATTENTION'
              ? 'pending'
              : 'failed';
        return renderPortal(request, reply, 'payment-method', {
          title: t('portal.paymentMethod.heading'),
          outcome,
          message: t(`portal.paymentMethod.${outcome}`),
          subscriptionHref: `/portal/subscriptions/${id}`,
        });
      },
    );
  };
}
