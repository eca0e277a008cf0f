// The erasure's confirmation page (/console/customers/erasure?userId=, docs/operating.md "A customer asks to be
// forgotten"), reached from the "Erase customer" box of the Subscription and Customer pages: what is erased and what is
// kept, in words; what blocks the erasure now (findErasureBlockers, the very check the service makes), each in words
// with a link to its page; and the form: CSRF, the idempotency key made when the page is rendered, the
// cancelOpenSubscriptions choice and a required Reason. Its POST runs the service of POST
// /admin/customers/:userId/erasure under that route's idempotency scope and body schema (no rule of its own, no second
// writer), then shows the customer's page under the pseudonym: the old userId appears nowhere after.
// The userId travels in the query string and the form's body only: request logs keep the path (src/lib/logger.ts).
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app-types.ts';
import { ErasureBody } from '../erasure/erasure.schemas.ts';
import { type ErasureBlocker, findErasureBlockers } from '../erasure/erasure.blockers.ts';
import { ERASURE_SCOPE, erasureRequest } from '../erasure/erasure.routes.ts';
import { who } from '../shared/admin-actions.ts';
import type { Db } from '../../db/prisma.ts';
import { WITHDRAWAL_REFUND_DUE } from '../ledger/refund-due.ts';
import type { ConsoleDeps } from './console-deps.ts';
import { termFor, type WordGroup } from './code-words.ts';
import type { MessageKey } from '../i18n/messages.ts';
import { actOnce, checkAdminBody, renderError, renderPage, speechOf } from './console-page.ts';
import { hasRecords, readCustomer } from './customer.queries.ts';
import { listHref } from './list-filters.ts';

const UserIdQuery = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 200 }) });
const ErasureForm = Type.Object(
  {
    _csrf: Type.String(),
    idempotencyKey: Type.String({ minLength: 1, maxLength: 200 }),
    userId: Type.String({ minLength: 1, maxLength: 200 }),
    reason: Type.String({ maxLength: 500 }),
    cancelOpenSubscriptions: Type.Optional(Type.Union([Type.Literal('no'), Type.Literal('yes')])),
  },
  { additionalProperties: false },
);

const B = 'console.customers.erase.blocker';
const search = (id: string) => listHref('/console/search', { q: id });

/**
 * A blocker as the page says it: its sentence (console.customers.erase.blocker.<kind>) with the code it is about in
 * words (an open subscription's status, a payment's, a refund's...) and the page where it is settled. A refund's id is
 * its attempt's: it links to its payment.
 */
function blockerWords(blocker: ErasureBlocker, found: Found): { key: MessageKey; group?: WordGroup; code?: string; href: string } {
  const payment = (id: string) => `/console/payments/${id}`;
  switch (blocker.kind) {
    case 'subscription':
      return blocker.reason === WITHDRAWAL_REFUND_DUE
        ? { key: `${B}.withdrawal` as const, group: 'attentionReason' as const, href: `/console/subscriptions/${blocker.id}` }
        : {
            key: `${B}.subscription` as const,
            group: 'subscriptionStatus' as const,
            code: found.subscriptionStatus.get(blocker.id),
            href: `/console/subscriptions/${blocker.id}`,
          };
    case 'payment':
      return { key: `${B}.payment` as const, group: 'paymentStatus' as const, href: payment(blocker.id) };
    case 'refund': {
      const paymentId = found.refundPayment.get(blocker.id);
      return { key: `${B}.refund` as const, group: 'refundStatus' as const, href: paymentId ? payment(paymentId) : search(blocker.id) };
    }
    case 'registration':
      return { key: `${B}.registration` as const, group: 'checkoutStatus' as const, href: search(blocker.id) };
    case 'order':
      return { key: `${B}.order` as const, group: 'checkoutStatus' as const, href: search(blocker.id) };
    default:
      return { key: `${B}.other` as const, href: search(blocker.id) };
  }
}

/** What the sentences need beyond the blockers: the open subscriptions' statuses, the refunds' payments. */
interface Found {
  subscriptionStatus: Map<string, string>;
  refundPayment: Map<string, string>;
}

