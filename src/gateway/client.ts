// Danal's HTTP client (docs/architecture.md "The gateway client"): the wire under Danal's adapter (danal.adapter.ts),
// which is what the engine holds. Every call returns one outcome class of docs/architecture.md, invariant 3, and never
// throws for a gateway or network failure; what a code means is Danal's outcome table (danal.capabilities.ts). The classification rests on one fact: the
// request can only have reached the gateway if the TCP connection was established. Before that, a failure is
// NOT_SENT (safe to send again with the same orderId); after it, anything short of a complete, well-formed
// answer is UNKNOWN (money may have moved). Written on node:http rather than fetch so that this moment is
// observable exactly.
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { withoutNul } from '../lib/input.ts';
import { redactorForCall, type Redactor } from '../lib/redact.ts';
import { parseGatewayDateTime } from '../lib/calendar.ts';
import { BILLING_CONFIRM_REQUEST, CANCEL_REQUEST, CONFIRM_PAYMENT_REQUEST, ISSUE_KEY_REQUEST, validateRequest, type RequestSchema } from './fields.ts';
import type { CardInfo, GatewayClient, GatewayFields, GatewayOperationName, GatewayResult, OutcomeReason } from './types.ts';
import { verdictOf } from './gateway.ts';
import { DANAL_OUTCOMES } from './danal.capabilities.ts';

export interface GatewayClientOptions {
  /** The gateway's {base_url}. */
  baseUrl: string;
  secretKey: string;
  merchantId: string;
  timeoutMs: number;
  mobileIssueKeyPath: string;
  cancelPath: string;
  log: Pick<Logger, 'info' | 'warn'>;
  redactor: Redactor;
}

type Transport =
  | { kind: 'response'; status: number; text: string }
  | { kind: 'not_sent'; detail: string }
  | { kind: 'unknown'; reason: OutcomeReason; detail: string };

const KNOWN_FIELDS = new Set([
  'code',
  'message',
  'transactionId',
  'amount',
  'orderId',
  'transactionDateTime',
  'billingKey',
  'issueKeyOnly',
  'authOnly',
  'cardInfo',
  'userName',
  'userPhoneNumber',
  'phoneNumber',
  'carrier',
  'cancelAmount',
]);

const RAW_TEXT_LIMIT = 200;

export function basicAuthorization(secretKey: string): string {
  return `Basic ${Buffer.from(`${secretKey}:`, 'utf8').toString('base64')}`;
}

function toAmount(value: unknown): number | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return Number(value.trim());
  return null; // present but not a whole number
}

function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'Y') return true;
  if (value === 'false' || value === 'N') return false;
  return undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

function parseCardInfo(value: unknown): CardInfo | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const source = value as Record<string, unknown>;
  return {
    cardCode: str(source.cardCode),
    cardName: str(source.cardName),
    cardNumber: str(source.cardNumber),
    installmentMonth: str(source.installmentMonth),
    approvalNumber: str(source.approvalNumber),
  };
}

/** Lenient parsing (docs/api.md "How we fill the gateway's gaps"): either name of a renamed field, missing optional fields, unknown fields kept. */
export function parseFields(body: Record<string, unknown>): { fields: GatewayFields; badAmount: boolean } {
  const amount = toAmount(body.amount);
  const cancelAmount = toAmount(body.cancelAmount);
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!KNOWN_FIELDS.has(key)) extra[key] = value;
  return {
    badAmount: amount === null,
    fields: {
      transactionId: str(body.transactionId),
      amount: amount ?? undefined,
      orderId: str(body.orderId),
      transactionDateTime: parseGatewayDateTime(body.transactionDateTime),
      billingKey: str(body.billingKey),
      issueKeyOnly: toBoolean(body.issueKeyOnly ?? body.authOnly),
      cardInfo: parseCardInfo(body.cardInfo),
      userName: str(body.userName),
      phoneNumber: str(body.userPhoneNumber ?? body.phoneNumber),
      carrier: str(body.carrier),
      cancelAmount: cancelAmount ?? undefined,
      extra,
    },
  };
}

interface Expectation {
  orderId?: string;
  amount?: number;
  requireTransactionId?: boolean;
  requireBillingKey?: boolean;
}

