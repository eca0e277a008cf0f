// The Toss sandbox over HTTP (docs/sandbox.md "The Toss sandbox"): Toss Payments' automatic-billing API as
// the service's Toss adapter calls it, with Toss's rules enforced, the billing-authentication window, per-call
// fault injection shared with the Danal sandbox (src/sandbox/faults.ts) and controls under /_control. Mounted
// under /sandbox/toss by the app in development, under /toss by `npm run sandbox`.
//
// What it relies on about Toss, each marked documented (with the page) or assumed (and why). "Documented" means read
// on Toss's own pages (docs.tosspayments.com) or, where marked "transcribed", in a copy of such a page kept in a
// public repository (the error-codes page's tables were read that way); "forum" is Toss's developer forum
// (techchat.tosspayments.com), where Toss's staff answer with real request logs.
// - Basic auth is base64(secretKey + ":"), the colon saying there is no password. Documented:
//   docs.tosspayments.com/reference/using-api/authorization ("시크릿 키 뒤에 콜론을 추가").
// - No colon in the decoded credentials: 403 INCORRECT_BASIC_AUTH_FORMAT; an unknown key: 401 UNAUTHORIZED_KEY.
//   Documented (transcribed): reference/error-codes lists INCORRECT_BASIC_AUTH_FORMAT as 403 ("':' 를 포함해
//   인코딩해주세요"); UNAUTHORIZED_KEY ("인증되지 않은 시크릿 키 혹은 클라이언트 키") as 401 in public clients' copies
//   of the table. Assumed: a missing or non-Basic header, or a password after the colon, is UNAUTHORIZED_KEY too.
// - Errors are {code, message} with an HTTP status. Documented: the error-codes page. The messages here are the
//   sandbox's own (English); Toss writes Korean unless asked otherwise, so clients read `code` only.
// - Billing-auth window: success redirect to successUrl with customerKey and authKey; failure to failUrl with code
//   and message; PAY_PROCESS_CANCELED when the customer cancels. Documented: reference/error-codes (the failUrl
//   errors); the redirects' query fields as Toss's billing window guide gives them, read in a developer's summary
//   of it (nextjs-blog-57b.pages.dev/blog/tosspayments-2: "/success?customerKey=&authKey=", "/fail?code=&message="). Assumed: an authKey is single-use and bound to the customerKey it
//   was issued for (it authenticates one card registration); customerKey is 2–50 characters of A-Z a-z 0-9 - _ =
//   . @ (as recalled from the SDK's requestBillingAuth; the sandbox refuses the window otherwise).
// - POST /v1/billing/authorizations/issue {authKey, customerKey} answers the billing key object {mId, customerKey,
//   authenticatedAt, method "카드", billingKey, cardCompany, cardNumber, card {issuerCode, acquirerCode, number
//   (masked), cardType, ownerType}}. Assumed from a secondary source: the endpoint and body are in every client
//   seen; the answer's fields as a public client's stand-in for Toss's answer has them (the reference page was not
//   readable here). A customerKey other than the authKey's: 400 NOT_MATCHES_CUSTOMER_KEY (the code's documented
//   message, "빌링 인증 고객키와 결제 요청 고객키가 일치하지 않습니다", names the billing authentication's customerKey;
//   that it applies at issue too is assumed). Assumed: an unknown or used authKey is 400 INVALID_REQUEST (no code
//   for it was found).
// - Billing keys look like base64url of 32 bytes with its "=" (seen in Toss's developer forum, techchat
//   .tosspayments.com, in request logs of POST /v1/billing/{billingKey}); no "/" so it fits a path segment.
// - POST /v1/billing/{billingKey} {customerKey, amount, orderId, orderName} approves at once and answers the
//   Payment object with status DONE. Documented: the Payment object (paymentKey, orderId, orderName, status,
//   totalAmount, balanceAmount, suppliedAmount and vat, method "카드", approvedAt with +09:00, card {...}, cancels,
//   failure, version "2022-11-16"), shown whole on guides/apis/cancel-payment and reference/error-codes; the call
//   and its body in the forum's request logs. Assumed: `type` is "BILLING" for a
//   billing approval (recalled from the Payment object's reference, not re-read).
// - customerKey must be the key's: 400 NOT_MATCHES_CUSTOMER_KEY. Documented (forum): a request log answered 400
//   with this code, "빌링키 생성시에 보낸 customerkey와 결제 승인시 보낸 customerkey가 다를 때".
// - A card payment is at least 100 won: 400 BELOW_MINIMUM_AMOUNT. Documented: reference/error-codes ("신용카드는
//   결제금액이 100원 이상"). Amounts are JSON integers (the reference's examples); assumed: a string, a fraction or
//   a boolean is 400 INVALID_REQUEST.
// - orderId is 6–64 characters of A-Z a-z 0-9 - _ =. From the contract's wording of Toss's rule (the page was
//   not re-read here); assumed: anything else is 400 INVALID_REQUEST.
// - An orderId is approved once: DUPLICATED_ORDER_ID (documented, transcribed, in the billing approval's errors:
//   "이미 승인 및 취소가 진행된 중복된 주문번호") and ALREADY_PROCESSED_PAYMENT (documented 400, "이미 처리된 결제"). Assumed: which
//   one answers: the same charge again (same key and amount) is ALREADY_PROCESSED_PAYMENT, another charge reusing
//   the orderId DUPLICATED_ORDER_ID; both 400. A refused charge leaves its orderId free (the message says
//   "approved or cancelled").
// - An unknown billing key: 400 INVALID_BILL_KEY_REQUEST. The code is documented (transcribed) for billing
//   approvals ("빌링키 인증이 완료되지 않았거나 유효하지 않은"); its status 400 is assumed.
// - Idempotency-Key on every POST: the first answer is replayed for the same key, API key, path and method, for 15
//   days from the first request; a key over 300 characters is 400 INVALID_IDEMPOTENCY_KEY; the same key while the
//   first call runs is 409 IDEMPOTENT_REQUEST_PROCESSING; GET ignores the header. Documented:
//   guides/using-api/idempotency-key. Assumed: error answers are replayed too (the page warns not to retry an
//   error under a new key), a call that was never processed (a connection reset or a 500 before anything was
//   booked, our credentials refused, a 409 for a running first call) keeps no answer, and the body is not
//   compared (a forum report shows another payment's request, sent under the same key, answered with the first
//   one's).
// - GET /v1/payments/orders/{orderId} and GET /v1/payments/{paymentKey} answer the Payment; none: 404
//   NOT_FOUND_PAYMENT. Documented: reference/error-codes (its example error is this one, 404). A refused
//   charge is kept as status ABORTED with `failure` {code, message} (documented: "이미 일어난 결제 기록을 조회했을
//   때는 Payment 객체의 failure 필드에"); by orderId, the approval wins over refused attempts (assumed).
// - POST /v1/payments/{paymentKey}/cancel {cancelReason, cancelAmount?}: without cancelAmount the whole (remaining)
//   amount; each cancel is appended to `cancels` with its refundableAmount; status PARTIAL_CANCELED then CANCELED.
//   Documented: guides/apis/cancel-payment (부분 취소). More than the balance: 403 NOT_CANCELABLE_AMOUNT
//   (documented, transcribed, 403 "취소 할 수 없는 금액"); a refused (ABORTED) payment: 403 NOT_CANCELABLE_PAYMENT
//   (the same). Assumed: a cancelled payment is 400 ALREADY_CANCELED_PAYMENT (the code appears in public clients'
//   lists of Toss's cancel errors, not in the table read here); cancelReason is at most 200 characters.
// - A second cancel request of one paymentKey within one second is not processed. Documented: guides/apis/
//   cancel-payment ("같은 paymentKey를 이용한 취소 요청이 1초에 2번 이상 연속으로 들어오면 첫 번째 요청만
//   처리"). Assumed: it is answered 403 FORBIDDEN_CONSECUTIVE_REQUEST (the cancel errors' "반복적인 요청은 허용되지
//   않습니다"), on the sandbox's clock, and an Idempotency-Key replay is not a new request.
// - GET /v1/settlements?startDate&endDate (yyyy-MM-dd)[&dateType=soldDate|paidOutDate][&page&size] answers an
//   array of lines {mId, paymentKey, transactionKey, orderId, currency, method, amount, interestFee, fees,
//   supplyAmount, vat, payOutAmount, approvedAt, soldDate, paidOutDate, cancel}; a cancel's line has a negative
//   amount and fee and its `cancel`. Documented: guides/apis/settlements and common/apis/settlements (the query,
//   dateType defaulting to soldDate, the lines); a cancel's line as the forum shows one. Assumed: page from 1, size 100 by default and at most 10,000;
//   paidOutDate two days after soldDate and a 2.5 % fee (a contract sets both); lines are listed as soon as they
//   are booked.
// - DELETE /v1/billing/{billingKey} deletes a billing key: 200 {mId, customerKey, deletedAt}; an unknown or deleted
//   key 400 INVALID_BILL_KEY_REQUEST; charges with a deleted key are refused the same way. Assumed, all of it: no
//   Toss page read here documents a deletion call; the sandbox serves one so that the service's configurable deletion
//   (TOSS_KEY_DELETION) can be exercised, and says nothing about whether Toss has it.
// - Decline faults answer with Toss's status for the code (reference/error-codes, transcribed:
//   REJECT_CARD_PAYMENT and REJECT_CARD_COMPANY 403, INVALID_* 400, ...); a code the sandbox does not know answers
//   400 (assumed).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { createFaultServer, registerFaultControls, type Fault, type FaultAnswers, type FaultServer, type Processed } from '../faults.ts';
import { SandboxError } from '../sandbox-error.ts';
import type { SandboxStore } from '../sandbox.store.ts';
import { parseSettlementQuery, settlementLines } from './toss-settlements.ts';
import { withQuery } from '../window.page.ts';
import { renderTossWindowError, renderTossWindowPage, type TossWindowTerms } from './toss-window.page.ts';
import { TOSS_OPERATIONS, type TossOperation, type TossSandboxState } from './toss.state.ts';

