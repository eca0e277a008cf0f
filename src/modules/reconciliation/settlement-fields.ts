// The columns of a gateway settlement file and how each cell is read (docs/reconciliation.md "Reconciling with
// the gateway"): the alias table (matched ignoring case and spaces), and one reader per field that answers the
// parsed value or throws a FieldError naming what is wrong. Pure: no I/O, no clock.
import { DateTime } from 'luxon';
import { calendarDate, KOREA_ZONE, instantOfWallClock } from '../../lib/calendar.ts';

export const SETTLEMENT_FIELDS = ['transactionId', 'orderId', 'type', 'amount', 'tradedAt', 'method', 'fee', 'settlementDate'] as const;
export type SettlementField = (typeof SETTLEMENT_FIELDS)[number];
export const REQUIRED_FIELDS: readonly SettlementField[] = ['transactionId', 'orderId', 'type', 'amount', 'tradedAt'];

/** Headers as compared: lower case, no white space of any kind. */
export const normalizeHeader = (header: string) =>
  header
    .normalize('NFC')
    .toLowerCase()
    .replace(/[\s\u00a0\u3000]+/g, '');

const ALIASES: Record<SettlementField, string[]> = {
  transactionId: ['거래번호', 'TID', '거래고유번호'],
  orderId: ['주문번호', '가맹점주문번호'],
  type: ['거래구분', '구분', '승인구분'],
  amount: ['금액', '거래금액', '승인금액', '취소금액'],
  tradedAt: ['거래일시', '승인일시', '취소일시'],
  method: ['결제수단'],
  fee: ['수수료'],
  settlementDate: ['정산일', '지급일', '입금일'],
};

/** The amount column that wins on a cancel row when several amount columns are filled. */
export const CANCEL_AMOUNT_HEADER = normalizeHeader('취소금액');

/** The field a header names by its own name or an alias, if any. */
export function fieldOfHeader(header: string): SettlementField | undefined {
  const name = normalizeHeader(header);
  return SETTLEMENT_FIELDS.find((field) => normalizeHeader(field) === name || ALIASES[field].some((alias) => normalizeHeader(alias) === name));
}

export class FieldError extends Error {}

const TYPES: Record<string, 'APPROVAL' | 'CANCEL'> = { approval: 'APPROVAL', 승인: 'APPROVAL', cancel: 'CANCEL', 취소: 'CANCEL', 부분취소: 'CANCEL' };
const METHODS: Record<string, 'CARD' | 'MOBILE'> = { card: 'CARD', 신용카드: 'CARD', 카드: 'CARD', mobile: 'MOBILE', 휴대폰: 'MOBILE' };
const MAX_INT = 2_147_483_647;

export function readType(value: string): 'APPROVAL' | 'CANCEL' {
  const type = TYPES[normalizeHeader(value)];
  if (!type) throw new FieldError(`"${value}" is not a transaction type (APPROVAL/승인, CANCEL/취소/부분취소)`);
  return type;
}

export function readMethod(value: string): 'CARD' | 'MOBILE' {
  const method = METHODS[normalizeHeader(value)];
  if (!method) throw new FieldError(`"${value}" is not a payment method (CARD/신용카드/카드, MOBILE/휴대폰)`);
  return method;
}

/** A whole number of KRW, with or without thousands separators (12900, 12,900), and a sign where allowed. */
export function readInteger(value: string, options: { negative: boolean }): number {
  const match = /^([+-]?)(\d{1,3}(?:,\d{3})+|\d+)$/.exec(value.trim());
  if (!match) throw new FieldError(`"${value}" is not a whole number of KRW`);
  if (match[1] === '-' && !options.negative) throw new FieldError(`"${value}" may not be negative`);
  const magnitude = Number(match[2]!.replace(/,/g, ''));
  if (magnitude > MAX_INT) throw new FieldError(`"${value}" is too large`);
  return match[1] === '-' ? -magnitude : magnitude;
}

/** A positive amount's magnitude; a cancel's may carry a minus sign. */
export function readAmount(value: string, type: 'APPROVAL' | 'CANCEL'): number {
  const amount = Math.abs(readInteger(value, { negative: type === 'CANCEL' }));
  if (amount === 0) throw new FieldError('the amount is zero');
  return amount;
}

/** yyyyMMddHHmmss and yyyy-MM-dd HH:mm:ss, Korea time. Read by pattern: Luxon's fromFormat builds its parser per call. */
const KOREA_FORMATS = [/^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/, /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/];

/** yyyyMMddHHmmss, yyyy-MM-dd HH:mm:ss or ISO-8601; without an offset, Korea time. */
export function readTradedAt(value: string): Date {
  const text = value.trim();
  for (const format of KOREA_FORMATS) {
    const match = format.exec(text);
    if (!match) continue;
    const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
    const instant = instantOfWallClock({ year, month, day, hour, minute, second }, KOREA_ZONE);
    if (instant) return instant;
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const parsed = DateTime.fromISO(text, { zone: KOREA_ZONE });
    if (parsed.isValid) return parsed.toJSDate();
  }
  throw new FieldError(`"${value}" is not a date and time (yyyyMMddHHmmss, yyyy-MM-dd HH:mm:ss or ISO-8601)`);
}

/** yyyyMMdd or yyyy-MM-dd, answered as yyyy-MM-dd. */
export function readDate(value: string): string {
  const text = value.trim();
  const parsed = DateTime.fromFormat(text, text.includes('-') ? 'yyyy-MM-dd' : 'yyyyMMdd', { zone: KOREA_ZONE });
  if (!parsed.isValid || !/^\d{4}-?\d{2}-?\d{2}$/.test(text)) throw new FieldError(`"${value}" is not a date (yyyyMMdd or yyyy-MM-dd)`);
  return parsed.toFormat('yyyy-MM-dd');
}

/** The Korea calendar date of an instant, yyyy-MM-dd. */
export function koreaDate(instant: Date): string {
  return calendarDate(instant, KOREA_ZONE);
}
