// The Toss sandbox's memory and Toss's rules (docs/sandbox.md "The Toss sandbox"; each fact and its source:
// toss.routes.ts). Everything it knows lives here: the window's single-use authKeys, billing keys bound to their
// customerKey, payments with their cancels and balance, the orderIds approved, the answers kept for Idempotency-Key
// replays, the ledger of money moved, and queued faults. HTTP lives in toss.routes.ts.
// Operations are synchronous over these maps; what they change is collected as records (takeChanges) that a store
// can keep, and `restore` puts records kept before back, as the Danal sandbox does.
import { createFaultQueue, type FaultQueue, type Processed } from '../faults.ts';
import { SandboxError } from '../sandbox-error.ts';
import { createChangeLog, renumberLedger } from '../sandbox.store.ts';
import type { Clock } from '../../lib/clock.ts';
import {
  cardFor,
  koreaDateTime,
  newApproveNo,
  newAuthKey,
  newBillingKey,
  newPaymentKey,
  newTransactionKey,
  renderBillingKey,
  renderPayment,
  type TossBillingKey,
  type TossPayment,
} from './toss-objects.ts';

export type TossOperation = 'ISSUE_BILLING_KEY' | 'CHARGE' | 'CANCEL' | 'LOOKUP' | 'SETTLEMENTS' | 'DELETE_BILLING_KEY';
export const TOSS_OPERATIONS: Array<TossOperation | 'ANY'> = ['ANY', 'ISSUE_BILLING_KEY', 'CHARGE', 'CANCEL', 'LOOKUP', 'SETTLEMENTS', 'DELETE_BILLING_KEY'];

export interface TossLedgerEntry {
  seq: number;
  type: 'CHARGE' | 'CANCEL';
  paymentKey: string;
  /** The charge's or the cancel's own transaction. */
  transactionKey: string;
  orderId: string;
  customerKey: string;
  amount: number;
  at: string;
}

/** One thing the sandbox knows, as a store keeps it. */
export interface TossRecord {
  kind: 'auth' | 'key' | 'payment' | 'order' | 'answer' | 'ledger';
  id: string;
  value: unknown;
}

interface AuthKey {
  authKey: string;
  customerKey: string;
  createdAt: string;
  used: boolean;
}

interface KeptAnswer extends Processed {
  /** When the key was first used: it is kept 15 days from then. */
  since: string;
}

/** What an Idempotency-Key finds: the first answer, the first call still running, or nothing yet. */
export type IdempotencyLookup = { kind: 'replay'; answer: Processed } | { kind: 'in-flight' } | { kind: 'new'; since: string };

export const CARD_MINIMUM_AMOUNT = 100;
export const IDEMPOTENCY_KEPT_MS = 15 * 24 * 3600_000;
export const CONSECUTIVE_CANCEL_MS = 1000;
const ORDER_ID = /^[A-Za-z0-9_=-]{6,64}$/;
const ORDER_NAME_MAX = 100;
const CANCEL_REASON_MAX = 200;

export interface TossSandboxState extends FaultQueue<TossOperation> {
  readonly clock: Clock;
  readonly mId: string;
  /** A single-use authKey for customerKey, as the window's success redirect carries it. */
  authorize(customerKey: string): string;
  issueBillingKey(body: unknown): Record<string, unknown>;
  charge(billingKey: string, body: unknown): Record<string, unknown>;
  /** A charge the card refused (a decline fault): kept ABORTED with its failure, nothing booked, orderId still free. */
  abort(billingKey: string, body: unknown, failure: { code: string; message: string }): void;
  cancel(paymentKey: string, body: unknown): Record<string, unknown>;
  /** Deletes a billing key (assumed call, toss.routes.ts): charges with it are refused from then on. */
  deleteBillingKey(billingKey: string): Record<string, unknown>;
  paymentByKey(paymentKey: string): Record<string, unknown>;
  paymentByOrderId(orderId: string): Record<string, unknown>;
  ledger(): TossLedgerEntry[];
  /** Test and benchmark fixture: billing keys as if each customer had passed the window. */
  mintBillingKeys(customerKeys: string[]): Array<{ billingKey: string; customerKey: string }>;
  /** Starts a call under an Idempotency-Key scope (the key with the call's method and path). */
  beginIdempotent(scope: string): IdempotencyLookup;
  /** Ends it: with the answer to replay from now on, or without one (the call was never processed). */
  finishIdempotent(scope: string, since: string, answer?: Processed): void;
  reset(): void;
  restore(records: TossRecord[]): void;
  takeChanges(): TossRecord[];
}