export interface TossSandboxRoutesOptions {
  state: TossSandboxState;
  /** Where what the sandbox learns is kept across restarts; memory only without one. */
  store?: SandboxStore;
  secretKey: string;
  clientKey: string;
  /** Path under which these routes are served ('/toss' standalone, '/sandbox/toss' in the app): the window's form posts there. */
  mountedAt: string;
}

const IDEMPOTENCY_KEY_MAX = 300;
const CUSTOMER_KEY = /^[A-Za-z0-9\-_=.@]{2,50}$/;

/**
 * Toss's HTTP status for the codes a decline fault may choose; whether the card refused (kept ABORTED); and, with
 * `unkept`, an answer that is no processed call's and is not kept for an Idempotency-Key: our credentials refused
 * before the call is read, the first call still running, or Toss failing inside.
 */
const DECLINES: Record<string, { status: number; refusal: boolean; unkept?: true }> = {
  REJECT_CARD_PAYMENT: { status: 403, refusal: true },
  REJECT_CARD_COMPANY: { status: 403, refusal: true },
  FDS_ERROR: { status: 403, refusal: true },
  INVALID_CARD_EXPIRATION: { status: 400, refusal: true },
  INVALID_STOPPED_CARD: { status: 400, refusal: true },
  INVALID_REJECT_CARD: { status: 400, refusal: true },
  INVALID_CARD_LOST_OR_STOLEN: { status: 400, refusal: true },
  INVALID_CARD_NUMBER: { status: 400, refusal: true },
  EXCEED_MAX_AMOUNT: { status: 400, refusal: true },
  CARD_PROCESSING_ERROR: { status: 400, refusal: true },
  PROVIDER_ERROR: { status: 400, refusal: false },
  INVALID_BILL_KEY_REQUEST: { status: 400, refusal: false },
  NOT_MATCHES_CUSTOMER_KEY: { status: 400, refusal: false },
  ALREADY_PROCESSED_PAYMENT: { status: 400, refusal: false },
  DUPLICATED_ORDER_ID: { status: 400, refusal: false },
  INVALID_API_KEY: { status: 400, refusal: false },
  NOT_SUPPORTED_METHOD: { status: 400, refusal: false },
  UNAUTHORIZED_KEY: { status: 401, refusal: false, unkept: true },
  INCORRECT_BASIC_AUTH_FORMAT: { status: 403, refusal: false, unkept: true },
  FORBIDDEN_REQUEST: { status: 403, refusal: false },
  NOT_CANCELABLE_PAYMENT: { status: 403, refusal: false },
  NOT_CANCELABLE_AMOUNT: { status: 403, refusal: false },
  FORBIDDEN_CONSECUTIVE_REQUEST: { status: 403, refusal: false },
  ALREADY_CANCELED_PAYMENT: { status: 400, refusal: false },
  NOT_FOUND_PAYMENT: { status: 404, refusal: false },
  IDEMPOTENT_REQUEST_PROCESSING: { status: 409, refusal: false, unkept: true },
  FAILED_INTERNAL_SYSTEM_PROCESSING: { status: 500, refusal: false, unkept: true },
  FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING: { status: 500, refusal: false, unkept: true },
  UNKNOWN_PAYMENT_ERROR: { status: 500, refusal: false, unkept: true },
};
const DEFAULT_DECLINE = 'REJECT_CARD_PAYMENT';

