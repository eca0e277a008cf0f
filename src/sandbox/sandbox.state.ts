// The sandbox gateway's memory and the interface's rules (docs/gateways.md "The gateway client", docs/sandbox.md "The sandbox gateway"). Everything the
// sandbox knows lives here: hosted-window transactions, billing keys with their MOBILE chain, booked charges,
// the ledger of money moved, and queued faults. HTTP lives in sandbox.routes.ts.
// Every operation is synchronous over these maps; what it changed is collected as records (takeChanges) that a
// store can keep (sandbox.store.ts keeps them in PostgreSQL for the mounted sandbox), and a state can be restored
// from the records kept before (`restore`), so the sandbox remembers keys, chains and charges across restarts like
// the real gateway. Faults are test controls, not gateway state, and are not kept.
import { randomBytes } from 'node:crypto';
import { BILLING_CONFIRM_REQUEST, CANCEL_REQUEST, CONFIRM_PAYMENT_REQUEST, ISSUE_KEY_REQUEST, validateRequest, type RequestSchema } from '../gateway/fields.ts';
import type { PaymentMethod } from '../gateway/gateway.ts';
import type { DanalOperationName as GatewayOperationName } from '../gateway/types.ts';
import type { Clock } from '../lib/clock.ts';
import { createFaultQueue, type FaultQueue, type FaultSpec as AnyFaultSpec } from './faults.ts';
import { SandboxError } from './sandbox-error.ts';
import { createChangeLog, renumberLedger } from './sandbox.store.ts';
import { formatGatewayDateTime, KOREA_ZONE, MOBILE_WINDOW_DAYS, mobileWindowOffsetDays, sameCalendarMonth } from '../lib/calendar.ts';

export { SandboxError } from './sandbox-error.ts';
export type { FaultKind } from './faults.ts';
export type FaultSpec = AnyFaultSpec<GatewayOperationName>;

export interface WindowTerms {
  method: PaymentMethod;
  merchantId: string;
  orderId: string;
  orderName: string;
  amount: number;
  userId: string;
  successUrl: string;
  failUrl: string;
  issueKeyOnly: boolean;
  itemCode?: string;
  userName?: string;
  userPhoneNumber?: string;
}

interface WindowTransaction {
  id: string;
  terms: WindowTerms;
  createdAt: Date;
  usedBy?: 'ISSUE_KEY' | 'CONFIRM_PAYMENT';
}

interface ChainHead {
  transactionId: string;
  amount: number;
  at: Date;
}

interface SandboxKey {
  billingKey: string;
  method: PaymentMethod;
  merchantId: string;
  userId: string;
  phoneNumber: string;
  carrier?: string;
  chain?: ChainHead;
}

interface Charge {
  transactionId: string;
  method: PaymentMethod;
  merchantId: string;
  amount: number;
  remaining: number;
  at: Date;
  orderId?: string;
}

export interface LedgerEntry {
  seq: number;
  type: 'CHARGE' | 'CANCEL';
  operation: GatewayOperationName;
  method: PaymentMethod;
  merchantId: string;
  orderId?: string;
  transactionId: string;
  /** For a cancellation: the charge it cancels. */
  originalTransactionId?: string;
  amount: number;
  at: string;
  /** The 100-unit card check of an issueKeyOnly registration (cancelled at once). */
  verification?: boolean;
}

const CARRIERS = ['SKT', 'KTF', 'LGT'];
const CARD_NAMES = ['Sandbox Card', 'Hana Sandbox', 'Shinhan Sandbox'];
const WINDOW_TRANSACTION_TTL_MS = 30 * 60_000;
const VERIFICATION_AMOUNT = 100;

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function randomId(prefix: string, length: number): string {
  const bytes = randomBytes(length - prefix.length);
  let out = prefix;
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

function reject(statusCode: number, code: string, message: string): never {
  throw new SandboxError(statusCode, code, message);
}

function checkRequest(schema: RequestSchema, body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) reject(400, 'INVALID_REQUEST', 'request body must be a JSON object');
  const problems = validateRequest(schema, body as Record<string, unknown>);
  if (problems.length > 0) reject(400, 'INVALID_REQUEST', problems.join('; '));
  return body as Record<string, unknown>;
}

/** One thing the sandbox knows, as kept by a store: a window, a billing key, a charge, a used orderId, a ledger entry. */
export interface SandboxRecord {
  kind: 'window' | 'key' | 'charge' | 'order' | 'ledger';
  id: string;
  value: unknown;
}