function classify(operation: GatewayOperationName, transport: Transport, expect: Expectation, redactor: Redactor): Omit<GatewayResult, 'durationMs'> {
  const empty: GatewayFields = { extra: {} };
  if (transport.kind === 'not_sent') {
    return { operation, outcome: 'NOT_SENT', reason: 'CONNECT_FAILED', detail: transport.detail, fields: empty };
  }
  if (transport.kind === 'unknown') {
    return { operation, outcome: 'UNKNOWN', reason: transport.reason, detail: transport.detail, fields: empty };
  }
  // PostgreSQL cannot store NUL characters: an answer carrying them is recorded without them.
  const { status } = transport;
  const text = withoutNul(transport.text);
  let body: unknown;
  try {
    body = withoutNul(JSON.parse(text) as unknown);
  } catch {
    body = undefined;
  }
  const json = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const raw = json ? redactor.redact(json) : { text: redactor.redact(text.slice(0, RAW_TEXT_LIMIT)) };
  const code = json && typeof json.code === 'string' ? json.code : undefined;
  const message = json && typeof json.message === 'string' ? redactor.redact(json.message) : undefined;
  const base = { operation, httpStatus: status, code, message, raw };

  if (status >= 500) return { ...base, outcome: 'UNKNOWN', reason: 'HTTP_5XX', fields: empty };
  if (!json || code === undefined) {
    return { ...base, outcome: 'UNKNOWN', reason: 'MALFORMED_BODY', detail: 'response is not a JSON object with a code', fields: empty };
  }
  const { fields, badAmount } = parseFields(json);
  const unknown = (reason: OutcomeReason, detail: string): Omit<GatewayResult, 'durationMs'> => ({
    ...base,
    outcome: 'UNKNOWN',
    reason,
    detail,
    fields,
  });
  const verdict = verdictOf(DANAL_OUTCOMES, code);
  if (verdict.outcome === 'DECLINED') return { ...base, outcome: 'DECLINED', reason: 'DECLINED', decline: verdict.decline, fields };
  if (verdict.outcome === 'UNKNOWN') return unknown('MAY_HAVE_CHARGED', `code ${code} may have charged`);
  if (verdict.outcome === 'NOT_SENT') return { ...base, outcome: 'NOT_SENT', reason: 'REFUSED_UNPROCESSED', fields };

  if (status < 200 || status > 299) return unknown('UNEXPECTED_STATUS', `SUCCESS with HTTP ${status}`);
  if (expect.orderId !== undefined && fields.orderId !== undefined && fields.orderId !== expect.orderId) {
    return unknown('ORDER_ID_MISMATCH', `gateway answered orderId ${fields.orderId}, we sent ${expect.orderId}`);
  }
  if (badAmount) return unknown('AMOUNT_MISMATCH', 'gateway answered an amount that is not a whole number');
  if (expect.amount !== undefined && fields.amount !== undefined && fields.amount !== expect.amount) {
    return unknown('AMOUNT_MISMATCH', `gateway answered amount ${fields.amount}, we sent ${expect.amount}`);
  }
  if (expect.requireTransactionId && !fields.transactionId) {
    return unknown('MISSING_TRANSACTION_ID', 'approved without a transactionId');
  }
  if (expect.requireBillingKey && !fields.billingKey) {
    return unknown('MISSING_BILLING_KEY', 'approved without a billingKey');
  }
  return { ...base, outcome: 'SUCCEEDED', reason: 'APPROVED', fields };
}

