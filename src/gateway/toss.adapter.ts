// Toss Payments behind the gateway interface (gateway.ts; docs/gateways.md "The gateway client"): card automatic
// billing (자동결제) over Toss's REST API, on the shared HTTP (http-call.ts), classified by Toss's one outcome table
// (toss.capabilities.ts). Every call answers one outcome class and never throws for a gateway or network failure.
//
// The Toss facts this adapter relies on. "Documented": read on docs.tosspayments.com (page named) or on Toss's
// developer forum (techchat.tosspayments.com) where Toss's staff answer with request logs. "Assumed": not confirmed
// there (why given). The sandbox (src/sandbox/toss/toss.routes.ts) lists the same facts as it enforces them.
// - Basic auth: base64(secretKey + ":"), no password. Documented (reference/using-api/authorization).
// - Keys: test_sk_/test_ck_ are test keys, live_sk_/live_ck_ live ones. Documented (reference/using-api/authorization;
//   resources/faq). Payment-widget keys carry _gsk_/_gck_ (documented: guides/payment-widget/integration's test keys);
//   that they do not authenticate the billing API is assumed (the widget and the API individual keys are issued
//   apart; src/config.ts refuses them).
// - Errors are {code, message} with an HTTP status; an earlier payment's refusal is kept in its `failure`.
//   Documented (reference/error-codes). Statuses of the codes the outcome table names: ALREADY_PROCESSED_PAYMENT,
//   PROVIDER_ERROR, INVALID_API_KEY, INVALID_REJECT_CARD, BELOW_MINIMUM_AMOUNT, INVALID_CARD_EXPIRATION and
//   INVALID_STOPPED_CARD are 400 (documented there); DUPLICATED_ORDER_ID and NOT_MATCHES_CUSTOMER_KEY are billing
//   approval errors (documented: forum, quoting the reference). What each code means for the money (the outcome
//   table) is our reading of its message, not Toss's word: assumed.
// - A 5xx, a timeout, a reset or an unreadable body may hide a booked charge. Assumed (nothing says otherwise; the
//   idempotency page tells clients to resend under the same key after a timeout, which we leave to the inquiry).
// - POST /v1/billing/authorizations/issue {authKey, customerKey} answers the billing key object with `billingKey`,
//   `customerKey`, `cardCompany`, `card`. The call and body: documented in every public client seen and Toss's guide
//   as summarised by developers; the answer's fields: assumed from secondary sources (the reference page was not
//   readable here).
// - POST /v1/billing/{billingKey} {customerKey, amount, orderId, orderName} approves at once and answers the Payment
//   object (paymentKey, orderId, status DONE, totalAmount, approvedAt with +09:00, card). Documented: the Payment
//   object (reference/error-codes shows it whole); the call in the forum's request logs. Assumed: an approval is
//   answered 200 with status DONE (never READY or IN_PROGRESS for a card billing charge).
// - Idempotency-Key (at most 300 characters) on a POST replays the first answer for 15 days from the first request,
//   keyed by the key, the API key, the path and the method. Documented (guides/using-api/idempotency-key; the forum
//   confirms the body is not compared). 409 IDEMPOTENT_REQUEST_PROCESSING while the first runs: the sandbox's list
//   cites the same page for it; not confirmed here (the part of the page read did not reach it), so assumed.
// - GET /v1/payments/orders/{orderId} answers the Payment of an orderId, 404 NOT_FOUND_PAYMENT for none. Documented
//   (reference/error-codes: its example error). Payment statuses READY, IN_PROGRESS, WAITING_FOR_DEPOSIT, DONE,
//   CANCELED, PARTIAL_CANCELED, ABORTED, EXPIRED: documented (the Payment object). Assumed: by orderId the approval
//   wins over refused attempts of the same orderId.
// - POST /v1/payments/{paymentKey}/cancel {cancelReason, cancelAmount?}: without cancelAmount the whole balance;
//   partial cancels append to `cancels`, the status becoming PARTIAL_CANCELED, then CANCELED. Documented
//   (guides/apis/cancel-payment). A second cancel of one payment within a second is refused (documented there).
// - GET /v1/settlements?startDate&endDate (yyyy-MM-dd)&page&size answers an array of lines (paymentKey, orderId,
//   amount, fees, approvedAt, soldDate, paidOutDate, cancel; a cancel's line negative). Documented
//   (guides/apis/settlements). Assumed: pages count from 1 and a short page is the last (not stated on the page read).
// - Deleting a billing key: no Toss page read here documents a call for it: it is configured (TOSS_KEY_DELETION),
//   and without it the keyDeletion capability is off and revoking a key is ours alone.
// - Card numbers in answers are masked; they are still kept out of what we store (`raw`), as are a key, a secret
//   and a phone number (invariant 8).
import type { Logger } from 'pino';
import { REDACTED, type Redactor } from '../lib/redact.ts';
import {
  verdictOf,
  type CardInfo,
  type GatewayAdapter,
  type GatewayWindow,
  type GatewayFields,
  type GatewayOperationName,
  type GatewayResult,
  type OutcomeReason,
  type SettlementFeedLine,
} from './gateway.ts';
import { basicAuthorization, createHttpTransport, readAnswer, timedCall, type Classified, type HttpRequest } from './http-call.ts';
import { TOSS_APPROVED_STATUS, TOSS_CANCELED_STATUSES, TOSS_NOT_FOUND, TOSS_OUTCOMES, TOSS_UNPAID_STATUSES, tossCapabilities } from './toss.capabilities.ts';

