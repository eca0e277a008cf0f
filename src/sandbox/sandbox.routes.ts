// The sandbox gateway over HTTP (docs/architecture.md "The sandbox gateway"): the interface's endpoints with Basic auth exactly as specified,
// JSON only, per-call fault injection, the hosted window, and controls under /_control (served only here).
// Mounted under /sandbox by the app in development, or standalone (src/sandbox/server.ts).
import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import { basicAuthorization } from '../gateway/client.ts';
import { isAmountString, PAYMENT_METHODS, type PaymentMethod } from '../gateway/fields.ts';
import type { GatewayOperationName } from '../gateway/types.ts';
import { isSimulated } from '../lib/clock.ts';
import { renderAutoPost, renderWindowError, renderWindowPage } from './window.page.ts';
import { SandboxError, type Fault, type FaultKind, type SandboxState, type WindowTerms } from './sandbox.state.ts';
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

const FAULT_KINDS: FaultKind[] = ['latency', 'decline', 'timeout', 'http_500', 'malformed', 'truncated', 'reset', 'mismatch'];
const OPERATIONS: Array<GatewayOperationName | 'ANY'> = ['ANY', 'CONFIRM_PAYMENT', 'ISSUE_KEY', 'BILLING_CONFIRM', 'CANCEL'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

function withQuery(target: string, fields: Record<string, string>): string {
  const url = new URL(target);
  for (const [key, value] of Object.entries(fields)) url.searchParams.set(key, value);
  return url.toString();
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
  const held = new Set<Socket>();

  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  // Answers in the gateway's shape ({code, message}), never in the service's.
  app.setErrorHandler((error: Error & { statusCode?: number; validation?: unknown }, _request, reply) => {
    if (error instanceof SandboxError) return reply.status(error.statusCode).send({ code: error.code, message: error.message });
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    const code = status === 415 ? 'INVALID_CONTENT_TYPE' : status < 500 ? 'INVALID_REQUEST' : 'INTERNAL_SERVER_ERROR';
    return reply.status(status).send({ code, message: status < 500 ? error.message : 'sandbox error' });
  });

  // Ends the calls this server holds (until released) when it closes, or they would keep it from closing. Only
  // its own: the app's mounted routes share the state with its private listener, which closes after the app has
  // drained its gateway calls (plugins/gateway.ts), so a call held there may still be released meanwhile.
  const closing = new AbortController();
  app.addHook('preClose', async () => {
    closing.abort();
    for (const socket of held) socket.destroy();
    held.clear();
  });

  function checkCall(request: FastifyRequest) {
    if (!equalSecret(request.headers.authorization, expectedAuthorization)) {
      throw new SandboxError(401, 'UNAUTHORIZED_KEY', 'missing or invalid Authorization: Basic base64(secretKey + ":")');
    }
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json(\s*;.*)?$/i.test(type)) throw new SandboxError(415, 'INVALID_CONTENT_TYPE', 'Content-Type must be application/json');
  }

  async function applyFault(fault: Fault, reply: FastifyReply, processed?: { status: number; body: unknown }) {
    const socket = reply.raw.socket;
    switch (fault.kind) {
      case 'latency':
        return reply.status(processed!.status).send(processed!.body);
      case 'mismatch': {
        // An approval that answers a different orderId or amount than was asked: the client must not trust it.
        const body = { ...(processed!.body as Record<string, unknown>) };
        if (fault.field === 'orderId') body.orderId = `${String(body.orderId ?? '')}X`;
        else body.amount = String(Number(body.amount ?? 0) + 1);
        return reply.status(processed!.status).send(body);
      }
      case 'decline':
        return reply.status(400).send({ code: fault.code ?? 'REJECTED_BY_ISSUER', message: fault.message ?? 'declined (sandbox fault)' });
      case 'http_500':
        return reply.status(500).send({ code: 'INTERNAL_SERVER_ERROR', message: 'sandbox fault: internal error' });
      case 'malformed':
        return reply.status(200).type('application/json').send('{"code":"SUCCESS","message":"approved","transactionId":');
      case 'truncated': {
        reply.hijack();
        const body = JSON.stringify(processed?.body ?? { code: 'SUCCESS', message: 'approved' });
        reply.raw.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        reply.raw.write(body.slice(0, Math.floor(body.length / 2)));
        setTimeout(() => socket?.destroy(), 20);
        return;
      }
      case 'reset':
        reply.hijack();
        (socket as (Socket & { resetAndDestroy?: () => void }) | null)?.resetAndDestroy?.();
        socket?.destroy();
        return;
      case 'timeout': {
        // The call was processed (and booked) but no answer ever comes: the client's timeout decides.
        reply.hijack();
        if (!socket) return;
        held.add(socket);
        const timer = setTimeout(() => socket.destroy(), fault.holdMs);
        socket.once('close', () => {
          clearTimeout(timer);
          held.delete(socket);
        });
        return;
      }
    }
  }

  function gatewayRoute(path: string, operation: GatewayOperationName, handle: (body: unknown) => Record<string, unknown>) {
    app.post(path, async (request, reply) => {
      checkCall(request);
      const fault = state.takeFault(operation);
      if (fault?.until === 'released') {
        if (!(await state.hold(fault, operation, closing.signal))) {
          // Aborted by a reset or a close: the connection drops, nothing is booked.
          reply.hijack();
          reply.raw.socket?.destroy();
          return;
        }
      } else if (fault && fault.latencyMs > 0) await sleep(fault.latencyMs);
      if (fault && !fault.booked) return applyFault(fault, reply);
      let processed: { status: number; body: unknown };
      try {
        processed = { status: 200, body: handle(request.body) };
      } catch (error) {
        if (!(error instanceof SandboxError)) throw error;
        processed = { status: error.statusCode, body: { code: error.code, message: error.message } };
      }
      await keep();
      if (fault) return applyFault(fault, reply, processed);
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

  app.get('/_control/faults', async () => ({ faults: state.faults() }));

  app.post('/_control/faults', async (request, reply) => {
    const spec = (request.body ?? {}) as Record<string, unknown>;
    if (!FAULT_KINDS.includes(spec.kind as FaultKind)) throw new SandboxError(400, 'INVALID_REQUEST', `kind must be one of ${FAULT_KINDS.join(', ')}`);
    if (spec.operation !== undefined && !OPERATIONS.includes(spec.operation as GatewayOperationName)) {
      throw new SandboxError(400, 'INVALID_REQUEST', `operation must be one of ${OPERATIONS.join(', ')}`);
    }
    if (spec.field !== undefined && spec.field !== 'orderId' && spec.field !== 'amount') {
      throw new SandboxError(400, 'INVALID_REQUEST', 'field must be orderId or amount');
    }
    if (spec.until !== undefined && spec.until !== 'released') throw new SandboxError(400, 'INVALID_REQUEST', "until must be 'released'");
    if (spec.until !== undefined && spec.latencyMs !== undefined) {
      throw new SandboxError(400, 'INVALID_REQUEST', 'latencyMs and until are alternatives: a call waits for one or the other');
    }
    for (const name of ['count', 'latencyMs', 'holdMs']) {
      const value = spec[name];
      if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
        throw new SandboxError(400, 'INVALID_REQUEST', `${name} must be a whole number`);
      }
    }
    const fault = state.addFault(spec as never);
    return reply.status(201).send(fault);
  });

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

  app.delete('/_control/faults', async () => ({ cleared: state.clearFaults() }));

  // Calls parked by a fault with until 'released': which have arrived, and letting them go on.
  app.get('/_control/held', async () => ({ held: state.held() }));

  app.post('/_control/release', async (request) => {
    const { faultId } = (request.body ?? {}) as { faultId?: unknown };
    if (faultId !== undefined && !(Number.isInteger(faultId) && (faultId as number) > 0)) {
      throw new SandboxError(400, 'INVALID_REQUEST', 'faultId must be a fault id');
    }
    return { released: state.release(faultId as number | undefined) };
  });

  app.get('/_control/clock', async () => ({
    now: state.clock.now().toISOString(),
    settable: isSimulated(state.clock),
  }));

  app.put('/_control/clock', async (request) => {
    const { now } = (request.body ?? {}) as { now?: string };
    if (!isSimulated(state.clock)) throw new SandboxError(409, 'CLOCK_NOT_SIMULATED', 'this sandbox shares a system clock');
    const instant = new Date(String(now));
    if (Number.isNaN(instant.getTime())) throw new SandboxError(400, 'INVALID_REQUEST', 'now must be an ISO-8601 instant');
    state.clock.set(instant);
    return { now: state.clock.now().toISOString(), settable: true };
  });

  app.post('/_control/reset', async () => {
    state.reset();
    await store?.clear();
    return { reset: true };
  });
}