function describeError(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  return err?.code ? `${err.code}: ${err.message}` : String(err?.message ?? error);
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });
  const authorization = basicAuthorization(options.secretKey);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  function send(path: string, body: Record<string, unknown>): Promise<Transport> {
    const url = new URL(baseUrl + path);
    const payload = Buffer.from(JSON.stringify(body), 'utf8');
    const secure = url.protocol === 'https:';
    return new Promise((resolve) => {
      let connected = false;
      let settled = false;
      const settle = (result: Transport) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const request = (secure ? https : http).request(
        url,
        {
          method: 'POST',
          agent: secure ? httpsAgent : httpAgent,
          headers: {
            Authorization: authorization,
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'Content-Length': payload.length,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            if (!response.complete) {
              settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: 'connection closed before the body was complete' });
              return;
            }
            settle({ kind: 'response', status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          response.on('aborted', () => settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: 'response aborted' }));
          response.on('error', (error) => settle({ kind: 'unknown', reason: 'TRUNCATED_BODY', detail: describeError(error) }));
        },
      );
      request.on('socket', (socket) => {
        // A socket reused from the keep-alive pool is already connected.
        const connecting = (socket as { connecting?: boolean }).connecting;
        if (!connecting) connected = true;
        else socket.once(secure ? 'secureConnect' : 'connect', () => (connected = true));
      });
      request.on('error', (error) => {
        if (!connected) settle({ kind: 'not_sent', detail: describeError(error) });
        else settle({ kind: 'unknown', reason: 'CONNECTION_RESET', detail: describeError(error) });
      });
      const timer = setTimeout(() => {
        const wasConnected = connected;
        request.destroy();
        if (!wasConnected) settle({ kind: 'not_sent', detail: `could not connect within ${options.timeoutMs} ms` });
        else settle({ kind: 'unknown', reason: 'TIMEOUT', detail: `no complete answer within ${options.timeoutMs} ms` });
      }, options.timeoutMs);
      request.end(payload);
    });
  }

  async function call(
    operation: GatewayOperationName,
    path: string,
    schema: RequestSchema,
    body: Record<string, unknown>,
    expect: Expectation,
  ): Promise<GatewayResult> {
    const started = performance.now();
    const problems = validateRequest(schema, body);
    let result: Omit<GatewayResult, 'durationMs'>;
    if (problems.length > 0) {
      result = { operation, outcome: 'NOT_SENT', reason: 'INVALID_REQUEST', detail: problems.join('; '), fields: { extra: {} } };
    } else {
      // Whatever the gateway answers is stored and shown: it never carries the key we sent or a phone number.
      const redactor = redactorForCall(options.redactor, [typeof body.billingKey === 'string' ? body.billingKey : undefined, options.secretKey]);
      result = classify(operation, await send(path, body), expect, redactor);
    }
    const durationMs = Math.round(performance.now() - started);
    if (result.fields.billingKey) options.redactor.addSecret(result.fields.billingKey);
    const level = result.outcome === 'UNKNOWN' ? 'warn' : 'info';
    options.log[level](
      {
        gateway: {
          operation,
          outcome: result.outcome,
          reason: result.reason,
          detail: result.detail,
          httpStatus: result.httpStatus,
          code: result.code,
          orderId: typeof body.orderId === 'string' ? body.orderId : undefined,
          durationMs,
        },
      },
      'gateway call',
    );
    return { ...result, durationMs };
  }

  return {
    confirmPayment(input) {
      const body = { method: input.method, transactionId: input.transactionId, merchantId: options.merchantId, amount: String(input.amount) };
      return call('CONFIRM_PAYMENT', '/payments/confirm', CONFIRM_PAYMENT_REQUEST, body, {
        orderId: input.expectedOrderId,
        amount: input.amount,
        requireTransactionId: true,
      });
    },
    issueBillingKey(input) {
      const path = input.method === 'CARD' ? '/v1/billing/card/issue-key' : options.mobileIssueKeyPath;
      const body = { transactionId: input.transactionId, merchantId: options.merchantId };
      return call('ISSUE_KEY', path, ISSUE_KEY_REQUEST, body, {
        requireBillingKey: true,
        orderId: input.expectedOrderId,
        amount: input.expectedAmount,
      });
    },
    chargeBillingKey(input) {
      const body: Record<string, unknown> = {
        method: input.method,
        billingKey: input.billingKey,
        userId: input.userId,
        amount: input.amount,
        orderName: input.orderName,
        merchantId: options.merchantId,
        orderId: input.orderId,
      };
      if (input.lastTransactionId !== undefined) body.lastTransactionId = input.lastTransactionId;
      if (input.itemCode !== undefined) body.itemCode = input.itemCode;
      return call('BILLING_CONFIRM', '/billing/confirm', BILLING_CONFIRM_REQUEST, body, {
        orderId: input.orderId,
        amount: input.amount,
        requireTransactionId: true,
      });
    },
    cancelPayment(input) {
      const body = {
        method: input.method,
        transactionId: input.transactionId,
        merchantId: options.merchantId,
        amount: String(input.amount),
        cancelType: input.cancelType,
        cancelReason: input.cancelReason,
        cancelRequester: input.cancelRequester,
      };
      return call('CANCEL', options.cancelPath, CANCEL_REQUEST, body, {});
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
