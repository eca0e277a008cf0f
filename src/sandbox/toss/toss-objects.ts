// The Toss sandbox's answers in Toss's shapes (the facts and their sources: toss.routes.ts): the billing key
// object, the Payment object with its card and cancels, and the settlement line. Pure renderings of what
// toss.state.ts keeps; instants are kept as ISO-8601 UTC and answered in Korea time with its +09:00 offset.
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import { KOREA_ZONE } from '../../lib/calendar.ts';

export type TossPaymentStatus = 'DONE' | 'CANCELED' | 'PARTIAL_CANCELED' | 'ABORTED';

export interface TossCard {
  issuerCode: string;
  acquirerCode: string;
  company: string;
  number: string;
}

export interface TossBillingKey {
  billingKey: string;
  customerKey: string;
  authenticatedAt: string;
  card: TossCard;
  /** When it was deleted (the assumed deletion call): charges with it are refused from then on. */
  deletedAt?: string;
}

export interface TossCancel {
  transactionKey: string;
  cancelReason: string;
  cancelAmount: number;
  refundableAmount: number;
  canceledAt: string;
}

export interface TossPayment {
  paymentKey: string;
  orderId: string;
  orderName: string;
  customerKey: string;
  billingKey: string;
  status: TossPaymentStatus;
  totalAmount: number;
  balanceAmount: number;
  requestedAt: string;
  approvedAt?: string;
  lastTransactionKey: string;
  approveNo?: string;
  card: TossCard;
  cancels: TossCancel[];
  failure?: { code: string; message: string };
  /** When the last cancel request for this payment was taken (the one-second rule). */
  lastCancelRequestAt?: string;
}

/** A card per customer, stable for the same customerKey (issuer = acquirer, as for most Korean cards). */
const CARDS: TossCard[] = [
  { issuerCode: '41', acquirerCode: '41', company: '신한', number: '45182012****891*' },
  { issuerCode: '11', acquirerCode: '11', company: '국민', number: '94904012****113*' },
  { issuerCode: '51', acquirerCode: '51', company: '삼성', number: '53655012****404*' },
  { issuerCode: '21', acquirerCode: '21', company: '하나', number: '46099012****762*' },
];

export function cardFor(customerKey: string): TossCard {
  let sum = 0;
  for (const char of customerKey) sum = (sum + char.charCodeAt(0)) % 9973;
  return { ...CARDS[sum % CARDS.length]! };
}

/** An instant as Toss writes it: Korea time, with its offset, to the second. */
export function koreaDateTime(iso: string): string {
  return DateTime.fromISO(iso, { zone: KOREA_ZONE }).toISO({ suppressMilliseconds: true, includeOffset: true })!;
}

const base64url = (bytes: number) => randomBytes(bytes).toString('base64url');
export const newBillingKey = () => `${base64url(32)}=`;
export const newAuthKey = () => `bln_${base64url(18)}`;
export const newPaymentKey = () => `tbill${base64url(24)}`;
export const newTransactionKey = () => randomBytes(16).toString('hex').toUpperCase();
export const newApproveNo = () => String(randomBytes(4).readUInt32BE(0) % 100_000_000).padStart(8, '0');

export function renderBillingKey(key: TossBillingKey, mId: string): Record<string, unknown> {
  return {
    mId,
    customerKey: key.customerKey,
    authenticatedAt: koreaDateTime(key.authenticatedAt),
    method: '카드',
    billingKey: key.billingKey,
    cardCompany: key.card.company,
    cardNumber: key.card.number,
    card: {
      issuerCode: key.card.issuerCode,
      acquirerCode: key.card.acquirerCode,
      number: key.card.number,
      cardType: '신용',
      ownerType: '개인',
    },
  };
}

function renderCancel(cancel: TossCancel): Record<string, unknown> {
  return {
    transactionKey: cancel.transactionKey,
    cancelReason: cancel.cancelReason,
    taxExemptionAmount: 0,
    canceledAt: koreaDateTime(cancel.canceledAt),
    easyPayDiscountAmount: 0,
    receiptKey: null,
    cancelStatus: 'DONE',
    cancelRequestId: null,
    cancelAmount: cancel.cancelAmount,
    taxFreeAmount: 0,
    refundableAmount: cancel.refundableAmount,
  };
}

/** VAT included in a Korean price: a tenth of the supplied amount, rounded (15,000 → 13,636 + 1,364). */
function vatOf(amount: number): number {
  return Math.round(amount / 11);
}

export function renderPayment(payment: TossPayment, mId: string): Record<string, unknown> {
  const approved = payment.status !== 'ABORTED';
  return {
    mId,
    lastTransactionKey: payment.lastTransactionKey,
    paymentKey: payment.paymentKey,
    orderId: payment.orderId,
    orderName: payment.orderName,
    taxExemptionAmount: 0,
    status: payment.status,
    requestedAt: koreaDateTime(payment.requestedAt),
    approvedAt: payment.approvedAt ? koreaDateTime(payment.approvedAt) : null,
    useEscrow: false,
    cultureExpense: false,
    card: approved
      ? {
          issuerCode: payment.card.issuerCode,
          acquirerCode: payment.card.acquirerCode,
          number: payment.card.number,
          installmentPlanMonths: 0,
          isInterestFree: false,
          interestPayer: null,
          approveNo: payment.approveNo,
          useCardPoint: false,
          cardType: '신용',
          ownerType: '개인',
          acquireStatus: 'READY',
          amount: payment.totalAmount,
        }
      : null,
    virtualAccount: null,
    transfer: null,
    mobilePhone: null,
    giftCertificate: null,
    cashReceipt: null,
    cashReceipts: null,
    discount: null,
    cancels: payment.cancels.length > 0 ? payment.cancels.map(renderCancel) : null,
    secret: null,
    type: 'BILLING',
    easyPay: null,
    country: 'KR',
    failure: payment.failure ?? null,
    isPartialCancelable: true,
    receipt: approved ? { url: `https://sandbox.invalid/toss/receipts/${payment.paymentKey}` } : null,
    checkout: null,
    currency: 'KRW',
    totalAmount: payment.totalAmount,
    balanceAmount: payment.balanceAmount,
    suppliedAmount: payment.totalAmount - vatOf(payment.totalAmount),
    vat: vatOf(payment.totalAmount),
    taxFreeAmount: 0,
    method: '카드',
    version: '2022-11-16',
  };
}
