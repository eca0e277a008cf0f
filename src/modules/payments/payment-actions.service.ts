// Operators' actions on payments (docs/operating.md "Admin routes"): list, read, and resolve an outcome a person established (here),
// refunds through the gateway's cancellation (refund-payment.ts) and refunds made outside it (record-external-refund.ts). Invariant 4 (docs/architecture.md): only a person (or a settlement file, or a
// gateway's answer to a lookup: modules/payments/inquire-unknowns.ts, through this same code) turns UNKNOWN into an outcome; the subscription then moves exactly as if the gateway had answered
// so (ledger/charge.outcomes.ts), and a MOBILE success becomes the chain head.
// The database adds (prisma/functions/): events (events.sql), MRR movements (mrr.sql), roll-ups (report-rollups.sql), settlement queue (settlement-queue.sql).
import { type Db, sqlQuery } from '../../db/prisma.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import { isUniqueViolation, NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { afterCursor, createdWithin, decodeCursor, PAGE_ORDER, toPage } from '../../lib/pagination.ts';
import { applyChargeDecline, applyChargeSuccess } from '../ledger/charge.outcomes.ts';
import { PAYMENT_DETAIL, readPayment, serializePayment, withRefunds, type PaymentStatus } from './payments.service.ts';
import { needsAttentionWhere, needsNoAttentionWhere } from '../ledger/payment.queries.ts';
import { SETTLEMENT_MISMATCH } from '../ledger/payment.state.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { moveCheckout } from '../ledger/checkout.state.ts';
import { writeAudit, type Actor } from '../audit/audit.ts';
import { createRefunds } from './refund-payment.ts';
import { createExternalRefunds } from './record-external-refund.ts';
import { transitionAttempt } from '../ledger/attempt.state.ts';
import { settleRegistrationCharge } from '../registrations/registration-paid.ts';

type Tx = Prisma.TransactionClient;
/** A customer's subscription ids and one-time order ids (ofCustomer), one statement. */
const CUSTOMER_IDS_SQL = `SELECT ARRAY(SELECT "id"::text FROM "subscriptions" WHERE "userId" = $1) AS "subscriptions",
  ARRAY(SELECT "id"::text FROM "orders" WHERE "userId" = $1) AS "orders"`;
/** What `resolve` settles: an UNKNOWN outcome, or a FAILED payment that a settlement file shows approved. */
const RESOLVABLE = [{ status: 'UNKNOWN' as const }, { status: 'FAILED' as const, attentionReason: SETTLEMENT_MISMATCH }];

export interface PaymentFilter {
  status?: PaymentStatus;
  needsAttention?: boolean;
  kind?: 'INITIAL' | 'RECURRING' | 'MANUAL' | 'ONE_TIME';
  method?: 'CARD' | 'MOBILE';
  gateway?: 'DANAL' | 'TOSS';
  subscriptionId?: string;
  userId?: string;
  createdFrom?: string;
  createdTo?: string;
  limit: number;
  cursor?: string;
}

