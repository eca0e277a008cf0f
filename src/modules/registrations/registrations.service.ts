// Registrations (DESIGN.md §1.1, §5): the merchant asks for one; the customer authenticates in the gateway's
// window; the success redirect exchanges the window's transactionId for a billing key, stores it encrypted,
// records the registration's own payment and creates the subscription.
//
// Invariants kept here:
// - the single-use `state` (256 random bits) is the only thing that binds a browser redirect to a registration;
// - concurrent redirects with one state call the gateway once: the caller must hold the registration's lease;
// - write before call: when the registration charges money, its INITIAL payment and an IN_FLIGHT attempt are
//   committed before issue-key is called (rule 1), and the outcome is written fenced on that lease (rule 5);
// - amounts come from our database, never from the redirect (rule 7);
// - an UNKNOWN issuance is never turned into a failure: the registration waits in NEEDS_ATTENTION, and a replay
//   may call issue-key again with the same transactionId (the gateway's window transaction is single use, so
//   that call cannot charge twice).
import { randomBytes, randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.ts';
import type { GatewayResult } from '../../gateway/types.ts';
import type { ServiceDeps } from '../shared/service-deps.ts';
import type { Config } from '../../config.ts';
import { NotFoundError, StateConflictError, ValidationError } from '../../lib/errors.ts';
import { calendarDaysBetween, GATEWAY_ZONE, MOBILE_WINDOW_DAYS, type IntervalUnit } from '../../lib/calendar.ts';
import { RULE_ERRORS } from '../ledger/payment.errors.ts';
import { revokeBillingKey, storeBillingKey } from '../billing-keys/billing-keys.service.ts';
import { applyChargeSuccess } from '../ledger/charge.outcomes.ts';
import { CHARGED_AFTER_CANCEL } from '../payments/payments.service.ts';
import { releaseSubscription } from '../ledger/subscription.queries.ts';
import { checkoutUrls, validateTerms, windowParams, withoutCheckoutSecrets, type Method } from '../shared/terms.ts';
import { failure, success, type CheckoutResult } from '../checkout/checkout.result.ts';
import { prepareAttempt, StaleLeaseError } from '../ledger/attempts.ts';
import { transitionPayment } from '../ledger/payment.state.ts';
import { releaseCheckout, type CheckoutMoveData, type CheckoutTransition } from '../ledger/checkout.state.ts';
import { checkoutByState, createCheckoutFlow } from '../checkout/checkout.flow.ts';
import { createSubscriptionFromRegistration } from '../subscriptions/subscriptions.service.ts';

type Tx = Prisma.TransactionClient;
type RegistrationRow = Prisma.RegistrationGetPayload<{ include: { subscription: { select: { id: true } } } }>;
type RegistrationView = Omit<RegistrationRow, 'subscription'> & { subscription?: { id: string } | null };

/** A registration by its state, with the subscription it created (checkoutByState). */
export const registrationByState = checkoutByState<RegistrationRow>('registrations', Prisma.RegistrationScalarFieldEnum, {
  as: 'subscription',
  sql: `(SELECT jsonb_build_object('id', s."id") FROM "subscriptions" s WHERE s."registrationId" = c."id")`,
});

export interface CreateRegistrationInput {
  userId: string;
  method: Method;
  amount: number;
  orderName: string;
  interval?: { unit: 'day' | 'week' | 'month' | 'year'; count: number };
  itemCode?: string;
  issueKeyOnly?: boolean;
  trialDays?: number;
  userName?: string;
  userPhoneNumber?: string;
  returnUrl?: string;
}

/** A new payment method for an existing subscription (DESIGN.md §5 "Payment method"). */
export interface PaymentMethodInput {
  method?: Method;
  amount?: number;
  itemCode?: string;
  userName?: string;
  userPhoneNumber?: string;
  returnUrl?: string;
}

export type { RedirectInput } from '../checkout/checkout.flow.ts';

export type RegistrationsDeps = ServiceDeps;

/** Attention reasons that a new billing key settles. */
const KEY_ATTENTION = ['MOBILE_WINDOW_CLOSED', 'MOBILE_CHAIN_MISSING', 'MOBILE_AMOUNT_MISMATCH', 'BILLING_KEY_REVOKED', 'BILLING_KEY_UNREADABLE'];

/** Our registration orderId: derived from the row id, 33 bytes, unique (rule 2). */
export function registrationOrderId(id: string): string {
  return `R${id.replace(/-/g, '')}`;
}

/** The public shape (DESIGN.md §5). */
export function serializeRegistration(row: RegistrationView, config: Config) {
  const urls = checkoutUrls(config, 'billing', row.state);
  return {
    id: row.id,
    state: row.state,
    status: row.status,
    orderId: row.orderId,
    ...urls,
    expiresAt: row.expiresAt.toISOString(),
    window: windowParams(config, {
      method: row.method,
      amount: row.amount,
      orderName: row.orderName,
      userId: row.userId,
      itemCode: row.itemCode ?? undefined,
      userName: row.userName ?? undefined,
      userPhoneNumber: row.userPhoneNumber ?? undefined,
      orderId: row.orderId,
      issueKeyOnly: row.issueKeyOnly,
      ...urls,
    }),
    purpose: row.purpose,
    subscriptionId: row.subscription?.id ?? row.targetSubscriptionId ?? undefined,
    trialDays: row.trialDays ?? undefined,
    failureCode: row.failureCode ?? undefined,
    failureMessage: row.failureMessage ?? undefined,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * A registration as events show it: the public shape without the single-use `state`, the URLs that carry it and
 * the window (which holds them and the customer's phone number). The event snapshot never stores either.
 */
export function registrationEventObject(row: RegistrationView, config: Config) {
  return withoutCheckoutSecrets(serializeRegistration(row, config));
}

export function createRegistrationsService(deps: RegistrationsDeps) {
  const { db, gateway, clock, config, keyring, log } = deps;
  const leaseMs = config.scheduler.leaseMs;

  async function createRegistration(input: CreateRegistrationInput) {
    const interval = input.interval ?? { unit: 'month' as const, count: 1 };
    // A trial is a key-only registration whose first charge is at the trial's end (DESIGN.md §5).
    if (input.trialDays !== undefined) {
      if (input.method !== 'CARD') throw new ValidationError('trialDays is for CARD only: a MOBILE registration charges at once');
      if (input.issueKeyOnly === false) throw new ValidationError('trialDays implies issueKeyOnly: nothing is charged until the trial ends');
    }
    const issueKeyOnly = input.issueKeyOnly ?? input.trialDays !== undefined;
    validateTerms(input, config, { recurring: true });
    if (input.method === 'MOBILE') {
      if (interval.unit !== 'month' || interval.count !== 1) {
        throw new ValidationError('MOBILE subscriptions are billed monthly: interval must be {unit: "month", count: 1}');
      }
      if (issueKeyOnly) {
        throw new ValidationError('issueKeyOnly is not available for MOBILE: the registration’s payment starts the chain');
      }
    }
    return insertRegistration({ ...input, interval, issueKeyOnly });
  }

  /** The rules of a new registration of that method (above) are checked by the caller. */
  async function insertRegistration(
    input: CreateRegistrationInput & { interval: { unit: IntervalUnit; count: number }; issueKeyOnly: boolean; targetSubscriptionId?: string },
  ) {
    const id = randomUUID();
    const row = await db.registration.create({
      data: {
        id,
        state: randomBytes(32).toString('base64url'),
        orderId: registrationOrderId(id),
        userId: input.userId,
        method: input.method,
        amount: input.amount,
        orderName: input.orderName,
        intervalUnit: input.interval.unit,
        intervalCount: input.interval.count,
        itemCode: input.itemCode,
        issueKeyOnly: input.issueKeyOnly,
        trialDays: input.trialDays,
        purpose: input.targetSubscriptionId ? 'PAYMENT_METHOD' : 'SUBSCRIPTION',
        targetSubscriptionId: input.targetSubscriptionId,
        userName: input.userName,
        userPhoneNumber: input.userPhoneNumber,
        returnUrl: input.returnUrl,
        expiresAt: new Date(clock.now().getTime() + config.registrationTtlMs),
      },
      include: { subscription: { select: { id: true } } },
    });
    return serializeRegistration(row, config);
  }

  /**
   * A registration that replaces a subscription's billing key (DESIGN.md §5): the same window and flow as a new one.
   * CARD only verifies the card. MOBILE charges at once, so it is taken only while a cycle is owed (PAST_DUE, or
   * the next charge within the ±5-day window): that payment pays the owed cycle and starts the new chain. Every rule
   * is checked here, before the window exists.
   */
  async function createPaymentMethodRegistration(subscriptionId: string, input: PaymentMethodInput) {
    const sub = await db.subscription.findUnique({ where: { id: subscriptionId } });
    if (!sub) throw new NotFoundError('Subscription');
    if (sub.status === 'CANCELED') throw new StateConflictError('A CANCELED subscription takes no new payment method');
    const method = input.method ?? sub.method;
    const interval = { unit: sub.intervalUnit, count: sub.intervalCount };
    if (method === 'CARD') {
      if (input.amount !== undefined) throw new ValidationError('A CARD window only verifies the card: amount is not taken (change it with price-change)');
    } else {
      if (interval.unit !== 'month' || interval.count !== 1)
        throw new ValidationError('MOBILE subscriptions are billed monthly: this subscription’s interval cannot move to MOBILE');
      const now = clock.now();
      const owed =
        sub.status === 'PAST_DUE' || (sub.nextChargeAt !== null && Math.abs(calendarDaysBetween(now, sub.nextChargeAt, GATEWAY_ZONE)) <= MOBILE_WINDOW_DAYS);
      if (!owed)
        throw new RULE_ERRORS.NOT_DUE('A MOBILE window charges at once: it is taken only while a cycle is owed (PAST_DUE, or the next charge within ±5 days)');
      // The owed cycle's charge may have gone through: nothing is charged again until an operator settles it.
      if (sub.attentionReason === 'PAYMENT_OUTCOME_UNKNOWN') {
        throw new RULE_ERRORS.PAYMENT_OUTCOME_UNKNOWN(
          'The outcome of this cycle’s charge is unknown; an operator must resolve it before a MOBILE window may charge',
        );
      }
    }
    const terms = {
      userId: sub.userId,
      method,
      amount: method === 'MOBILE' ? (input.amount ?? sub.amount) : sub.amount,
      orderName: sub.orderName,
      itemCode: input.itemCode ?? sub.itemCode ?? undefined,
      userName: input.userName,
      userPhoneNumber: input.userPhoneNumber,
      returnUrl: input.returnUrl,
    };
    validateTerms(terms, config, { recurring: true });
    return insertRegistration({ ...terms, interval, issueKeyOnly: method === 'CARD', targetSubscriptionId: sub.id });
  }

  async function getRegistration(id: string) {
    const row = await db.registration.findUnique({ where: { id }, include: { subscription: { select: { id: true } } } });
    if (!row) throw new NotFoundError('Registration');
    return serializeRegistration(row, config);
  }

  const findByState = (state: string) => registrationByState(db, state);

  /** What a finished (or waiting) registration answers, so a replay returns the same result. */
  function settled(row: RegistrationRow): CheckoutResult | undefined {
    const ids = { registrationId: row.id, returnUrl: row.returnUrl };
    switch (row.status) {
      case 'COMPLETED':
        return success({ ...ids, subscriptionId: row.subscription?.id ?? row.targetSubscriptionId ?? undefined });
      case 'FAILED':
        return failure('INVALID_STATE', 'This registration has already failed', { ...ids, reason: row.failureCode ?? undefined });
      case 'EXPIRED':
        return failure('STATE_EXPIRED', 'This registration has expired; ask for a new one', ids);
      default:
        return undefined;
    }
  }

  const flow = createCheckoutFlow<RegistrationRow, Claim>(
    { db, clock, log, leaseWaitMs: config.gateway.timeoutMs + 5_000 },
    {
      kind: 'registration',
      findByState,
      ids: (row) => ({ registrationId: row.id, returnUrl: row.returnUrl }),
      settled,
      // A window failure never overtakes a key exchange already under way.
      abandonFence: { transactionId: null },
      claim: claimIssuance,
      attemptOf: (claim) => claim.attemptId,
      paymentOf: (claim) => claim.paymentId,
      call: (row, transactionId) =>
        gateway.issueBillingKey({
          method: row.method,
          transactionId,
          expectedOrderId: row.orderId,
          // A key-only registration charged nothing that stays: the gateway may echo its verification amount (100)
          // rather than ours, which is no mismatch. The orderId echo still ties the answer to this registration.
          expectedAmount: row.issueKeyOnly ? undefined : row.amount,
        }),
      record: recordIssuance,
    },
  );

  interface Claim {
    paymentId?: string;
    attemptId?: string;
    hadUnknown: boolean;
    /** A MOBILE payment-method window: the owed cycle its charge pays. */
    cycle?: number;
    dueAt?: Date;
  }

  /**
   * Takes the registration's lease and, when it charges money, writes the INITIAL payment and an IN_FLIGHT
   * attempt, all in one short transaction. Returns undefined when another request holds the lease.
   */
  async function claimIssuance(row: RegistrationRow, transactionId: string, leaseOwner: string, now: Date): Promise<Claim | undefined> {
    const leaseExpiresAt = new Date(now.getTime() + leaseMs);
    return db.$transaction(async (tx) => {
      const claimed = await tx.registration.updateMany({
        where: {
          id: row.id,
          status: { in: ['PENDING', 'NEEDS_ATTENTION'] },
          OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }],
        },
        data: { leaseOwner, leaseExpiresAt, transactionId },
      });
      if (claimed.count === 0) return undefined;
      if (row.targetSubscriptionId) {
        // The subscription's lease keeps the scheduler and operators' charges off it while its key is replaced.
        const held = await tx.subscription.updateMany({
          where: { id: row.targetSubscriptionId, OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lt: now } }] },
          data: { leaseOwner, leaseExpiresAt },
        });
        if (held.count === 0) {
          // Being charged right now: give the registration back untouched; the redirect may be replayed.
          await tx.registration.update({ where: { id: row.id }, data: { leaseOwner: null, leaseExpiresAt: null, transactionId: row.transactionId } });
          return undefined;
        }
        if (row.method === 'MOBILE') return prepareOwedCycleAttempt(tx, row, row.targetSubscriptionId, leaseOwner, leaseExpiresAt, now);
      }
      if (row.issueKeyOnly) return { hadUnknown: row.status === 'NEEDS_ATTENTION' };
      return prepareInitialAttempt(tx, row, leaseOwner, leaseExpiresAt, now);
    });
  }

  /**
   * A MOBILE payment-method window charges at once: that charge is the owed cycle's payment (the one payment of the
   * cycle, a FAILED one sent again, or a new one), with an IN_FLIGHT attempt written before the call (rule 1).
   */
  async function prepareOwedCycleAttempt(
    tx: Tx,
    row: RegistrationRow,
    subscriptionId: string,
    leaseOwner: string,
    leaseExpiresAt: Date,
    now: Date,
  ): Promise<Claim> {
    const sub = await tx.subscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    const existing = await tx.payment.findUnique({ where: { subscriptionId_cycle: { subscriptionId, cycle: sub.cycle } } });
    if (existing && (existing.status === 'UNKNOWN' || existing.status === 'SUCCEEDED')) {
      throw new StateConflictError(`cycle ${sub.cycle}'s payment is ${existing.status}; an operator must settle it first`);
    }
    const payment = existing
      ? await tx.payment.update({ where: { id: existing.id }, data: { amount: row.amount, method: 'MOBILE', registrationId: row.id } })
      : await tx.payment.create({
          data: {
            subscriptionId,
            registrationId: row.id,
            cycle: sub.cycle,
            kind: 'RECURRING',
            method: 'MOBILE',
            amount: row.amount,
            orderId: row.orderId,
            dueAt: sub.nextChargeAt ?? now,
          },
        });
    const attempt = await prepareAttempt(tx, {
      paymentId: payment.id,
      operation: 'ISSUE_KEY',
      orderId: row.orderId,
      amount: row.amount,
      leaseOwner,
      leaseExpiresAt,
      now,
      allowAfterUnknown: true,
    });
    await transitionPayment(tx, payment.id, 'send', { nextRetryAt: null });
    return { paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown, cycle: sub.cycle, dueAt: payment.dueAt ?? now };
  }

  async function prepareInitialAttempt(tx: Tx, row: RegistrationRow, leaseOwner: string, leaseExpiresAt: Date, now: Date): Promise<Claim> {
    const payment =
      (await tx.payment.findFirst({ where: { registrationId: row.id, kind: 'INITIAL' } })) ??
      (await tx.payment.create({
        data: { registrationId: row.id, kind: 'INITIAL', method: row.method, amount: row.amount, orderId: row.orderId, cycle: 0, dueAt: now },
      }));
    // A dead request's attempt becomes UNKNOWN here; the replay may still call issue-key (see the file header).
    const attempt = await prepareAttempt(tx, {
      paymentId: payment.id,
      operation: 'ISSUE_KEY',
      orderId: row.orderId,
      amount: row.amount,
      leaseOwner,
      leaseExpiresAt,
      now,
      allowAfterUnknown: true,
    });
    return { paymentId: payment.id, attemptId: attempt.attemptId, hadUnknown: attempt.hadUnknown };
  }

  /** The registration's step after the call, in the engine's transaction that recorded the attempt. */
  async function recordIssuance(tx: Tx, row: RegistrationRow, claim: Claim, result: GatewayResult, leaseOwner: string, now: Date): Promise<CheckoutResult> {
    const ids = { registrationId: row.id, returnUrl: row.returnUrl };
    // Fenced on our lease, released with the move (or alone, when nothing was decided).
    const release = async (transition?: CheckoutTransition, data?: CheckoutMoveData) => {
      if (!(await releaseCheckout(tx, 'registration', row.id, leaseOwner, transition, data))) throw new StaleLeaseError(`registration ${row.id}`);
    };

    if (row.targetSubscriptionId) return recordPaymentMethod(tx, row, row.targetSubscriptionId, claim, result, leaseOwner, now, release);

    switch (result.outcome) {
      case 'SUCCEEDED': {
        const approvedAt = result.fields.transactionDateTime ?? now;
        const key = await storeBillingKey(tx, keyring, { registrationId: row.id, userId: row.userId, method: row.method, fields: result.fields });
        const initialPayment = row.issueKeyOnly ? undefined : { transactionId: result.fields.transactionId!, amount: row.amount, approvedAt };
        const subscription = await createSubscriptionFromRegistration(tx, {
          registration: row,
          billingKeyId: key.id,
          anchorAt: approvedAt,
          initialPayment,
          now,
          timezone: config.timezone,
        });
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'succeed', {
            subscriptionId: subscription.id,
            transactionId: result.fields.transactionId,
            approvedAt,
            attentionReason: null,
            failureCode: null,
            failureMessage: null,
          });
        }
        await release('complete', { completedAt: now, failureCode: null, failureMessage: null });
        log.info({ registrationId: row.id, subscriptionId: subscription.id }, 'registration completed');
        return success({ ...ids, subscriptionId: subscription.id, paymentId: claim.paymentId });
      }
      case 'DECLINED': {
        if (claim.hadUnknown) {
          // An earlier call's outcome is unknown; a decline now may mean that call went through. Not guessed.
          await release('hold', {
            failureCode: 'PAYMENT_OUTCOME_UNKNOWN',
            failureMessage: truncate(`replay declined: ${result.code} ${result.message ?? ''}`),
          });
          return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', { ...ids, paymentId: claim.paymentId });
        }
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'fail', { failureCode: result.code, failureMessage: result.message });
        }
        await release('fail', { failureCode: 'GATEWAY_DECLINED', failureMessage: truncate(`${result.code}: ${result.message ?? ''}`) });
        return failure('GATEWAY_DECLINED', result.message ?? 'The gateway declined', { ...ids, gatewayCode: result.code, paymentId: claim.paymentId });
      }
      case 'UNKNOWN': {
        if (claim.paymentId) {
          await transitionPayment(tx, claim.paymentId, 'lose', { attentionReason: result.reason });
        }
        await release('hold', { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: result.reason });
        log.warn({ registrationId: row.id, reason: result.reason }, 'registration needs attention: key issuance outcome unknown');
        return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', { ...ids, paymentId: claim.paymentId });
      }
      case 'NOT_SENT': {
        await release();
        return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', { ...ids, paymentId: claim.paymentId });
      }
    }
  }

  /**
   * A payment-method window's outcome (DESIGN.md §5): on success the new key replaces the old one and the old is
   * revoked, in this one transaction; CARD: a PAST_DUE subscription is due at once with its retries reset, its anchor
   * kept; MOBILE: the charge pays the owed cycle, clears the attention it raised and starts the new chain (its
   * anchor). A failed window changes nothing but its own payment. The subscription's lease is released either way.
   */
  async function recordPaymentMethod(
    tx: Tx,
    row: RegistrationRow,
    subscriptionId: string,
    claim: Claim,
    result: GatewayResult,
    leaseOwner: string,
    now: Date,
    release: (transition?: CheckoutTransition, data?: CheckoutMoveData) => Promise<void>,
  ): Promise<CheckoutResult> {
    const ids = { registrationId: row.id, returnUrl: row.returnUrl, subscriptionId };
    const sub = await tx.subscription.findUniqueOrThrow({ where: { id: subscriptionId } });
    const unknown = result.outcome === 'UNKNOWN' && claim.paymentId ? 'PAYMENT_OUTCOME_UNKNOWN' : undefined;
    if (!(await releaseSubscription(tx, subscriptionId, leaseOwner, unknown))) throw new StaleLeaseError(`subscription ${subscriptionId}`);

    if (result.outcome === 'SUCCEEDED') {
      const approvedAt = result.fields.transactionDateTime ?? now;
      const key = await storeBillingKey(tx, keyring, { registrationId: row.id, userId: row.userId, method: row.method, fields: result.fields });
      if (sub.status === 'CANCELED') {
        // Cancelled while the customer was in the window: nothing is swapped. A MOBILE charge did move money.
        await revokeBillingKey(tx, key.id, now);
        if (claim.paymentId)
          await transitionPayment(tx, claim.paymentId, 'succeed', {
            transactionId: result.fields.transactionId,
            approvedAt,
            attentionReason: CHARGED_AFTER_CANCEL,
          });
        await release('hold', {
          failureCode: CHARGED_AFTER_CANCEL,
          failureMessage: 'The subscription was cancelled during the window; refund the window’s payment if it charged',
        });
        log.warn({ registrationId: row.id, subscriptionId }, 'payment method approved for a cancelled subscription; an operator must refund any charge');
        return failure('INVALID_STATE', 'The subscription was cancelled', ids);
      }
      const mobile = row.method === 'MOBILE';
      const pastDueCard = !mobile && sub.status === 'PAST_DUE';
      await tx.subscription.update({
        where: { id: subscriptionId },
        data: {
          billingKeyId: key.id,
          method: row.method,
          itemCode: row.itemCode,
          amount: mobile ? row.amount : undefined,
          anchorAt: mobile ? approvedAt : undefined,
          nextChargeAt: pastDueCard ? now : undefined,
          // What a new key settles: the window that closed, a missing chain, a key revoked or unreadable.
          needsAttention: KEY_ATTENTION.includes(sub.attentionReason ?? '') ? false : undefined,
          attentionReason: KEY_ATTENTION.includes(sub.attentionReason ?? '') ? null : undefined,
        },
      });
      if (pastDueCard) {
        await tx.payment.updateMany({ where: { subscriptionId, cycle: sub.cycle, status: 'FAILED' }, data: { retriesFrom: now, nextRetryAt: null } });
      }
      if (mobile && claim.paymentId) {
        await applyChargeSuccess(tx, {
          subscriptionId,
          paymentId: claim.paymentId,
          cycle: claim.cycle!,
          dueAt: claim.dueAt!,
          amount: row.amount,
          transactionId: result.fields.transactionId!,
          approvedAt,
          timezone: config.timezone,
        });
      }
      if (sub.billingKeyId !== key.id) await revokeBillingKey(tx, sub.billingKeyId, now);
      await release('complete', { completedAt: now, failureCode: null, failureMessage: null });
      log.info({ registrationId: row.id, subscriptionId, method: row.method }, 'payment method replaced');
      return success({ ...ids, paymentId: claim.paymentId });
    }
    if (result.outcome === 'DECLINED') {
      if (claim.paymentId) await transitionPayment(tx, claim.paymentId, 'fail', { failureCode: result.code, failureMessage: result.message });
      await release('fail', { failureCode: 'GATEWAY_DECLINED', failureMessage: truncate(`${result.code}: ${result.message ?? ''}`) });
      return failure('GATEWAY_DECLINED', result.message ?? 'The gateway declined', { ...ids, gatewayCode: result.code, paymentId: claim.paymentId });
    }
    if (result.outcome === 'UNKNOWN') {
      if (claim.paymentId) await transitionPayment(tx, claim.paymentId, 'lose', { attentionReason: result.reason });
      await release('hold', { failureCode: 'PAYMENT_OUTCOME_UNKNOWN', failureMessage: result.reason });
      return failure('PAYMENT_OUTCOME_UNKNOWN', 'The gateway’s answer is unknown; an operator will resolve it', { ...ids, paymentId: claim.paymentId });
    }
    await release();
    return failure('GATEWAY_UNAVAILABLE', 'The gateway could not be reached; nothing was charged. Try again.', { ...ids, paymentId: claim.paymentId });
  }

  return { createRegistration, createPaymentMethodRegistration, getRegistration, handleSuccess: flow.handleSuccess, handleFail: flow.handleFail };
}

function truncate(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
