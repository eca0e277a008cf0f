// Danal's HTTP client (docs/gateways.md "The gateway client"): the wire under Danal's adapter (danal.adapter.ts),
// which is what the engine holds. Every call returns one outcome class of docs/architecture.md, invariant 3, and never
// throws for a gateway or network failure; what a code means is Danal's outcome table (danal.capabilities.ts). How far
// a request got (NOT_SENT before the connection, UNKNOWN after it) is the shared HTTP's (http-call.ts); this file
// reads Danal's answers: a JSON object with a `code`, SUCCESS approving.
import type { Logger } from 'pino';
import type { Redactor } from '../lib/redact.ts';
import { parseGatewayDateTime } from '../lib/calendar.ts';
import { BILLING_CONFIRM_REQUEST, CANCEL_REQUEST, CONFIRM_PAYMENT_REQUEST, ISSUE_KEY_REQUEST, validateRequest, type RequestSchema } from './fields.ts';
import type { CardInfo, GatewayClient, GatewayFields, GatewayOperationName, GatewayResult, OutcomeReason } from './types.ts';
import { verdictOf } from './gateway.ts';
import { DANAL_OUTCOMES } from './danal.capabilities.ts';
import { basicAuthorization, createHttpTransport, readAnswer, timedCall, type Classified, type Transport } from './http-call.ts';

export { basicAuthorization };

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

function classify(operation: GatewayOperationName, transport: Transport, expect: Expectation, redactor: Redactor): Classified {
  const empty: GatewayFields = { extra: {} };
  const read = readAnswer(operation, transport, redactor);
  if ('final' in read) return read.final;
  const { status, json, raw, code, message } = read.answer;
  const base = { operation, httpStatus: status, code, message, raw };

  if (status >= 500) return { ...base, outcome: 'UNKNOWN', reason: 'HTTP_5XX', fields: empty };
  if (!json || code === undefined) {
    return { ...base, outcome: 'UNKNOWN', reason: 'MALFORMED_BODY', detail: 'response is not a JSON object with a code', fields: empty };
  }
  const { fields, badAmount } = parseFields(json);
  const unknown = (reason: OutcomeReason, detail: string): Classified => ({
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

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const transport = createHttpTransport({
    baseUrl: options.baseUrl,
    authorization: basicAuthorization(options.secretKey),
    timeoutMs: options.timeoutMs,
  });

  function call(
    operation: GatewayOperationName,
    path: string,
    schema: RequestSchema,
    body: Record<string, unknown>,
    expect: Expectation,
  ): Promise<GatewayResult> {
    // Whatever the gateway answers is stored and shown: it never carries the key we sent or a phone number.
    const secrets = [typeof body.billingKey === 'string' ? body.billingKey : undefined, options.secretKey];
    const orderId = typeof body.orderId === 'string' ? body.orderId : undefined;
    return timedCall(operation, options, { orderId, secrets }, async (redactor) => {
      const problems = validateRequest(schema, body);
      if (problems.length > 0) return { operation, outcome: 'NOT_SENT', reason: 'INVALID_REQUEST', detail: problems.join('; '), fields: { extra: {} } };
      return classify(operation, await transport.send({ method: 'POST', path, body }), expect, redactor);
    });
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
    close: () => transport.close(),
  };
}