/** With the queued faults and held calls (src/sandbox/faults.ts). */
export interface SandboxState extends FaultQueue<GatewayOperationName> {
  readonly merchantId: string;
  readonly clock: Clock;
  authorizeWindow(terms: WindowTerms): string;
  issueKey(method: PaymentMethod, body: unknown): Record<string, unknown>;
  confirmPayment(body: unknown): Record<string, unknown>;
  billingConfirm(body: unknown): Record<string, unknown>;
  cancel(body: unknown): Record<string, unknown>;
  ledger(): LedgerEntry[];
  /** Test and benchmark fixture: CARD billing keys as if issued with issueKeyOnly (nothing booked). */
  mintCardKeys(userIds: string[]): Array<{ billingKey: string; userId: string }>;
  /** Forgets everything, held calls aborted. */
  reset(): void;
  /** Adds what a store kept before (a state is restored once, before it serves). */
  restore(records: SandboxRecord[]): void;
  /** What operations changed since the last call, in order (to be kept by a store). */
  takeChanges(): SandboxRecord[];
}

/** JSON keeps dates as ISO strings: these fields come back as Dates. */
const reviveDates = <T>(value: T, fields: string[]): T => {
  const copy = { ...(value as Record<string, unknown>) };
  for (const field of fields) if (typeof copy[field] === 'string') copy[field] = new Date(copy[field] as string);
  return copy as T;
};