function declineOf(fault: Fault): { code: string; status: number; refusal: boolean; unkept?: true } {
  const code = fault.code ?? DEFAULT_DECLINE;
  return { code, ...(DECLINES[code] ?? { status: 400, refusal: true }) };
}

const FAULT_ANSWERS: FaultAnswers = {
  decline(fault) {
    const { code, status } = declineOf(fault);
    return { status, body: { code, message: fault.message ?? 'declined (sandbox fault)' } };
  },
  serverError: { code: 'FAILED_INTERNAL_SYSTEM_PROCESSING', message: 'sandbox fault: internal error' },
  malformedBody: '{"mId":"tosspayments","paymentKey":',
  approvedBody: { status: 'DONE' },
  mismatch(body, field) {
    // An approval answering another orderId or amount than was asked: the client must not trust it.
    if (field === 'orderId') body.orderId = `${String(body.orderId ?? '')}X`;
    else body.totalAmount = Number(body.totalAmount ?? 0) + 1;
    return body;
  },
};

function reject(statusCode: number, code: string, message: string): never {
  throw new SandboxError(statusCode, code, message);
}

/** Basic base64(secretKey + ":"): the documented format first (403), then the key itself (401). */
function authenticate(header: string | undefined, secretKey: string): void {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) reject(401, 'UNAUTHORIZED_KEY', 'Authorization: Basic base64(secretKey + ":") is required');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) reject(403, 'INCORRECT_BASIC_AUTH_FORMAT', 'encode the secret key followed by a colon (":")');
  const given = Buffer.from(decoded.slice(0, colon));
  const expected = Buffer.from(secretKey);
  const matches = given.length === expected.length && timingSafeEqual(given, expected);
  if (!matches || colon !== decoded.length - 1) reject(401, 'UNAUTHORIZED_KEY', 'unknown secret key');
}

