// GET /portal/records.csv (docs/portal.md "Customer portal"): every payment and refund of the session's customer,
// external refunds included, as one CSV in the customer's language: UTF-8 with a BOM (lib/csv.ts), Korea time with
// the zone in the header, amounts in won, the masked card or phone, the payment company (its gateway: the name on the
// customer's statement), orderId and transactionId. Its payments are read
// through the admin routes' own list (GET /admin/payments?userId=, payment-actions.service.ts) a page at a time, so the
// rows and amounts are that list's; each refund is a row of its own under its payment.
import { Readable } from 'node:stream';
import type { App } from '../../app-types.ts';
import { csvHead, csvRows } from '../../lib/csv.ts';
import { formatKst } from '../console/korea-time.ts';
import { speech } from '../i18n/messages.ts';
import type { Payment, PortalDeps } from './portal-deps.ts';
import { instrumentOf } from './subscription-card.ts';

const COLUMNS = ['kind', 'time', 'item', 'amount', 'status', 'instrument', 'gateway', 'orderId', 'transactionId', 'id', 'paymentId'] as const;
const PAGE_SIZE = 100;

export function recordsCsv(deps: PortalDeps) {
  const { db } = deps.service;
  return async function records(scope: App) {
    scope.get('/records.csv', async function downloadRecords(request, reply) {
      const session = request.portal!;
      const say = speech(session.locale);
      const { t } = say;
      // What each payment's row names: its subscription's orderName and masked card or phone, or its order's name.
      const [subscriptions, orders] = await Promise.all([
        deps.actions.subscriptionsOf(session.userId),
        db.order.findMany({ where: { userId: session.userId }, select: { id: true, orderName: true } }),
      ]);
      const bySubscription = new Map(subscriptions.map((s) => [s.id, { item: s.orderName, instrument: instrumentOf(s, t) }]));
      const byOrder = new Map(orders.map((o) => [o.id, o.orderName]));
      const rowsOf = (p: Payment) => {
        const of = p.subscriptionId ? bySubscription.get(p.subscriptionId) : undefined;
        const item = of?.item ?? (p.oneTimeOrderId ? (byOrder.get(p.oneTimeOrderId) ?? '') : '');
        const instrument = of?.instrument ?? say.word('method', p.method);
        const payment = {
          kind: t('portal.records.payment'),
          time: formatKst(p.approvedAt ?? p.createdAt),
          item,
          amount: p.amount,
          status: say.word('paymentStatus', p.status),
          instrument,
          gateway: say.word('gateway', p.gateway),
          orderId: p.orderId,
          transactionId: p.transactionId,
          id: p.id,
          paymentId: p.id,
        };
        const refunds = (p.refunds ?? []).map((r) => ({
          ...payment,
          kind: t('portal.records.refund'),
          time: formatKst(r.succeededAt ?? r.requestedAt),
          amount: r.amount,
          status: say.word('refundStatus', r.status),
          transactionId: undefined,
          id: r.id,
        }));
        return [payment, ...refunds];
      };
      async function* lines() {
        yield csvHead(COLUMNS.map((column) => t(`portal.records.${column}`)));
        let cursor: string | undefined;
        do {
          const page = await deps.payments.listPayments({ userId: session.userId, limit: PAGE_SIZE, cursor });
          if (page.items.length > 0) yield csvRows(page.items.flatMap(rowsOf), COLUMNS);
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
      }
      reply.header('cache-control', 'no-store').header('content-disposition', 'attachment; filename="records.csv"').type('text/csv; charset=utf-8');
      return reply.send(Readable.from(lines(), { objectMode: false }));
    });
  };
}
