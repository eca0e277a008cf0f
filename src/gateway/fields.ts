// Danal's request fields and limits (docs/gateways.md "The gateway client"). Limits are
// bytes of UTF-8 (docs/api.md "How we fill the gateway's gaps"): a Hangul syllable is 3 bytes. The client validates with these before sending
// (a violation is NOT_SENT) and the sandbox enforces the same table on receipt.

import { utf8Bytes } from '../lib/input.ts';
import { PAYMENT_METHODS, REFUND_REASON_BYTES } from './gateway.ts';

export { utf8Bytes };

export type FieldType = 'string' | 'number' | 'boolean';

export interface FieldRule {
  type: FieldType;
  required: boolean | ((body: Record<string, unknown>) => boolean);
  maxBytes?: number;
  /** Allowed values, when the interface names them. */
  oneOf?: readonly string[];
}

export type RequestSchema = Record<string, FieldRule>;

const isMobile = (body: Record<string, unknown>) => body.method === 'MOBILE';

export const CONFIRM_PAYMENT_REQUEST: RequestSchema = {
  method: { type: 'string', required: true, oneOf: PAYMENT_METHODS },
  transactionId: { type: 'string', required: true, maxBytes: 20 },
  merchantId: { type: 'string', required: true, maxBytes: 20 },
  // `/payments/confirm` takes the amount as a string (docs/api.md "How we fill the gateway's gaps").
  amount: { type: 'string', required: true },
};

export const ISSUE_KEY_REQUEST: RequestSchema = {
  transactionId: { type: 'string', required: true, maxBytes: 20 },
  merchantId: { type: 'string', required: true, maxBytes: 20 },
};

export const BILLING_CONFIRM_REQUEST: RequestSchema = {
  method: { type: 'string', required: true, oneOf: PAYMENT_METHODS },
  billingKey: { type: 'string', required: true, maxBytes: 50 },
  userId: { type: 'string', required: true, maxBytes: 60 },
  amount: { type: 'number', required: true },
  orderName: { type: 'string', required: true, maxBytes: 100 },
  merchantId: { type: 'string', required: true, maxBytes: 20 },
  orderId: { type: 'string', required: true, maxBytes: 50 },
  lastTransactionId: { type: 'string', required: isMobile, maxBytes: 24 },
  itemCode: { type: 'string', required: isMobile, maxBytes: 10 },
};

// Not in the interface; our assumption (docs/api.md "How we fill the gateway's gaps").
export const CANCEL_REQUEST: RequestSchema = {
  method: { type: 'string', required: true, oneOf: PAYMENT_METHODS },
  transactionId: { type: 'string', required: true, maxBytes: 24 },
  merchantId: { type: 'string', required: true, maxBytes: 20 },
  amount: { type: 'string', required: true },
  cancelType: { type: 'string', required: true, oneOf: ['C', 'P'] },
  cancelReason: { type: 'string', required: true, maxBytes: REFUND_REASON_BYTES },
  cancelRequester: { type: 'string', required: true, maxBytes: 50 },
};

/** A positive whole number written in digits only (amounts travel as strings on some endpoints). */
export function isAmountString(value: unknown): value is string {
  return typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value);
}

export function isPositiveAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** Every violation of the schema, each naming its field; empty when the body conforms. */
export function validateRequest(schema: RequestSchema, body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(schema)) {
    const value = body[field];
    const required = typeof rule.required === 'function' ? rule.required(body) : rule.required;
    if (value === undefined || value === null || value === '') {
      if (required) problems.push(`${field} is required`);
      continue;
    }
    if (typeof value !== rule.type) {
      problems.push(`${field} must be a ${rule.type}`);
      continue;
    }
    if (rule.maxBytes !== undefined && typeof value === 'string' && utf8Bytes(value) > rule.maxBytes) {
      problems.push(`${field} is ${utf8Bytes(value)} bytes; at most ${rule.maxBytes} bytes of UTF-8 are allowed`);
    }
    if (rule.oneOf && !rule.oneOf.includes(value as string)) {
      problems.push(`${field} must be one of ${rule.oneOf.join(', ')}`);
    }
  }
  if ('amount' in schema) {
    const amount = body.amount;
    if (schema.amount!.type === 'number' && typeof amount === 'number' && !isPositiveAmount(amount)) {
      problems.push('amount must be a positive whole number');
    }
    if (schema.amount!.type === 'string' && typeof amount === 'string' && !isAmountString(amount)) {
      problems.push('amount must be a positive whole number written in digits');
    }
  }
  return problems;
}
