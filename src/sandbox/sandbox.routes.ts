// The sandbox gateway over HTTP (docs/sandbox.md "The sandbox gateway"): the interface's endpoints with Basic auth exactly as specified,
// JSON only, per-call fault injection, the hosted window, and controls under /_control (served only here).
// Mounted under /sandbox by the app in development, or standalone (src/sandbox/server.ts).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { basicAuthorization } from '../gateway/client.ts';
import { isAmountString } from '../gateway/fields.ts';
import { PAYMENT_METHODS, type PaymentMethod } from '../gateway/gateway.ts';
import type { DanalOperationName as GatewayOperationName } from '../gateway/types.ts';
import { renderAutoPost, renderWindowError, renderWindowPage, withQuery } from './window.page.ts';
import { SandboxError, type SandboxState, type WindowTerms } from './sandbox.state.ts';
import { createFaultServer, registerFaultControls, type FaultAnswers } from './faults.ts';
import type { SandboxStore } from './sandbox.store.ts';
import { settlementExport } from './settlement-export.ts';

export interface SandboxRoutesOptions {
  state: SandboxState;
  /** Where what the sandbox learns is kept across restarts; memory only without one. */
  store?: SandboxStore;
  secretKey: string;
  /** Path prefix under which these routes are mounted ('' standalone, '/sandbox' in the app). */
  prefix: string;
}

const OPERATIONS: Array<GatewayOperationName | 'ANY'> = ['ANY', 'CONFIRM_PAYMENT', 'ISSUE_KEY', 'BILLING_CONFIRM', 'CANCEL'];

/** What faults answer, in the interface's words. */
const FAULT_ANSWERS: FaultAnswers = {
  decline: (fault) => ({ status: 400, body: { code: fault.code ?? 'REJECTED_BY_ISSUER', message: fault.message ?? 'declined (sandbox fault)' } }),
  serverError: { code: 'INTERNAL_SERVER_ERROR', message: 'sandbox fault: internal error' },
  malformedBody: '{"code":"SUCCESS","message":"approved","transactionId":',
  approvedBody: { code: 'SUCCESS', message: 'approved' },
  mismatch(body, field) {
    // An approval that answers a different orderId or amount than was asked: the client must not trust it.
    if (field === 'orderId') body.orderId = `${String(body.orderId ?? '')}X`;
    else body.amount = String(Number(body.amount ?? 0) + 1);
    return body;
  },
};

function equalSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function windowTerms(params: Record<string, unknown>): WindowTerms {
  const text = (name: string, required = true): string | undefined => {
    const value = params[name];
    if (typeof value === 'string' && value !== '') return value;
    if (required) throw new SandboxError(400, 'INVALID_REQUEST', `${name} is required`);
    return undefined;
  };
  const method = text('paymentsMethod')!;
  if (!PAYMENT_METHODS.includes(method as PaymentMethod)) throw new SandboxError(400, 'INVALID_REQUEST', 'paymentsMethod must be CARD or MOBILE');
  const amount = text('amount')!;
  if (!isAmountString(amount)) throw new SandboxError(400, 'INVALID_REQUEST', 'amount must be a positive whole number');
  for (const name of ['successUrl', 'failUrl']) {
    const url = text(name)!;
    if (!/^https?:\/\//.test(url)) throw new SandboxError(400, 'INVALID_REQUEST', `${name} must be an http(s) URL`);
  }
  return {
    method: method as PaymentMethod,
    merchantId: text('merchantId')!,
    orderId: text('orderId')!,
    orderName: text('orderName')!,
    amount: Number(amount),
    userId: text('userId')!,
    successUrl: text('successUrl')!,
    failUrl: text('failUrl')!,
    issueKeyOnly: params.issueKeyOnly === true || params.issueKeyOnly === 'true',
    itemCode: text('itemCode', false),
    userName: text('userName', false),
    userPhoneNumber: text('userPhoneNumber', false),
  };
}

/** Where the window sends the browser, and with which fields. */
function windowResult(
  state: SandboxState,
  terms: WindowTerms,
  decision: string,
  code?: string,
  message?: string,
): { transactionId?: string; target: string; fields: Record<string, string> } {
  if (decision === 'approve') {
    const transactionId = state.authorizeWindow(terms);
    return {
      transactionId,
      target: terms.successUrl,
      fields: { transactionId, orderId: terms.orderId, code: 'SUCCESS', method: terms.method, amount: String(terms.amount) },
    };
  }
  return {
    transactionId: undefined,
    target: terms.failUrl,
    fields: { code: code ?? 'USER_CANCEL', message: message ?? 'The customer cancelled the payment', orderId: terms.orderId },
  };
}

export async function sandboxRoutes(app: FastifyInstance, options: SandboxRoutesOptions) {
  const { state, store } = options;
  /** Writes what the last operation changed before it is answered: an answered call is never forgotten. */
  const keep = async () => {
    const changes = state.takeChanges();
    if (store) await store.save(changes);
  };
  // Nothing is served before what was kept is back in memory.
  if (store) app.addHook('onRequest', async () => store.ready());
  const expectedAuthorization = basicAuthorization(options.secretKey);

  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  // Answers in the gateway's shape ({code, message}), never in the service's.
  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown }, _request, reply) => {
    if (error instanceof SandboxError) return reply.status(error.statusCode).send({ code: error.code, message: error.message });
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    const code = status === 415 ? 'INVALID_CONTENT_TYPE' : status < 500 ? 'INVALID_REQUEST' : 'INTERNAL_SERVER_ERROR';
    return reply.status(status).send({ code, message: status < 500 ? error.message : 'sandbox error' });
  });

  const faults = createFaultServer(app, FAULT_ANSWERS);

  function checkCall(request: FastifyRequest) {
    if (!equalSecret(request.headers.authorization, expectedAuthorization)) {
      throw new SandboxError(401, 'UNAUTHORIZED_KEY', 'missing or invalid Authorization: Basic base64(secretKey + ":")');
    }
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json(\s*;.*)?$/i.test(type)) throw new SandboxError(415, 'INVALID_CONTENT_TYPE', 'Content-Type must be application/json');
  }

  function gatewayRoute(path: string, operation: GatewayOperationName, handle: (body: unknown) => Record<string, unknown>) {
    app.post(path, async (request, reply) => {
      checkCall(request);
      const fault = await faults.awaitFault(state, operation, reply);
      if (fault === 'aborted') return;
      if (fault && !fault.booked) return faults.apply(fault, reply);
      let processed: { status: number; body: unknown };
      try {
        processed = { status: 200, body: handle(request.body) };
      } catch (error) {
        if (!(error instanceof SandboxError)) throw error;
        processed = { status: error.statusCode, body: { code: error.code, message: error.message } };
      }
      await keep();
      if (fault) return faults.apply(fault, reply, processed);
      return reply.status(processed.status).send(processed.body);
    });
  }

  gatewayRoute('/payments/confirm', 'CONFIRM_PAYMENT', (body) => state.confirmPayment(body));
  gatewayRoute('/v1/billing/card/issue-key', 'ISSUE_KEY', (body) => state.issueKey('CARD', body));
  gatewayRoute('/v1/billing/mobile/issue-key', 'ISSUE_KEY', (body) => state.issueKey('MOBILE', body));
  gatewayRoute('/billing/confirm', 'BILLING_CONFIRM', (body) => state.billingConfirm(body));
  gatewayRoute('/payments/cancel', 'CANCEL', (body) => state.cancel(body));

  // The hosted window: a page for people, and the same decision as JSON for tests.
  app.get('/window', async (request, reply) => {
    const params = request.query as Record<string, string>;
    try {
      const terms = windowTerms(params);
      if (terms.merchantId !== state.merchantId) throw new SandboxError(400, 'INVALID_MERCHANT', 'unknown merchant');
      return reply.type('text/html; charset=utf-8').send(renderWindowPage(terms, params, `${options.prefix}/window/decision`));
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return reply.status(400).type('text/html; charset=utf-8').send(renderWindowError(error.message));
    }
  });

  app.post('/window/decision', async (request, reply) => {
    const params = (request.body ?? {}) as Record<string, string>;
    try {
      const terms = windowTerms(params);
      const result = windowResult(state, terms, params.decision === 'approve' ? 'approve' : 'decline');
      await keep();
      if (params.redirect === 'POST') return reply.type('text/html; charset=utf-8').send(renderAutoPost(result.target, result.fields));
      return reply.redirect(withQuery(result.target, result.fields), 303);
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      return reply.status(400).type('text/html; charset=utf-8').send(renderWindowError(error.message));
    }
  });

  app.post('/window/authorize', async (request) => {
    const params = (request.body ?? {}) as Record<string, unknown>;
    const terms = windowTerms(params);
    const decision = params.decision === 'decline' ? 'decline' : 'approve';
    const result = windowResult(state, terms, decision, params.code as string | undefined, params.message as string | undefined);
    await keep();
    return { transactionId: result.transactionId, redirectUrl: withQuery(result.target, result.fields), fields: result.fields };
  });

  // Controls: read the ledger, queue faults, set the clock, start over.
  app.get('/_control/ledger', async () => ({ entries: state.ledger() }));
  // The ledger as a settlement file: ?encoding=utf-8|cp949&delimiter=comma|tab.
  app.get('/_control/settlement.csv', async (request, reply) => {
    const query = request.query as { encoding?: string; delimiter?: string };
    const encoding = query.encoding?.toLowerCase() === 'cp949' ? 'cp949' : 'utf-8';
    reply.type(`text/csv; charset=${encoding === 'cp949' ? 'cp949' : 'utf-8'}`);
    return settlementExport(state.ledger(), { encoding, delimiter: query.delimiter === 'tab' ? '\t' : ',' });
  });

  registerFaultControls(app, { controls: state, operations: OPERATIONS, clock: state.clock });

  // Fixture for bulk tests and benchmarks: keys for many customers without a window each. Charges made with
  // them go through every rule like any other.
  app.post('/_control/billing-keys', async (request, reply) => {
    const { userIds } = (request.body ?? {}) as { userIds?: unknown };
    if (!Array.isArray(userIds) || userIds.length === 0 || userIds.length > 10_000 || !userIds.every((u) => typeof u === 'string' && u.length > 0)) {
      throw new SandboxError(400, 'INVALID_REQUEST', 'userIds must be 1 to 10000 non-empty strings');
    }
    const keys = state.mintCardKeys(userIds as string[]);
    await keep();
    return reply.status(201).send({ keys });
  });

  app.post('/_control/reset', async () => {
    state.reset();
    await store?.clear();
    return { reset: true };
  });
}