function reject(statusCode: number, code: string, message: string): never {
  throw new SandboxError(statusCode, code, message);
}

function jsonObject(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) reject(400, 'INVALID_REQUEST', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

function text(body: Record<string, unknown>, name: string, max = 300): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0) reject(400, 'INVALID_REQUEST', `${name} is required (a string)`);
  if (value.length > max) reject(400, 'INVALID_REQUEST', `${name} is at most ${max} characters`);
  return value;
}

/** Amounts are JSON integers: "9900", 9900.5 and true are not amounts. */
function amount(body: Record<string, unknown>, name: string, required: boolean): number | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    reject(400, 'INVALID_REQUEST', `${name} must be a positive integer JSON number`);
  }
  return value;
}

interface ChargeTerms {
  customerKey: string;
  amount: number;
  orderId: string;
  orderName: string;
}

function chargeTerms(rawBody: unknown): ChargeTerms {
  const body = jsonObject(rawBody);
  const terms = {
    customerKey: text(body, 'customerKey'),
    amount: amount(body, 'amount', true)!,
    orderId: text(body, 'orderId'),
    orderName: text(body, 'orderName', ORDER_NAME_MAX),
  };
  if (!ORDER_ID.test(terms.orderId)) reject(400, 'INVALID_REQUEST', 'orderId is 6 to 64 characters of A-Z, a-z, 0-9, -, _ and =');
  return terms;
}