export interface TossAdapterOptions {
  /** Toss's API root (https://api.tosspayments.com), or the sandbox's. */
  baseUrl: string;
  secretKey: string;
  /** Per call, as Danal's (PAYMENT_TIMEOUT_MS). */
  timeoutMs: number;
  /** The call that deletes a billing key (TOSS_KEY_DELETION): `{billingKey}` in the path. Without it, no deletion. */
  keyDeletion?: { method: 'DELETE' | 'POST'; path: string };
  /** The billing-authentication window's client key (TOSS_CLIENT_KEY, or the sandbox's) and the page opening it, if ours. */
  window?: GatewayWindow;
  log: Pick<Logger, 'info' | 'warn'>;
  redactor: Redactor;
}

const ORDER_ID = /^[A-Za-z0-9_=-]{6,64}$/;
const ORDER_NAME_MAX = 100;
const CANCEL_REASON_MAX = 200;
const IDEMPOTENCY_KEY_MAX = 300;
/** Settlement lines asked per page (Toss's default page size, assumed). */
export const TOSS_SETTLEMENT_PAGE_SIZE = 100;

/** Keys of an answer that hold a card number, an account number, a payment's secret or a customer's contact. */
const PERSONAL_KEYS = new Set(['cardnumber', 'number', 'accountnumber', 'secret', 'customermobilephone', 'customeremail', 'customername']);

/** A copy of an answer without card numbers, secrets and contacts (the redactor takes keys, secrets and phones). */
export function scrubTossAnswer<T>(value: T): T {
  if (Array.isArray(value)) return value.map(scrubTossAnswer) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = PERSONAL_KEYS.has(key.toLowerCase()) && item !== null ? REDACTED : scrubTossAnswer(item);
  return out as T;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const int = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);
const obj = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