export function createPaymentActions(deps: Pick<ServiceDeps, 'db' | 'gateway' | 'clock' | 'config' | 'log'>) {
  const { db, clock, config } = deps;

  async function load(tx: Tx | Db, id: string) {
    const row = await tx.payment.findUnique({ where: { id }, include: PAYMENT_DETAIL });
    if (!row) throw new NotFoundError('Payment');
    return row;
  }

  /**
   * "Every payment of this customer": their subscriptions' and their one-time orders' (a payment belongs to one or the
   * other; an order's userId is optional). Resolved to ids first (orders_userId_idx, subscriptions_userId_createdAt_id_idx)
   * so that the list filters on `subscriptionId = ANY(..) OR oneTimeOrderId = ANY(..)`, a BitmapOr of two payment
   * indexes: an OR of the two relation filters is two IN-subqueries under OR, which PostgreSQL cannot turn into joins
   * and checks against every row of a scan of the whole table. Both id lists in one statement (CUSTOMER_IDS_SQL).
   */
  async function ofCustomer(from: Db, userId: string): Promise<Prisma.PaymentWhereInput> {
    const [ids] = await sqlQuery<{ subscriptions: string[]; orders: string[] }>(from, CUSTOMER_IDS_SQL, [userId]);
    return { OR: [{ subscriptionId: { in: ids!.subscriptions } }, { oneTimeOrderId: { in: ids!.orders } }] };
  }

  /** `from`: the client the list is read from (the admin route's and the console's, shared/read-db.ts); the primary by default. */
  async function listPayments(filter: PaymentFilter, from: Db = db) {
    const rows = await from.payment.findMany({
      // Under AND: the attention filters and the cursor each hold an OR or an AND, and createdWithin and the cursor a
      // createdAt; spread into one object, the later replaced the earlier (page 2 of needsAttention=true listed all).
      where: {
        AND: [
          { status: filter.status, kind: filter.kind, method: filter.method, gateway: filter.gateway, subscriptionId: filter.subscriptionId },
          filter.userId ? await ofCustomer(from, filter.userId) : {},
          createdWithin(filter),
          filter.needsAttention === true ? needsAttentionWhere : {},
          filter.needsAttention === false ? needsNoAttentionWhere : {},
          afterCursor(decodeCursor(filter.cursor)),
        ],
      },
      orderBy: PAGE_ORDER,
      take: filter.limit + 1,
    });
    const page = toPage(rows, filter.limit);
    return { items: (await withRefunds(from, page.items)).map((row) => serializePayment(row)), nextCursor: page.nextCursor };
  }

  /** Clears the subscription's flag when no other payment of it is still UNKNOWN or a settlement mismatch. */
  async function clearAttention(tx: Tx, subscriptionId: string) {
    const stillOpen = await tx.payment.count({ where: { subscriptionId, OR: RESOLVABLE } });
    if (stillOpen === 0) {
      await tx.subscription.updateMany({
        where: { id: subscriptionId, attentionReason: { in: ['PAYMENT_OUTCOME_UNKNOWN', SETTLEMENT_MISMATCH] } },
        data: { needsAttention: false, attentionReason: null },
      });
    }
  }

  /**
   * UNKNOWN → SUCCEEDED (with the gateway's transactionId) or FAILED (handled like a decline: retry rules apply).
   * The UNKNOWN attempt takes the resolved outcome, so history and retries count it like a real answer. A FAILED
   * payment that a settlement file shows approved (SETTLEMENT_MISMATCH) resolves too: SUCCEEDED pays its cycle as a
   * success would; FAILED leaves our record as it stands (its retries go on as scheduled).
   * `expect` (a settlement file's line, a gateway's lookup): the attempt the outcome was established for, by its amount
   * and orderId; when the attempt waiting now is another one (a later attempt, or an operator came first), nothing is
   * resolved (409). `within` runs in the same transaction once the payment is fenced (a caller's own bookkeeping, which
   * then commits with the outcome or not at all).
   */
  async function resolve(id: string, input: ResolveInput, who: Actor, within?: (tx: Tx) => Promise<void>) {
    if (input.outcome === 'SUCCEEDED' && !input.transactionId) throw new ValidationError('transactionId is required to resolve as SUCCEEDED');
    if (input.outcome === 'FAILED' && input.transactionId) throw new ValidationError('transactionId is only for SUCCEEDED');
    const now = clock.now();
    return db
      .$transaction(async (tx) => {
        const before = await fenceResolvable(tx, id);
        await within?.(tx);
        // One gateway transaction settles one payment (a unique index; here, to say which one holds it).
        if (input.outcome === 'SUCCEEDED') {
          const holder = await tx.payment.findFirst({ where: { transactionId: input.transactionId, id: { not: id } }, select: { id: true } });
          if (holder) throw new StateConflictError(`Transaction ${input.transactionId} already settles payment ${holder.id}`);
        }
        const { unknownAttempt, approvedAt } = attemptResolved(before, input, now);
        const note = (input.note ?? `resolved by operator: ${who.reason}`).slice(0, 500);
        const failureCode = input.failureCode ?? 'RESOLVED_FAILED';
        if (unknownAttempt) {
          // Under the payment's fence above: the attempt is still UNKNOWN.
          if (input.outcome === 'SUCCEEDED')
            await transitionAttempt(tx, unknownAttempt.id, 'settle', 'SUCCEEDED', { transactionId: input.transactionId, approvedAt, gatewayMessage: note });
          else await transitionAttempt(tx, unknownAttempt.id, 'settle', 'DECLINED', { gatewayCode: failureCode, gatewayMessage: note });
        }
        if (isCyclePayment(before)) {
          await resolveCyclePayment(tx, before, { ...input, failureCode }, approvedAt, note, now);
        } else {
          await resolveCheckoutPayment(tx, before, input.outcome, input.transactionId, approvedAt, note, now);
        }
        const after = await load(tx, id);
        await writeAudit(tx, {
          ...who,
          action: `payment.resolve_${input.outcome.toLowerCase()}`,
          entityType: 'payment',
          entityId: id,
          before: serializePayment(before),
          after: serializePayment(after),
        });
        return serializePayment(after);
      })
      .catch((error: unknown) => {
        // A concurrent resolve took the transactionId between the check above and this write.
        if (isUniqueViolation(error)) throw new StateConflictError(`Transaction ${input.transactionId} already settles another payment`);
        throw error;
      });
  }

  /** The payment as it was, fenced on its still being resolvable: two operators cannot both resolve it. */
  async function fenceResolvable(tx: Tx, id: string) {
    const before = await load(tx, id);
    const fenced = await tx.payment.updateMany({ where: { id, OR: RESOLVABLE }, data: { attentionReason: null } });
    if (fenced.count === 0) {
      throw new StateConflictError(`Only an UNKNOWN payment, or a FAILED one a settlement file shows approved, can be resolved; this one is ${before.status}`);
    }
    return before;
  }

  /** A scheduled cycle's payment: its subscription moves as if the gateway had answered so (ledger/charge.outcomes.ts). */
  async function resolveCyclePayment(tx: Tx, before: CyclePayment, input: ResolveInput, approvedAt: Date, note: string, now: Date) {
    const settling = before.status === 'FAILED';
    if (settling && input.outcome === 'FAILED') {
      // Our record stands: the payment stays FAILED, its retry keeps its time.
    } else if (input.outcome === 'SUCCEEDED') {
      await applyChargeSuccess(tx, {
        subscriptionId: before.subscriptionId,
        paymentId: before.id,
        cycle: before.cycle,
        dueAt: before.dueAt ?? approvedAt,
        amount: before.amount,
        transactionId: input.transactionId!,
        approvedAt,
        timezone: config.timezone,
        now,
        move: settling ? 'settle' : 'succeed',
      });
    } else {
      await applyChargeDecline(tx, {
        subscriptionId: before.subscriptionId,
        paymentId: before.id,
        dueAt: before.dueAt ?? now,
        failureCode: input.failureCode ?? 'RESOLVED_FAILED',
        failureMessage: note,
        retryDelaysMs: config.retryDelaysMs,
        now,
        timezone: config.timezone,
      });
    }
    // After the payment left UNKNOWN; a MOBILE_WINDOW_CLOSED flag set just now stays.
    await clearAttention(tx, before.subscriptionId);
  }

  /**
   * A registration's or one-time order's payment. An order completes or fails with it. A registration whose key
   * reached us before its first charge (a gateway whose issuance charges nothing) settles as the charge's live answer
   * would (registrations/registration-paid.ts). A registration whose key issuance was UNKNOWN cannot complete even if
   * the money moved (the billing key never reached us): it fails with KEY_NOT_RECEIVED, and the operator refunds the
   * payment and asks the customer to register again.
   */
  async function resolveCheckoutPayment(
    tx: Tx,
    payment: Payment,
    outcome: 'SUCCEEDED' | 'FAILED',
    transactionId: string | undefined,
    approvedAt: Date,
    note: string,
    now: Date,
  ) {
    if (payment.registrationId && payment.status === 'UNKNOWN') {
      const settled = { registrationId: payment.registrationId, paymentId: payment.id, outcome, transactionId, approvedAt, note, now };
      if (await settleRegistrationCharge(tx, { ...settled, timezone: config.timezone })) return;
    }
    if (outcome === 'SUCCEEDED') await transitionPayment(tx, payment.id, 'succeed', { transactionId, approvedAt });
    else await transitionPayment(tx, payment.id, 'fail', { failureCode: 'RESOLVED_FAILED', failureMessage: note });
    if (payment.oneTimeOrderId) {
      if (outcome === 'SUCCEEDED') {
        await moveCheckout(tx, 'order', payment.oneTimeOrderId, 'complete', { data: { completedAt: approvedAt, failureCode: null, failureMessage: null } });
      } else {
        await moveCheckout(tx, 'order', payment.oneTimeOrderId, 'fail', { data: { failureCode: 'RESOLVED_FAILED', failureMessage: note } });
      }
    } else if (payment.registrationId) {
      await moveCheckout(tx, 'registration', payment.registrationId, 'fail', {
        data: { failureCode: outcome === 'SUCCEEDED' ? 'KEY_NOT_RECEIVED' : 'RESOLVED_FAILED', failureMessage: note },
      });
    }
  }

  return {
    listPayments,
    getPayment: async (id: string) => serializePayment(await readPayment(db, id)),
    resolve,
    ...createRefunds(deps),
    ...createExternalRefunds(deps),
  };
}