function requireJson(request: FastifyRequest): void {
  if (!/^application\/json(\s*;.*)?$/i.test(request.headers['content-type'] ?? '')) {
    reject(400, 'INVALID_REQUEST', 'Content-Type must be application/json');
  }
}

/** The call's Idempotency-Key scope (key, method and path: the API key is this sandbox's one), if it sent one. */
function idempotencyScope(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') return undefined;
  if (key.length > IDEMPOTENCY_KEY_MAX) reject(400, 'INVALID_IDEMPOTENCY_KEY', `an Idempotency-Key is at most ${IDEMPOTENCY_KEY_MAX} characters`);
  return `${request.method} ${request.url.split('?')[0]} ${key}`;
}

function windowTerms(params: Record<string, unknown>, clientKey: string): TossWindowTerms {
  const text = (name: string): string => {
    const value = params[name];
    if (typeof value !== 'string' || value === '') reject(400, 'INVALID_REQUEST', `${name} is required`);
    return value;
  };
  const terms = { clientKey: text('clientKey'), customerKey: text('customerKey'), successUrl: text('successUrl'), failUrl: text('failUrl') };
  if (terms.clientKey !== clientKey) reject(400, 'UNAUTHORIZED_KEY', 'unknown client key');
  if (!CUSTOMER_KEY.test(terms.customerKey)) reject(400, 'INVALID_CUSTOMER_KEY', 'customerKey is 2 to 50 characters of A-Z, a-z, 0-9, -, _, =, . and @');
  for (const url of [terms.successUrl, terms.failUrl]) {
    if (!/^https?:\/\//.test(url)) reject(400, 'INVALID_REQUEST', 'successUrl and failUrl must be http(s) URLs');
  }
  return terms;
}

/** Where the window sends the browser: successUrl with customerKey and a fresh authKey, or failUrl with the refusal. */
function windowResult(
  state: TossSandboxState,
  terms: TossWindowTerms,
  params: Record<string, unknown>,
): { authKey?: string; target: string; fields: Record<string, string> } {
  if (params.decision === 'approve') {
    const authKey = state.authorize(terms.customerKey);
    return { authKey, target: terms.successUrl, fields: { customerKey: terms.customerKey, authKey } };
  }
  const code = typeof params.code === 'string' && params.code !== '' ? params.code : 'PAY_PROCESS_CANCELED';
  const message = typeof params.message === 'string' && params.message !== '' ? params.message : '사용자에 의해 결제가 취소되었습니다.';
  return { authKey: undefined, target: terms.failUrl, fields: { code, message } };
}

interface CallContext {
  state: TossSandboxState;
  faults: FaultServer;
  keep: () => Promise<void>;
}

/** The operation's own answer: what it returned (200), or its refusal in Toss's shape. */
function answerOf(handle: () => unknown): Processed {
  try {
    return { status: 200, body: handle() };
  } catch (error) {
    if (!(error instanceof SandboxError)) throw error;
    return { status: error.statusCode, body: { code: error.code, message: error.message } };
  }
}

/**
 * A POST operation: the Idempotency-Key first (a replay answers the first answer; the same key while its first call
 * runs is 409), then the fault, then the operation. What the call answered is kept for the key before it is sent,
 * so a lost answer is replayed; a call never processed (reset, unbooked 500, a 401 or 409 decline) keeps nothing
 * and can be sent again.
 */
async function serveOperation(
  context: CallContext,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: TossOperation,
  handle: () => unknown,
  onRefusal?: (fault: Fault) => void,
) {
  const { state, faults, keep } = context;
  requireJson(request);
  const scope = idempotencyScope(request);
  let since: string | undefined;
  if (scope !== undefined) {
    const found = state.beginIdempotent(scope);
    if (found.kind === 'replay') return reply.status(found.answer.status).send(found.answer.body);
    if (found.kind === 'in-flight') reject(409, 'IDEMPOTENT_REQUEST_PROCESSING', 'the first request with this Idempotency-Key is still being processed');
    since = found.since;
  }
  const settle = async (answer?: Processed) => {
    if (scope !== undefined) state.finishIdempotent(scope, since!, answer);
    await keep();
  };
  let fault: Awaited<ReturnType<FaultServer['awaitFault']>>;
  let answer: Processed;
  try {
    fault = await faults.awaitFault(state, operation, reply);
    if (fault === 'aborted') return settle();
    if (fault && !fault.booked) {
      if (fault.kind !== 'decline' || declineOf(fault).unkept) {
        await settle();
        return faults.apply(fault, reply);
      }
      // A decline is Toss's answer: kept for the key like any other, and a card's refusal is kept ABORTED.
      if (declineOf(fault).refusal) onRefusal?.(fault);
      answer = FAULT_ANSWERS.decline(fault);
    } else answer = answerOf(handle);
  } catch (error) {
    await settle();
    throw error;
  }
  await settle(answer);
  if (fault) return faults.apply(fault, reply, answer);
  return reply.status(answer.status).send(answer.body);
}

/**
 * A call without a body (lookup, settlements, key deletion): the fault, then the answer; the Idempotency-Key header is
 * ignored. What it changed (a deletion) is kept before it is answered.
 */
async function serveRead(context: CallContext, reply: FastifyReply, operation: TossOperation, handle: () => unknown) {
  const fault = await context.faults.awaitFault(context.state, operation, reply);
  if (fault === 'aborted') return;
  if (fault && !fault.booked) return context.faults.apply(fault, reply);
  const answer = answerOf(handle);
  await context.keep();
  if (fault) return context.faults.apply(fault, reply, answer);
  return reply.status(answer.status).send(answer.body);
}

/** Toss's API: Basic auth on every call (before the body is read), JSON bodies. */
async function tossApiRoutes(app: FastifyInstance, options: { context: CallContext; secretKey: string }) {
  const { context, secretKey } = options;
  const { state } = context;
  app.addHook('onRequest', async function checkBasicAuth(request) {
    authenticate(request.headers.authorization, secretKey);
  });

  app.post('/v1/billing/authorizations/issue', async function issueBillingKey(request, reply) {
    return serveOperation(context, request, reply, 'ISSUE_BILLING_KEY', () => state.issueBillingKey(request.body));
  });

  app.post('/v1/billing/:billingKey', async function chargeBillingKey(request, reply) {
    const { billingKey } = request.params as { billingKey: string };
    return serveOperation(
      context,
      request,
      reply,
      'CHARGE',
      () => state.charge(billingKey, request.body),
      (fault) => state.abort(billingKey, request.body, { code: declineOf(fault).code, message: fault.message ?? 'declined (sandbox fault)' }),
    );
  });

  app.post('/v1/payments/:paymentKey/cancel', async function cancelPayment(request, reply) {
    const { paymentKey } = request.params as { paymentKey: string };
    return serveOperation(context, request, reply, 'CANCEL', () => state.cancel(paymentKey, request.body));
  });

  app.delete('/v1/billing/:billingKey', async function deleteBillingKey(request, reply) {
    const { billingKey } = request.params as { billingKey: string };
    return serveRead(context, reply, 'DELETE_BILLING_KEY', () => state.deleteBillingKey(billingKey));
  });

  app.get('/v1/payments/orders/:orderId', async function paymentByOrderId(request, reply) {
    const { orderId } = request.params as { orderId: string };
    return serveRead(context, reply, 'LOOKUP', () => state.paymentByOrderId(orderId));
  });

  app.get('/v1/payments/:paymentKey', async function paymentByKey(request, reply) {
    const { paymentKey } = request.params as { paymentKey: string };
    return serveRead(context, reply, 'LOOKUP', () => state.paymentByKey(paymentKey));
  });

  app.get('/v1/settlements', async function listSettlements(request, reply) {
    return serveRead(context, reply, 'SETTLEMENTS', () =>
      settlementLines(state.ledger(), parseSettlementQuery(request.query as Record<string, unknown>), state.mId),
    );
  });
}

export async function tossSandboxRoutes(app: FastifyInstance, options: TossSandboxRoutesOptions) {
  const { state, store, clientKey } = options;
  /** Writes what the last operation changed before it is answered: an answered call is never forgotten. */
  const keep = async () => {
    const changes = state.takeChanges();
    if (store) await store.save(changes);
  };
  // Nothing is served before what was kept is back in memory.
  if (store)
    app.addHook('onRequest', async function restoreKept() {
      await store.ready();
    });
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  // Answers in Toss's shape ({code, message}), never in the service's.
  app.setErrorHandler(function answerAsToss(error: Error & { statusCode?: number }, _request, reply) {
    if (error instanceof SandboxError) return reply.status(error.statusCode).send({ code: error.code, message: error.message });
    if (error.statusCode && error.statusCode < 500) return reply.status(400).send({ code: 'INVALID_REQUEST', message: error.message });
    return reply.status(500).send({ code: 'FAILED_INTERNAL_SYSTEM_PROCESSING', message: 'sandbox error' });
  });

  const context: CallContext = { state, faults: createFaultServer(app, FAULT_ANSWERS), keep };
  await app.register(tossApiRoutes, { context, secretKey: options.secretKey });

  // The billing-authentication window: a page for people, and the same decision as JSON for tests.
  app.get('/window', async function showWindow(request, reply) {
    try {
      const terms = windowTerms(request.query as Record<string, unknown>, clientKey);
      return reply.type('text/html; charset=utf-8').send(renderTossWindowPage(terms, `${options.mountedAt}/window/decision`));
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return reply.status(400).type('text/html; charset=utf-8').send(renderTossWindowError(error.message));
    }
  });

  app.post('/window/decision', async function decideWindow(request, reply) {
    const params = (request.body ?? {}) as Record<string, unknown>;
    try {
      const result = windowResult(state, windowTerms(params, clientKey), params);
      await keep();
      return reply.redirect(withQuery(result.target, result.fields), 303);
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return reply.status(400).type('text/html; charset=utf-8').send(renderTossWindowError(error.message));
    }
  });

  app.post('/window/authorize', async function authorizeWindow(request) {
    const params = (request.body ?? {}) as Record<string, unknown>;
    const result = windowResult(state, windowTerms(params, clientKey), { ...params, decision: params.decision === 'decline' ? 'decline' : 'approve' });
    await keep();
    return { authKey: result.authKey, redirectUrl: withQuery(result.target, result.fields), fields: result.fields };
  });

  // Controls: read the ledger, queue faults, set the (shared) clock, mint keys, start over.
  app.get('/_control/ledger', async function readLedger() {
    return { entries: state.ledger() };
  });

  registerFaultControls(app, { controls: state, operations: TOSS_OPERATIONS, clock: state.clock });

  // Fixture for bulk tests and benchmarks: billing keys without a window each; charges with them pass every rule.
  app.post('/_control/billing-keys', async function mintBillingKeys(request, reply) {
    const { customerKeys } = (request.body ?? {}) as { customerKeys?: unknown };
    const valid = Array.isArray(customerKeys) && customerKeys.length > 0 && customerKeys.length <= 10_000;
    if (!valid || !customerKeys.every((key) => typeof key === 'string' && CUSTOMER_KEY.test(key))) {
      reject(400, 'INVALID_REQUEST', 'customerKeys must be 1 to 10000 customer keys');
    }
    const keys = state.mintBillingKeys(customerKeys as string[]);
    await keep();
    return reply.status(201).send({ keys });
  });

  app.post('/_control/reset', async function resetSandbox() {
    state.reset();
    await store?.clear();
    return { reset: true };
  });
}