export function createTossSandboxState(options: { clock: Clock; mId: string }): TossSandboxState {
  const { clock, mId } = options;
  const faultQueue = createFaultQueue<TossOperation>();
  let authKeys = new Map<string, AuthKey>();
  let keys = new Map<string, TossBillingKey>();
  let payments = new Map<string, TossPayment>();
  /** orderId → the paymentKey of its approval (once approved, for good). */
  let approvedOrders = new Map<string, string>();
  /** orderId → the paymentKey of its last refused attempt (looked up when nothing was approved). */
  let abortedOrders = new Map<string, string>();
  let answers = new Map<string, KeptAnswer>();
  const inFlight = new Set<string>();
  let entries: TossLedgerEntry[] = [];
  const changes = createChangeLog<TossRecord>();

  const now = () => clock.now().toISOString();
  const changed = changes.record;
  const savePayment = (payment: TossPayment) => changed('payment', payment.paymentKey, payment);

  function book(entry: Omit<TossLedgerEntry, 'seq'>): void {
    const booked = { ...entry, seq: entries.length + 1 };
    entries.push(booked);
    changed('ledger', booked.transactionKey, booked);
  }

  function keyFor(billingKey: string, customerKey: string): TossBillingKey {
    const key = keys.get(billingKey);
    if (!key || key.deletedAt) reject(400, 'INVALID_BILL_KEY_REQUEST', 'no billing key with this value was issued');
    if (key.customerKey !== customerKey) reject(400, 'NOT_MATCHES_CUSTOMER_KEY', 'customerKey differs from the one the billing key was issued to');
    return key;
  }

  function found(paymentKey: string | undefined): TossPayment {
    const payment = paymentKey === undefined ? undefined : payments.get(paymentKey);
    if (!payment) reject(404, 'NOT_FOUND_PAYMENT', 'no payment with this key');
    return payment;
  }

  function issueKey(customerKey: string, at: string): TossBillingKey {
    const key: TossBillingKey = { billingKey: newBillingKey(), customerKey, authenticatedAt: at, card: cardFor(customerKey) };
    keys.set(key.billingKey, key);
    changed('key', key.billingKey, key);
    return key;
  }

  function newPayment(key: TossBillingKey, terms: ChargeTerms, at: string): TossPayment {
    return {
      paymentKey: newPaymentKey(),
      orderId: terms.orderId,
      orderName: terms.orderName,
      customerKey: key.customerKey,
      billingKey: key.billingKey,
      status: 'DONE',
      totalAmount: terms.amount,
      balanceAmount: terms.amount,
      requestedAt: at,
      lastTransactionKey: newTransactionKey(),
      card: key.card,
      cancels: [],
    };
  }

  return {
    ...faultQueue,
    clock,
    mId,

    authorize(customerKey) {
      const auth: AuthKey = { authKey: newAuthKey(), customerKey, createdAt: now(), used: false };
      authKeys.set(auth.authKey, auth);
      changed('auth', auth.authKey, auth);
      return auth.authKey;
    },

    issueBillingKey(rawBody) {
      const body = jsonObject(rawBody);
      const authKey = text(body, 'authKey');
      const customerKey = text(body, 'customerKey');
      const auth = authKeys.get(authKey);
      if (!auth) reject(400, 'INVALID_REQUEST', 'no billing authentication with this authKey');
      if (auth.used) reject(400, 'INVALID_REQUEST', 'this authKey was already used');
      if (auth.customerKey !== customerKey) reject(400, 'NOT_MATCHES_CUSTOMER_KEY', 'customerKey differs from the one the card was authenticated for');
      auth.used = true;
      changed('auth', auth.authKey, auth);
      return renderBillingKey(issueKey(customerKey, now()), mId);
    },

    charge(billingKey, rawBody) {
      const terms = chargeTerms(rawBody);
      const key = keyFor(billingKey, terms.customerKey);
      if (terms.amount < CARD_MINIMUM_AMOUNT) reject(400, 'BELOW_MINIMUM_AMOUNT', `a card payment is at least ${CARD_MINIMUM_AMOUNT} won`);
      const approved = approvedOrders.get(terms.orderId);
      if (approved !== undefined) {
        const first = payments.get(approved)!;
        // The same charge sent again (same key, same amount) vs another charge reusing the orderId.
        if (first.billingKey === billingKey && first.totalAmount === terms.amount) {
          reject(400, 'ALREADY_PROCESSED_PAYMENT', 'this order was already paid');
        }
        reject(400, 'DUPLICATED_ORDER_ID', 'this orderId was already approved; use another orderId');
      }
      const at = now();
      const payment = { ...newPayment(key, terms, at), approvedAt: at, approveNo: newApproveNo() };
      payments.set(payment.paymentKey, payment);
      savePayment(payment);
      approvedOrders.set(payment.orderId, payment.paymentKey);
      changed('order', payment.orderId, payment.paymentKey);
      book({
        type: 'CHARGE',
        paymentKey: payment.paymentKey,
        transactionKey: payment.lastTransactionKey,
        orderId: payment.orderId,
        customerKey: payment.customerKey,
        amount: payment.totalAmount,
        at,
      });
      return renderPayment(payment, mId);
    },

    abort(billingKey, rawBody, failure) {
      // Only a charge that would have passed the request's own rules reaches the card to be refused.
      let terms: ChargeTerms;
      let key: TossBillingKey;
      try {
        terms = chargeTerms(rawBody);
        key = keyFor(billingKey, terms.customerKey);
      } catch {
        return;
      }
      const payment: TossPayment = { ...newPayment(key, terms, now()), status: 'ABORTED', failure };
      payments.set(payment.paymentKey, payment);
      savePayment(payment);
      abortedOrders.set(payment.orderId, payment.paymentKey);
      changed('order', `aborted:${payment.orderId}`, payment.paymentKey);
    },

    cancel(paymentKey, rawBody) {
      const body = jsonObject(rawBody);
      const cancelReason = text(body, 'cancelReason', CANCEL_REASON_MAX);
      const asked = amount(body, 'cancelAmount', false);
      const payment = found(paymentKey);
      const at = now();
      // Toss takes one cancel request per payment per second: a second one within the second is refused.
      if (payment.lastCancelRequestAt && Date.parse(at) - Date.parse(payment.lastCancelRequestAt) < CONSECUTIVE_CANCEL_MS) {
        reject(403, 'FORBIDDEN_CONSECUTIVE_REQUEST', 'a cancel request for this payment came less than a second after the last one');
      }
      payment.lastCancelRequestAt = at;
      savePayment(payment);
      if (payment.status === 'ABORTED') reject(403, 'NOT_CANCELABLE_PAYMENT', 'this payment was not approved');
      if (payment.balanceAmount === 0) reject(400, 'ALREADY_CANCELED_PAYMENT', 'this payment was already cancelled in full');
      const cancelAmount = asked ?? payment.balanceAmount;
      if (cancelAmount > payment.balanceAmount) reject(403, 'NOT_CANCELABLE_AMOUNT', `at most ${payment.balanceAmount} won can be cancelled`);
      payment.balanceAmount -= cancelAmount;
      payment.status = payment.balanceAmount === 0 ? 'CANCELED' : 'PARTIAL_CANCELED';
      const transactionKey = newTransactionKey();
      payment.lastTransactionKey = transactionKey;
      payment.cancels.push({ transactionKey, cancelReason, cancelAmount, refundableAmount: payment.balanceAmount, canceledAt: at });
      savePayment(payment);
      book({ type: 'CANCEL', paymentKey, transactionKey, orderId: payment.orderId, customerKey: payment.customerKey, amount: cancelAmount, at });
      return renderPayment(payment, mId);
    },

    deleteBillingKey(billingKey) {
      const key = keys.get(billingKey);
      if (!key || key.deletedAt) reject(400, 'INVALID_BILL_KEY_REQUEST', 'no billing key with this value was issued');
      key.deletedAt = now();
      changed('key', key.billingKey, key);
      return { mId, customerKey: key.customerKey, deletedAt: koreaDateTime(key.deletedAt) };
    },

    paymentByKey: (paymentKey) => renderPayment(found(paymentKey), mId),

    paymentByOrderId: (orderId) => renderPayment(found(approvedOrders.get(orderId) ?? abortedOrders.get(orderId)), mId),

    ledger: () => entries.map((entry) => ({ ...entry })),

    mintBillingKeys(customerKeys) {
      const at = now();
      return customerKeys.map((customerKey) => ({ billingKey: issueKey(customerKey, at).billingKey, customerKey }));
    },

    beginIdempotent(scope) {
      const kept = answers.get(scope);
      const at = now();
      if (kept && Date.parse(at) - Date.parse(kept.since) < IDEMPOTENCY_KEPT_MS) return { kind: 'replay', answer: { status: kept.status, body: kept.body } };
      if (inFlight.has(scope)) return { kind: 'in-flight' };
      inFlight.add(scope);
      return { kind: 'new', since: at };
    },

    finishIdempotent(scope, since, answer) {
      inFlight.delete(scope);
      if (!answer) return;
      const kept = { status: answer.status, body: answer.body, since };
      answers.set(scope, kept);
      changed('answer', scope, kept);
    },

    reset() {
      faultQueue.reset();
      authKeys = new Map();
      keys = new Map();
      payments = new Map();
      approvedOrders = new Map();
      abortedOrders = new Map();
      answers = new Map();
      inFlight.clear();
      entries = [];
      changes.take();
    },

    restore(records) {
      for (const { kind, id, value } of records) {
        if (kind === 'auth') authKeys.set(id, value as AuthKey);
        else if (kind === 'key') keys.set(id, value as TossBillingKey);
        else if (kind === 'payment') payments.set(id, value as TossPayment);
        else if (kind === 'order' && id.startsWith('aborted:')) abortedOrders.set(id.slice('aborted:'.length), value as string);
        else if (kind === 'order') approvedOrders.set(id, value as string);
        else if (kind === 'answer') answers.set(id, value as KeptAnswer);
        else entries.push(value as TossLedgerEntry);
      }
      renumberLedger(entries);
    },

    takeChanges: () => changes.take(),
  };
}