export type PaymentActions = ReturnType<typeof createPaymentActions>;

type Payment = Prisma.PaymentGetPayload<{ include: typeof PAYMENT_DETAIL }>;
type CyclePayment = Payment & { subscriptionId: string; cycle: number };

/** A subscription cycle's payment (not a registration's INITIAL one, nor a one-time order's). */
const isCyclePayment = (payment: Payment): payment is CyclePayment => Boolean(payment.subscriptionId) && payment.cycle !== null && payment.kind !== 'INITIAL';

interface ResolveInput {
  outcome: 'SUCCEEDED' | 'FAILED';
  transactionId?: string;
  approvedAt?: string;
  expect?: { amount: number; orderId?: string };
  /** What the attempt and payment record as the outcome's message (default: "resolved by operator: " and the reason). */
  note?: string;
  /** FAILED: the code recorded as the decline's (default RESOLVED_FAILED; a gateway's lookup gives its own). */
  failureCode?: string;
}

/**
 * The attempt an outcome is for (the UNKNOWN one, or the last charge of a settled FAILED payment), checked against
 * `expect`, and the outcome's time: the operator's, else that attempt's.
 */
function attemptResolved(before: Payment, input: ResolveInput, now: Date) {
  const settling = before.status === 'FAILED';
  const unknownAttempt = [...before.attempts].reverse().find((a) => a.status === 'UNKNOWN');
  // Default: the time of the attempt the outcome is for (the UNKNOWN one, or the last charge of a settled FAILED one).
  const timed = unknownAttempt ?? (settling ? before.attempts.filter((a) => a.operation !== 'CANCEL').at(-1) : undefined);
  const { expect } = input;
  if (expect && (!timed || timed.amount !== expect.amount || (expect.orderId !== undefined && timed.orderId !== expect.orderId))) {
    throw new StateConflictError('The attempt this outcome was established for is no longer the one waiting for it');
  }
  const approvedAt = input.approvedAt ? new Date(input.approvedAt) : (timed?.sentAt ?? timed?.createdAt ?? now);
  return { unknownAttempt, approvedAt };
}