function instant(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

function cardOf(body: Record<string, unknown>): CardInfo | undefined {
  const card = obj(body.card);
  if (!card) return undefined;
  const months = int(card.installmentPlanMonths);
  return {
    cardCode: str(card.issuerCode),
    cardName: str(body.cardCompany),
    cardNumber: str(card.number) ?? str(body.cardNumber),
    installmentMonth: months === undefined ? undefined : String(months),
    approvalNumber: str(card.approveNo),
  };
}

/** What the engine records of a Payment object: paymentKey as the transactionId, its amount, approval, card. */
function paymentFields(body: Record<string, unknown>): GatewayFields {
  const cancels = Array.isArray(body.cancels) ? body.cancels.map(obj).filter((c) => c !== undefined) : [];
  const last = cancels.at(-1);
  return {
    transactionId: str(body.paymentKey),
    amount: int(body.totalAmount),
    orderId: str(body.orderId),
    transactionDateTime: instant(body.approvedAt),
    cardInfo: cardOf(body),
    cancelAmount: last ? int(last.cancelAmount) : undefined,
    extra: {
      paymentStatus: body.status,
      balanceAmount: body.balanceAmount,
      lastTransactionKey: body.lastTransactionKey,
      ...(last ? { cancelTransactionKey: last.transactionKey } : {}),
    },
  };
}

type Base = Pick<GatewayResult, 'operation' | 'httpStatus' | 'code' | 'message' | 'raw'>;
/** What a 2xx answer means for one operation (its JSON object, or undefined when it is none). */
type ReadSuccess = (json: Record<string, unknown> | undefined, base: Base, body: unknown) => Classified;

const unknownOf = (base: Base, reason: OutcomeReason, detail: string, fields: GatewayFields = { extra: {} }): Classified => ({
  ...base,
  outcome: 'UNKNOWN',
  reason,
  detail,
  fields,
});

/**
 * One Toss answer: nothing complete → as far as the request got; a 5xx → UNKNOWN; a 2xx → the operation's own
 * reading; any other status must be {code, message}, classified by Toss's outcome table (unreadable: UNKNOWN).
 */
function classify(operation: GatewayOperationName, transport: Parameters<typeof readAnswer>[1], redactor: Redactor, success: ReadSuccess): Classified {
  const read = readAnswer(operation, transport, redactor, scrubTossAnswer);
  if ('final' in read) return read.final;
  const { status, body, json, raw, code, message } = read.answer;
  const base: Base = { operation, httpStatus: status, code, message, raw };
  if (status >= 500) return unknownOf(base, 'HTTP_5XX', `HTTP ${status}`);
  if (status >= 200 && status <= 299) return success(json, base, body);
  if (!json || code === undefined) return unknownOf(base, 'MALFORMED_BODY', 'error answer is not a JSON object with a code');
  const verdict = verdictOf(TOSS_OUTCOMES, code);
  const fields: GatewayFields = { extra: {} };
  if (verdict.outcome === 'DECLINED') return { ...base, outcome: 'DECLINED', reason: 'DECLINED', decline: verdict.decline, fields };
  if (verdict.outcome === 'NOT_SENT') return { ...base, outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED', fields };
  if (verdict.outcome === 'UNKNOWN') return unknownOf(base, 'MAY_HAVE_CHARGED', `code ${code} may have charged`);
  return unknownOf(base, 'UNEXPECTED_STATUS', `${code} with HTTP ${status}`);
}

/** An approved charge: status DONE, the orderId and amount we sent, a paymentKey. */
function readCharge(expect: { orderId: string; amount: number }): ReadSuccess {
  return (json, base) => {
    if (!json) return unknownOf(base, 'MALFORMED_BODY', 'approval is not a JSON object');
    const fields = paymentFields(json);
    if (json.status !== TOSS_APPROVED_STATUS) return unknownOf(base, 'UNEXPECTED_STATUS', `payment status ${String(json.status)}`, fields);
    if (fields.orderId !== expect.orderId)
      return unknownOf(base, 'ORDER_ID_MISMATCH', `Toss answered orderId ${fields.orderId}, we sent ${expect.orderId}`, fields);
    if (fields.amount !== expect.amount)
      return unknownOf(base, 'AMOUNT_MISMATCH', `Toss answered totalAmount ${String(json.totalAmount)}, we sent ${expect.amount}`, fields);
    if (!fields.transactionId) return unknownOf(base, 'MISSING_TRANSACTION_ID', 'approved without a paymentKey', fields);
    return { ...base, outcome: 'SUCCEEDED', reason: 'APPROVED', fields };
  };
}

function localRefusal(operation: GatewayOperationName, problems: string[]): Classified | undefined {
  if (problems.length === 0) return undefined;
  return { operation, outcome: 'NOT_SENT', reason: 'INVALID_REQUEST', detail: problems.join('; '), fields: { extra: {} } };
}

function chargeProblems(input: { method: string; customerKey?: string; amount: number; orderId: string; orderName: string }): string[] {
  const problems: string[] = [];
  if (input.method !== 'CARD') problems.push(`Toss takes CARD only, not ${input.method}`);
  if (!input.customerKey) problems.push('customerKey is required');
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) problems.push('amount must be a positive whole number');
  if (!ORDER_ID.test(input.orderId)) problems.push('orderId is 6 to 64 characters of A-Z, a-z, 0-9, -, _ and =');
  if (input.orderName.length === 0 || input.orderName.length > ORDER_NAME_MAX) problems.push(`orderName is 1 to ${ORDER_NAME_MAX} characters`);
  return problems;
}

/** A settlement line in the statement's terms, or undefined when it lacks what matching needs. */
function feedLine(value: unknown): SettlementFeedLine | undefined {
  const line = obj(value);
  const amount = int(line?.amount);
  const paymentKey = str(line?.paymentKey);
  if (!line || amount === undefined || !paymentKey) return undefined;
  const cancel = obj(line.cancel);
  const type = cancel || amount < 0 ? 'CANCEL' : 'APPROVAL';
  const tradedAt = instant(cancel?.canceledAt) ?? instant(line.approvedAt);
  if (!tradedAt) return undefined;
  const fees = Array.isArray(line.fees) ? line.fees.map((fee) => int(obj(fee)?.fee)) : [];
  return {
    transactionId: paymentKey,
    orderId: str(line.orderId) ?? null,
    type,
    amount: Math.abs(amount),
    tradedAt,
    method: line.method === '카드' || line.method === 'CARD' ? 'CARD' : null,
    fee: fees.length > 0 && fees.every((fee) => fee !== undefined) ? fees.reduce<number>((sum, fee) => sum + fee!, 0) : null,
    settlementDate: str(line.paidOutDate) ?? null,
  };
}

export function createTossAdapter(options: TossAdapterOptions): GatewayAdapter {
  const transport = createHttpTransport({ baseUrl: options.baseUrl, authorization: basicAuthorization(options.secretKey), timeoutMs: options.timeoutMs });
  const log = { log: options.log, redactor: options.redactor, gateway: 'TOSS' };

  /** One call: refused locally when `problems` say so, else sent and read by `success`. */
  function call(
    operation: GatewayOperationName,
    request: HttpRequest,
    context: { orderId?: string; billingKey?: string; problems?: string[] },
    success: ReadSuccess,
  ): Promise<GatewayResult> {
    return timedCall(operation, log, { orderId: context.orderId, secrets: [context.billingKey, options.secretKey] }, async (redactor) => {
      return localRefusal(operation, context.problems ?? []) ?? classify(operation, await transport.send(request), redactor, success);
    });
  }

  const adapter: GatewayAdapter = {
    name: 'TOSS',
    ...(options.window ? { window: options.window } : {}),
    capabilities: tossCapabilities({ keyDeletion: options.keyDeletion !== undefined }),
    outcomes: TOSS_OUTCOMES,

    issueBillingKey(input) {
      const problems = [
        ...(input.method === 'CARD' ? [] : [`Toss takes CARD only, not ${input.method}`]),
        ...(input.customerKey ? [] : ['customerKey is required']),
      ];
      const body = { authKey: input.transactionId, customerKey: input.customerKey };
      return call('ISSUE_KEY', { method: 'POST', path: '/v1/billing/authorizations/issue', body }, { problems }, (json, base) => {
        if (!json) return unknownOf(base, 'MALFORMED_BODY', 'billing key answer is not a JSON object');
        const fields: GatewayFields = { billingKey: str(json.billingKey), cardInfo: cardOf(json), extra: { customerKey: json.customerKey } };
        if (!fields.billingKey) return unknownOf(base, 'MISSING_BILLING_KEY', 'issued without a billingKey', fields);
        if (json.customerKey !== undefined && json.customerKey !== input.customerKey) {
          return unknownOf(base, 'MALFORMED_BODY', 'the key was issued to another customerKey', fields);
        }
        return { ...base, outcome: 'SUCCEEDED', reason: 'APPROVED', fields };
      });
    },

    chargeBillingKey(input) {
      const body = { customerKey: input.customerKey, amount: input.amount, orderId: input.orderId, orderName: input.orderName };
      const request: HttpRequest = {
        method: 'POST',
        path: `/v1/billing/${encodeURIComponent(input.billingKey)}`,
        body,
        // A retry is a new attempt with a new orderId: one key per attempt, Toss replaying the first answer.
        headers: { 'Idempotency-Key': input.orderId },
      };
      const problems = [...chargeProblems(input), ...(input.billingKey ? [] : ['billingKey is required'])];
      return call('BILLING_CONFIRM', request, { orderId: input.orderId, billingKey: input.billingKey, problems }, readCharge(input));
    },

    // Toss one-time payments (the payment window's confirm) are not part of this gateway's use here.
    async confirmPayment() {
      return { ...localRefusal('CONFIRM_PAYMENT', ['Toss one-time payments are not supported: Toss takes billing-key charges only'])!, durationMs: 0 };
    },

    refundPayment(input) {
      // A whole refund leaves cancelAmount out (Toss cancels the balance); the answer must still say it cancelled
      // exactly what we meant, or the refund is UNKNOWN.
      const body: Record<string, unknown> = { cancelReason: input.reason };
      if (!input.whole) body.cancelAmount = input.amount;
      const problems: string[] = [];
      if (input.method !== 'CARD') problems.push(`Toss takes CARD only, not ${input.method}`);
      if (input.reason.length === 0 || input.reason.length > CANCEL_REASON_MAX) problems.push(`cancelReason is 1 to ${CANCEL_REASON_MAX} characters`);
      if (!Number.isSafeInteger(input.amount) || input.amount <= 0) problems.push('amount must be a positive whole number');
      if (input.idempotencyKey.length === 0 || input.idempotencyKey.length > IDEMPOTENCY_KEY_MAX) problems.push('the idempotency key is 1 to 300 characters');
      const request: HttpRequest = {
        method: 'POST',
        path: `/v1/payments/${encodeURIComponent(input.transactionId)}/cancel`,
        body,
        headers: { 'Idempotency-Key': input.idempotencyKey },
      };
      return call('CANCEL', request, { problems }, (json, base) => {
        if (!json) return unknownOf(base, 'MALFORMED_BODY', 'cancel answer is not a JSON object');
        const fields = paymentFields(json);
        if (fields.transactionId !== input.transactionId) return unknownOf(base, 'MALFORMED_BODY', 'Toss answered another paymentKey', fields);
        if (!TOSS_CANCELED_STATUSES.includes(String(json.status))) return unknownOf(base, 'UNEXPECTED_STATUS', `payment status ${String(json.status)}`, fields);
        if (fields.cancelAmount !== input.amount) {
          return unknownOf(base, 'AMOUNT_MISMATCH', `Toss cancelled ${String(fields.cancelAmount)}, we asked ${input.amount}`, fields);
        }
        return { ...base, outcome: 'SUCCEEDED', reason: 'APPROVED', fields };
      });
    },

    /**
     * What became of an orderId. SUCCEEDED: approved (DONE), with the paymentKey and amount to check against the
     * attempt. DECLINED: Toss charged nothing under it: refused (ABORTED, its failure's code, dead or not by the
     * outcome table), EXPIRED, or never seen (NOT_FOUND_PAYMENT; whether that is final is the caller's to decide by
     * the attempt's age). NOT_SENT: our credentials refused. UNKNOWN, ask again later: anything else (a payment not
     * finished or since cancelled, another error, 5xx, no answer).
     */
    inquire(input) {
      const request: HttpRequest = { method: 'GET', path: `/v1/payments/orders/${encodeURIComponent(input.orderId)}` };
      return call('INQUIRY', request, { orderId: input.orderId }, (json, base) => {
        if (!json) return unknownOf(base, 'MALFORMED_BODY', 'lookup answer is not a JSON object');
        const fields = paymentFields(json);
        if (fields.orderId !== input.orderId) return unknownOf(base, 'ORDER_ID_MISMATCH', `Toss answered orderId ${fields.orderId}`, fields);
        const status = String(json.status);
        if (status === TOSS_APPROVED_STATUS && fields.transactionId) return { ...base, outcome: 'SUCCEEDED', reason: 'APPROVED', fields };
        if (TOSS_UNPAID_STATUSES.includes(status)) {
          const failure = obj(json.failure);
          const code = str(failure?.code) ?? status;
          const verdict = verdictOf(TOSS_OUTCOMES, code);
          const decline = verdict.outcome === 'DECLINED' ? verdict.decline : 'MAY_RECOVER';
          return { ...base, code, message: str(failure?.message), outcome: 'DECLINED', reason: 'DECLINED', decline, detail: `payment ${status}`, fields };
        }
        return unknownOf(base, 'UNEXPECTED_STATUS', `payment status ${status}`, fields);
      }).then((result) => {
        // An error answer other than "no such payment" tells nothing of the orderId: ask again later.
        const errorAnswer = result.httpStatus !== undefined && (result.httpStatus < 200 || result.httpStatus > 299);
        if (errorAnswer && result.outcome === 'DECLINED' && result.code !== TOSS_NOT_FOUND) {
          return { ...result, outcome: 'UNKNOWN', reason: 'UNEXPECTED_STATUS', decline: undefined, detail: `lookup answered ${result.code}` };
        }
        return result;
      });
    },

    async fetchSettlements(input) {
      const page = Number(input.page ?? '1');
      const problems = [
        ...(Number.isSafeInteger(page) && page >= 1 ? [] : ['page must be a whole number from 1']),
        ...([input.from, input.to].every((date) => /^\d{4}-\d{2}-\d{2}$/.test(date)) ? [] : ['from and to are Korea dates, yyyy-MM-dd']),
      ];
      const query = new URLSearchParams({ startDate: input.from, endDate: input.to, page: String(page), size: String(TOSS_SETTLEMENT_PAGE_SIZE) });
      let lines: SettlementFeedLine[] = [];
      const result = await call('SETTLEMENTS', { method: 'GET', path: `/v1/settlements?${query}` }, { problems }, (_json, base, body) => {
        if (!Array.isArray(body)) return unknownOf(base, 'MALFORMED_BODY', 'settlements answer is not a JSON array');
        const read = body.map(feedLine);
        const bad = read.indexOf(undefined);
        if (bad >= 0) return unknownOf(base, 'MALFORMED_BODY', `settlement line ${bad + 1} lacks a paymentKey, an amount or a date`);
        lines = read as SettlementFeedLine[];
        // The stored copy is a count: the lines themselves become statement lines.
        return { ...base, raw: { lines: lines.length }, outcome: 'SUCCEEDED', reason: 'APPROVED', fields: { extra: {} } };
      });
      if (result.outcome !== 'SUCCEEDED') return { result, lines: [] };
      return { result, lines, ...(lines.length === TOSS_SETTLEMENT_PAGE_SIZE ? { nextPage: String(page + 1) } : {}) };
    },

    close: () => transport.close(),
  };

  const deletion = options.keyDeletion;
  if (deletion) {
    adapter.deleteBillingKey = (input) => {
      const path = deletion.path.replace('{billingKey}', encodeURIComponent(input.billingKey));
      const request: HttpRequest = { method: deletion.method, path, ...(deletion.method === 'POST' ? { body: { customerKey: input.customerKey } } : {}) };
      return call('DELETE_KEY', request, { billingKey: input.billingKey }, (_json, base) => ({
        ...base,
        outcome: 'SUCCEEDED',
        reason: 'APPROVED',
        fields: { extra: {} },
      }));
    };
  }
  return adapter;
}