export function createSandboxState(options: { clock: Clock; merchantId: string }): SandboxState {
  const { clock, merchantId } = options;
  let windows = new Map<string, WindowTransaction>();
  let keys = new Map<string, SandboxKey>();
  let charges = new Map<string, Charge>();
  let orderIds = new Set<string>();
  let entries: LedgerEntry[] = [];
  const faultQueue = createFaultQueue<GatewayOperationName>();
  const changes = createChangeLog<SandboxRecord>();

  const now = () => clock.now();
  const changed = changes.record;
  const saveWindow = (window: WindowTransaction) => changed('window', window.id, window);
  const saveKey = (key: SandboxKey) => changed('key', key.billingKey, key);
  const saveCharge = (record: Charge) => changed('charge', record.transactionId, record);
  const useOrderId = (orderId: string) => {
    orderIds.add(orderId);
    changed('order', orderId, true);
  };

  function book(entry: Omit<LedgerEntry, 'seq' | 'at'>, at: Date): LedgerEntry {
    const booked = { ...entry, seq: entries.length + 1, at: at.toISOString() };
    entries.push(booked);
    changed('ledger', booked.transactionId, booked);
    return booked;
  }

  function charge(operation: GatewayOperationName, method: PaymentMethod, amount: number, orderId: string | undefined, at: Date, verification = false) {
    const transactionId = randomId('T', 18);
    const record = { transactionId, method, merchantId, amount, remaining: verification ? 0 : amount, at, orderId };
    charges.set(transactionId, record);
    saveCharge(record);
    book({ type: 'CHARGE', operation, method, merchantId, orderId, transactionId, amount, ...(verification ? { verification } : {}) }, at);
    return transactionId;
  }

  /** The interface's field rules, then the merchant: every operation starts here. */
  function acceptRequest(schema: RequestSchema, rawBody: unknown): Record<string, unknown> {
    const body = checkRequest(schema, rawBody);
    if (body.merchantId !== merchantId) reject(400, 'INVALID_MERCHANT', 'merchantId does not match the authenticated merchant');
    return body;
  }

  function takeWindow(body: Record<string, unknown>, use: 'ISSUE_KEY' | 'CONFIRM_PAYMENT'): WindowTransaction {
    const window = windows.get(String(body.transactionId));
    if (!window) reject(404, 'NOT_FOUND_TRANSACTION', 'no authenticated transaction with this transactionId');
    if (window.usedBy) reject(409, 'ALREADY_PROCESSED_TRANSACTION', 'this transactionId was already used');
    if (now().getTime() - window.createdAt.getTime() > WINDOW_TRANSACTION_TTL_MS) {
      reject(400, 'EXPIRED_TRANSACTION', 'the authentication has expired');
    }
    window.usedBy = use;
    saveWindow(window);
    return window;
  }

  return {
    ...faultQueue,
    merchantId,
    clock,

    authorizeWindow(terms) {
      if (terms.merchantId !== merchantId) reject(400, 'INVALID_MERCHANT', 'merchantId does not match this sandbox');
      const id = randomId('W', 18);
      const window = { id, terms, createdAt: now() };
      windows.set(id, window);
      saveWindow(window);
      return id;
    },

    issueKey(method, rawBody) {
      const body = acceptRequest(ISSUE_KEY_REQUEST, rawBody);
      const window = takeWindow(body, 'ISSUE_KEY');
      const { terms } = window;
      if (terms.method !== method) reject(400, 'METHOD_MISMATCH', `the window authenticated ${terms.method}, not ${method}`);
      if (method === 'MOBILE' && terms.issueKeyOnly) reject(400, 'NOT_SUPPORTED', 'MOBILE registration always approves its first payment');
      const at = now();
      const billingKey = randomId('BK', 20);
      const key: SandboxKey = {
        billingKey,
        method,
        merchantId,
        userId: terms.userId,
        phoneNumber: terms.userPhoneNumber ?? '01000000000',
      };
      let transactionId: string;
      if (terms.issueKeyOnly) {
        // The 100-unit check is charged and cancelled at once: nothing stays charged.
        transactionId = charge('ISSUE_KEY', method, VERIFICATION_AMOUNT, terms.orderId, at, true);
        book(
          {
            type: 'CANCEL',
            operation: 'ISSUE_KEY',
            method,
            merchantId,
            orderId: terms.orderId,
            transactionId: randomId('C', 18),
            originalTransactionId: transactionId,
            amount: VERIFICATION_AMOUNT,
            verification: true,
          },
          at,
        );
      } else {
        transactionId = charge('ISSUE_KEY', method, terms.amount, terms.orderId, at);
        useOrderId(terms.orderId);
      }
      if (method === 'MOBILE') {
        key.carrier = CARRIERS[terms.userId.length % CARRIERS.length];
        key.chain = { transactionId, amount: terms.amount, at };
      }
      keys.set(billingKey, key);
      saveKey(key);
      const response: Record<string, unknown> = {
        code: 'SUCCESS',
        message: 'The billing key was issued',
        transactionId,
        // A key-only registration answers the amount of its verification charge, as the charge it describes.
        amount: String(terms.issueKeyOnly ? VERIFICATION_AMOUNT : terms.amount),
        transactionDateTime: formatGatewayDateTime(at),
        orderId: terms.orderId,
        issueKeyOnly: terms.issueKeyOnly,
        billingKey,
      };
      if (terms.userName) response.userName = terms.userName;
      if (method === 'CARD') {
        if (terms.userPhoneNumber) response.userPhoneNumber = terms.userPhoneNumber;
        if (!terms.issueKeyOnly) {
          response.cardInfo = {
            cardCode: '11',
            cardName: CARD_NAMES[terms.userId.length % CARD_NAMES.length],
            cardNumber: `5365-10**-****-${String(1000 + ((terms.userId.length * 37) % 9000))}`,
            installmentMonth: '00',
            approvalNumber: randomId('', 8),
          };
        }
      } else {
        response.carrier = key.carrier;
        response.userPhoneNumber = key.phoneNumber;
      }
      return response;
    },

    confirmPayment(rawBody) {
      const body = acceptRequest(CONFIRM_PAYMENT_REQUEST, rawBody);
      const window = windows.get(String(body.transactionId));
      // Amount and method are checked before the transaction is consumed, so a refused confirm can be corrected.
      if (window && String(window.terms.amount) !== body.amount) {
        reject(400, 'AMOUNT_MISMATCH', 'amount differs from the amount the customer authenticated');
      }
      if (window && window.terms.method !== body.method) reject(400, 'METHOD_MISMATCH', 'method differs from the window');
      const taken = takeWindow(body, 'CONFIRM_PAYMENT');
      const at = now();
      const transactionId = charge('CONFIRM_PAYMENT', taken.terms.method, taken.terms.amount, taken.terms.orderId, at);
      const response: Record<string, unknown> = {
        code: 'SUCCESS',
        message: 'The payment was approved',
        transactionId,
        amount: String(taken.terms.amount),
        orderId: taken.terms.orderId,
        transactionDateTime: formatGatewayDateTime(at),
      };
      if (taken.terms.method === 'MOBILE') {
        response.carrier = CARRIERS[taken.terms.userId.length % CARRIERS.length];
        response.phoneNumber = taken.terms.userPhoneNumber ?? '01000000000';
      }
      return response;
    },

    billingConfirm(rawBody) {
      const body = acceptRequest(BILLING_CONFIRM_REQUEST, rawBody);
      const key = keys.get(String(body.billingKey));
      if (!key || key.merchantId !== merchantId) reject(404, 'INVALID_BILLING_KEY', 'unknown billing key');
      if (key.method !== body.method) reject(400, 'METHOD_MISMATCH', `the billing key is for ${key.method}`);
      const orderId = String(body.orderId);
      if (orderIds.has(orderId)) reject(409, 'DUPLICATED_ORDER_ID', 'orderId was already used for a payment');
      const amount = body.amount as number;
      const at = now();
      if (key.method === 'MOBILE') {
        const head = key.chain!;
        if (body.lastTransactionId !== head.transactionId) {
          reject(400, 'MOBILE_LAST_TRANSACTION_MISMATCH', 'lastTransactionId is not the previous transaction of this billing key');
        }
        if (amount !== head.amount) reject(400, 'MOBILE_AMOUNT_MISMATCH', 'amount must equal the previous month’s amount');
        const offset = mobileWindowOffsetDays(head.at, at, KOREA_ZONE);
        if (Math.abs(offset) > MOBILE_WINDOW_DAYS) {
          reject(400, 'MOBILE_DATE_OUT_OF_RANGE', `request date is ${offset} days from one month after the previous transaction`);
        }
      }
      const transactionId = charge('BILLING_CONFIRM', key.method, amount, orderId, at);
      useOrderId(orderId);
      const response: Record<string, unknown> = {
        code: 'SUCCESS',
        message: 'The payment was approved',
        transactionId,
        amount: String(amount),
        orderId,
        transactionDateTime: formatGatewayDateTime(at),
      };
      if (key.method === 'MOBILE') {
        key.chain = { transactionId, amount, at };
        saveKey(key);
        // The interface's example names this field phoneNumber, its table userPhoneNumber; clients accept both.
        response.phoneNumber = key.phoneNumber;
        response.carrier = key.carrier;
      }
      return response;
    },

    cancel(rawBody) {
      const body = acceptRequest(CANCEL_REQUEST, rawBody);
      const original = charges.get(String(body.transactionId));
      if (!original) reject(404, 'NOT_FOUND_TRANSACTION', 'no payment with this transactionId');
      if (original.method !== body.method) reject(400, 'METHOD_MISMATCH', `the payment was made with ${original.method}`);
      const amount = Number(body.amount);
      if (original.remaining === 0) reject(409, 'ALREADY_CANCELED', 'the payment was already cancelled in full');
      if (amount > original.remaining) reject(400, 'CANCEL_AMOUNT_EXCEEDED', `at most ${original.remaining} can be cancelled`);
      if (body.cancelType === 'C' && amount !== original.remaining) {
        reject(400, 'INVALID_CANCEL_AMOUNT', 'a full cancellation must cancel the whole remaining amount');
      }
      const at = now();
      if (original.method === 'MOBILE') {
        if (body.cancelType !== 'C' || amount !== original.amount) {
          reject(400, 'MOBILE_PARTIAL_CANCEL_NOT_ALLOWED', 'phone payments can only be cancelled in full');
        }
        if (!sameCalendarMonth(original.at, at, KOREA_ZONE)) {
          reject(400, 'MOBILE_CANCEL_PERIOD_EXPIRED', 'phone payments can only be cancelled within the month of payment');
        }
      }
      original.remaining -= amount;
      saveCharge(original);
      const transactionId = randomId('C', 18);
      book(
        {
          type: 'CANCEL',
          operation: 'CANCEL',
          method: original.method,
          merchantId,
          orderId: original.orderId,
          transactionId,
          originalTransactionId: original.transactionId,
          amount,
        },
        at,
      );
      return {
        code: 'SUCCESS',
        message: 'The payment was cancelled',
        transactionId,
        cancelAmount: String(amount),
        remainingAmount: String(original.remaining),
        transactionDateTime: formatGatewayDateTime(at),
      };
    },

    ledger: () => entries.map((entry) => ({ ...entry })),

    mintCardKeys(userIds) {
      return userIds.map((userId) => {
        const billingKey = randomId('BK', 20);
        const key: SandboxKey = { billingKey, method: 'CARD', merchantId, userId, phoneNumber: '01000000000' };
        keys.set(billingKey, key);
        saveKey(key);
        return { billingKey, userId };
      });
    },

    reset() {
      faultQueue.reset();
      windows = new Map();
      keys = new Map();
      charges = new Map();
      orderIds = new Set();
      entries = [];
      changes.take();
    },

    restore(records) {
      for (const record of records) {
        if (record.kind === 'window') windows.set(record.id, reviveDates(record.value as WindowTransaction, ['createdAt']));
        else if (record.kind === 'key') {
          const key = record.value as SandboxKey;
          keys.set(record.id, key.chain ? { ...key, chain: reviveDates(key.chain, ['at']) } : key);
        } else if (record.kind === 'charge') charges.set(record.id, reviveDates(record.value as Charge, ['at']));
        else if (record.kind === 'order') orderIds.add(record.id);
        else entries.push(record.value as LedgerEntry);
      }
      renumberLedger(entries);
    },

    takeChanges: () => changes.take(),
  };
}