async function lookUp(db: Db, blockers: ErasureBlocker[]): Promise<Found> {
  const ids = (kind: string) => blockers.filter((b) => b.kind === kind).map((b) => b.id);
  const [subscriptions, refunds] = await Promise.all([
    db.subscription.findMany({ where: { id: { in: ids('subscription') } }, select: { id: true, status: true } }),
    db.paymentAttempt.findMany({ where: { id: { in: ids('refund') } }, select: { id: true, paymentId: true } }),
  ]);
  return {
    subscriptionStatus: new Map(subscriptions.map((s) => [s.id, s.status])),
    refundPayment: new Map(refunds.map((a) => [a.id, a.paymentId])),
  };
}

/** The blockers as the page lists them: a sentence in the page's language (the code beside its word), and a link. */
async function inWords(db: Db, request: FastifyRequest, blockers: ErasureBlocker[]) {
  const says = speechOf(request);
  const found = blockers.length === 0 ? undefined : await lookUp(db, blockers);
  return blockers.map((blocker) => {
    const words = blockerWords(blocker, found!);
    const reason = words.group ? termFor(says.locale, words.group, words.code ?? blocker.reason) : blocker.reason;
    return { kind: blocker.kind, reason: blocker.reason, id: blocker.id, text: says.t(words.key, { reason }), href: words.href };
  });
}

export function customerErasurePage(deps: ConsoleDeps) {
  const { db, config } = deps.service;
  const { idempotency, erasure } = deps;

  /** The confirmation page of `userId` (status 409 when a submit was refused for its blockers); 404 for nobody to erase. */
  async function confirmation(request: FastifyRequest, reply: FastifyReply, userId: string, statusCode = 200) {
    const says = speechOf(request);
    const records = await readCustomer(db, deps.payments, userId);
    if (records.erasure !== null || !hasRecords(records)) {
      return renderError(request, reply, 404, { code: 'CUSTOMER_NOT_FOUND', message: says.t('console.customers.erase.notFound') });
    }
    const blockers = await findErasureBlockers(db, userId);
    return renderPage(
      request,
      reply,
      'customer-erasure',
      {
        title: says.t('console.customers.erase.title', { userId }),
        userId,
        // The Customer page's first rows of each kind: "20+" where it has more (its lists page through the rest).
        counts: {
          subscriptions: `${records.subscriptions.length}${records.moreSubscriptions ? '+' : ''}`,
          orders: `${records.orders.length}${records.moreOrders ? '+' : ''}`,
          payments: `${records.payments.length}${records.morePayments ? '+' : ''}`,
        },
        customerHref: listHref('/console/customers', { userId }),
        blockers: await inWords(db, request, blockers),
        years: config.retentionYears,
        idempotencyKey: randomUUID(),
        refused: statusCode !== 200,
      },
      statusCode,
    );
  }

  return async (scope: App) => {
    scope.get('/customers/erasure', { schema: { querystring: UserIdQuery } }, async function confirmErasure(request, reply) {
      return confirmation(request, reply, request.query.userId.trim());
    });

    scope.post('/customers/erasure', { schema: { body: ErasureForm }, preHandler: scope.csrfProtection }, async function eraseCustomer(request, reply) {
      const { idempotencyKey, userId, reason, cancelOpenSubscriptions } = request.body;
      const body = { reason: reason.trim(), cancelOpenSubscriptions: cancelOpenSubscriptions === 'yes' };
      checkAdminBody(request, ErasureBody, body, { reason: 'Reason' });
      let outcome: { statusCode: number; body: unknown };
      try {
        outcome = await actOnce(idempotency, {
          scope: ERASURE_SCOPE,
          idempotencyKey,
          payload: erasureRequest(userId, body),
          adminStatus: 201,
          act: () => erasure.erase({ userId, ...body }, who(request, body.reason)),
        });
      } catch (error) {
        if ((error as { code?: string }).code === 'ERASURE_BLOCKED') return confirmation(request, reply, userId, 409);
        throw error;
      }
      const answer = outcome.body as { code?: string; message?: string; pseudonym?: string };
      if (outcome.statusCode === 409 && answer.code === 'ERASURE_BLOCKED') return confirmation(request, reply, userId, 409);
      if (outcome.statusCode >= 400) return renderError(request, reply, outcome.statusCode, answer);
      return reply.redirect(listHref('/console/customers', { userId: answer.pseudonym, done: 'erase' }), 303);
    });
  };
}
